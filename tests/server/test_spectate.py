"""Spectators see the public events of a running match, and nothing private."""

from __future__ import annotations

import concurrent.futures
import random
import threading

from tests.conftest import RunningServer
from tests.server.botclient import TestBot, control, eager, play_match
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb


def spectate(server: RunningServer, match_id: str, names: list[str], seed: int,
             rules: pb.RulesConfig) -> tuple[list[pb.Event], control_pb2.FinishedMatch]:  # fmt: skip
    """Every event a spectator got of a whole match (the bots wait until it subscribed), and the result."""
    go = threading.Event()
    fallback = eager(random.Random(3))

    def held_back(request: bot_pb2.DecisionRequest) -> int | None:
        assert go.wait(30), "the spectator never subscribed"
        return fallback(request)

    bots = [TestBot(server.address, n, server.register(n), policy=held_back) for n in names]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    stub, metadata = control(server.address, server.control_token)
    request = control_pb2.PlayMatchRequest(match_id=match_id, bots=names, seed=seed, rules=rules)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        played = pool.submit(play_match, server.address, server.control_token, request)
        bots[0].wait_for(lambda: bool(bots[0].of_kind("match_started")))
        stream = stub.Spectate(control_pb2.SpectateRequest(match_id=match_id), metadata=metadata, timeout=60)
        first = next(stream)
        go.set()
        batches = [first, *stream]
        finished = played.result(60)[-1].finished
    for bot in bots:
        bot.close()
    return [e for b in batches for e in b.events], finished


def test_spectate_a_running_match(match_server: RunningServer) -> None:
    events, finished = spectate(match_server, "watched", ["s1", "s2"], 6, pb.RulesConfig(target_score=100))
    assert len(events) == finished.event_count
    assert events[-1].WhichOneof("kind") == "match_ended"
    for event in events:
        kind = event.WhichOneof("kind")
        if kind in ("dealt", "drew", "hand_shown"):
            assert getattr(event, kind).hidden and not getattr(event, kind).cards


def test_spectators_never_see_the_cards_of_a_swap_or_a_pass(match_server: RunningServer) -> None:
    """Seven-0 (RULINGS 27): a spectator learns who received how many cards from whom, never which."""
    rules = pb.RulesConfig(target_score=100, seven_zero=True, jump_in=True, multi_play=True, stacking=True)
    events, finished = spectate(match_server, "swaps", ["w1", "w2", "w3"], 4, rules)
    assert len(events) == finished.event_count
    received = [e.received for e in events if e.WhichOneof("kind") == "received"]
    kinds = {e.WhichOneof("kind") for e in events}
    assert received and {"swapped", "hands_passed"} <= kinds
    assert all(r.hidden and not r.cards and r.count > 0 for r in received)
    for event in events:
        kind = event.WhichOneof("kind")
        if kind in ("dealt", "drew", "hand_shown"):
            assert getattr(event, kind).hidden and not getattr(event, kind).cards
