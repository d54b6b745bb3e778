"""A match id names one match: retries attach or get the kept result, a different match is refused."""

from __future__ import annotations

import concurrent.futures
import random
import threading

import grpc
import pytest

from tests.conftest import RunningServer
from tests.server.botclient import TestBot, eager, play_match
from uno_arena.rules import RulesConfig
from uno_arena.server.arena import FinishedMatches
from uno_arena.server.match_host import MatchSpec
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb

SHORT = pb.RulesConfig(target_score=100)


def request(match_id: str, bots: list[str], seed: int = 1, **fields: object) -> control_pb2.PlayMatchRequest:
    return control_pb2.PlayMatchRequest(match_id=match_id, bots=bots, seed=seed, rules=SHORT, **fields)  # type: ignore[arg-type]


def refusal(server: RunningServer, play: control_pb2.PlayMatchRequest) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as refused:
        play_match(server.address, server.control_token, play)
    return refused.value


def test_a_taken_match_id_is_refused_for_a_different_match(match_server: RunningServer) -> None:
    release = threading.Event()
    fallback = eager(random.Random(1))

    def held(decision: bot_pb2.DecisionRequest) -> int | None:
        assert release.wait(30)
        return fallback(decision)

    bots = [
        TestBot(match_server.address, n, match_server.register(n), max_matches=4) for n in ("p", "q", "r")
    ]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    bots[0].policy = held  # the first match stays running until the clashes below were refused
    first = request("taken", ["p", "q"], seed=5)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(play_match, match_server.address, match_server.control_token, first)
        bots[0].wait_for(lambda: bool(bots[0].of_kind("decision_request")))
        clashes = [
            (request("taken", ["p", "r"], seed=5), "bots"),
            (request("taken", ["p", "q"], seed=6), "seed"),
            (request("taken", ["p", "q"], seed=5, max_strikes=1), "max_strikes"),
        ]
        for clash, differs in clashes:
            refused = refusal(match_server, clash)
            assert refused.code() == grpc.StatusCode.ALREADY_EXISTS
            assert refused.details() == ("match id 'taken' belongs to a different match (bots p,q, seed 5); "
                                         f"this request differs in {differs}")  # fmt: skip
        release.set()
        played = running.result(60)
    assert played[-1].finished.result.reason == pb.MATCH_END_TARGET_REACHED
    swapped = refusal(match_server, request("taken", ["q", "p"], seed=5))  # finished: seat order counts
    assert swapped.code() == grpc.StatusCode.ALREADY_EXISTS and "differs in bots" in (swapped.details() or "")
    other_rules = request("taken", ["p", "q"], seed=5)
    other_rules.rules.target_score = 200
    assert refusal(match_server, other_rules).code() == grpc.StatusCode.ALREADY_EXISTS
    retried = play_match(
        match_server.address, match_server.control_token, first
    )  # the same match: its result
    assert retried[-1] == played[-1]
    for bot in bots:
        bot.close()


def spec(match_id: str) -> MatchSpec:
    return MatchSpec(match_id, ("a", "b"), RulesConfig(players=2), 1, 1.0, 3, 1.0)


def ending(size: int) -> list[control_pb2.MatchProgress]:
    return [control_pb2.MatchProgress(fault=pb.Fault(detail="x" * size))]


def test_finished_results_are_kept_by_time_and_bytes_not_by_count() -> None:
    now = [1000.0]
    kept = FinishedMatches(keep_seconds=3600, max_bytes=10_000, clock=lambda: now[0])
    for i in range(500):  # far more than the 100 results once kept
        kept.add(spec(f"m{i}"), ending(10))
    assert len(kept) == 500 and kept.get("m0") is not None
    kept.add(spec("big"), ending(5000))  # over the byte budget: the oldest go first
    assert kept.get("big") is not None and kept.get("m0") is None and kept.bytes <= 10_000
    now[0] += 3599
    kept.add(spec("late"), ending(10))
    assert kept.get("m499") is not None
    now[0] += 2  # an hour after the first ones finished
    assert kept.get("m499") is None and kept.get("big") is None
    assert kept.get("late") is not None and len(kept) == 1
