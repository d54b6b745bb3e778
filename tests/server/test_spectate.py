"""Spectators see the public events of a running match, and nothing private; their streams are capped and
each one's memory bounded."""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import threading
from typing import Any

import grpc
import pytest

from tests.conftest import RunningServer
from tests.server.botclient import TestBot, control, eager, play_match
from tests.server.test_limits import on_server, wait_until
from uno_arena.server.spectators import Spectator
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


@pytest.mark.settings(max_spectators_per_match=2, max_spectators=3)
def test_spectate_streams_are_capped_per_match_and_in_all_and_share_their_bytes(
    match_server: RunningServer,
) -> None:
    server = match_server
    go = threading.Event()
    fallback = eager(random.Random(5))

    def held_back(request: bot_pb2.DecisionRequest) -> int | None:
        assert go.wait(30), "the test never let the bots play"
        return fallback(request)

    names = ["c1", "c2", "c3", "c4"]
    bots = [TestBot(server.address, n, server.register(n), policy=held_back) for n in names]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    stub, metadata = control(server.address, server.control_token)

    def watch(match_id: str) -> Any:
        return stub.Spectate(control_pb2.SpectateRequest(match_id=match_id), metadata=metadata, timeout=60)

    requests = [control_pb2.PlayMatchRequest(match_id=match_id, bots=pair, seed=2, decision_timeout_ms=30_000,
                                             rules=pb.RulesConfig(target_score=100))
                for match_id, pair in (("one", names[:2]), ("two", names[2:]))]  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        plays = [pool.submit(play_match, server.address, server.control_token, r) for r in requests]
        wait_until(lambda: on_server(server, lambda: len(server.arena.running)) == 2, what="two matches")
        first, second = watch("one"), watch("one")
        so_far = [next(first), next(second)]
        assert so_far[0] == so_far[1] and so_far[0].events  # the deal so far
        host = on_server(server, lambda: server.arena.running["one"])
        assert on_server(server, lambda: host.spectated_so_far() is host.spectated_so_far())  # built once
        with pytest.raises(grpc.RpcError) as per_match:
            next(watch("one"))
        assert per_match.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "match 'one' has 2 Spectate streams" in (per_match.value.details() or "")
        other = watch("two")
        assert next(other).match_id == "two"  # three in all now
        with pytest.raises(grpc.RpcError) as in_all:
            next(watch("two"))
        assert in_all.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "the server has 3 Spectate streams open" in (in_all.value.details() or "")
        second.cancel()  # a spectator leaves: its place is free again
        wait_until(lambda: on_server(server, lambda: len(host.spectators)) == 1, what="a stream to end")
        another = watch("two")
        next(another)
        go.set()
        events = [e for batch in [so_far[0], *first] for e in batch.events]
        finished = [play.result(60)[-1].finished for play in plays]
        assert len(events) == finished[0].event_count  # the first stream saw the whole match
        for stream in (other, another):
            list(stream)
    for bot in bots:
        bot.close()


def test_a_spectator_that_falls_behind_ends_and_holds_nothing_more() -> None:
    async def scenario() -> None:
        spectator = Spectator(backlog=2)
        spectator.put(b"one")
        spectator.put(b"two")
        assert await spectator.next() == b"one"
        spectator.put(b"three")
        spectator.put(b"four")  # three waiting would be one too many: the stream ends
        assert spectator.fell_behind and spectator.waiting() == 0
        assert await spectator.next() is None
        spectator.put(b"five")  # nothing is kept for a stream that ended
        assert spectator.waiting() == 0
        reading = Spectator(backlog=2)
        reader = asyncio.ensure_future(reading.next())
        await asyncio.sleep(0)
        reading.put(b"batch")
        assert await reader == b"batch"
        reading.end()
        assert await reading.next() is None and not reading.fell_behind

    asyncio.run(scenario())
