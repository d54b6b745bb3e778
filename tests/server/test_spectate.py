"""Spectators see the public events of a running match, and nothing private."""

from __future__ import annotations

import concurrent.futures
import random
import threading

from tests.conftest import RunningServer
from tests.server.botclient import TestBot, control, eager, play_match
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb


def test_spectate_a_running_match(match_server: RunningServer) -> None:
    go = threading.Event()
    fallback = eager(random.Random(3))

    def held_back(request: bot_pb2.DecisionRequest) -> int:
        assert go.wait(30), "the spectator never subscribed"
        return fallback(request)

    bots = [
        TestBot(match_server.address, n, match_server.register(n), policy=held_back) for n in ("s1", "s2")
    ]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    stub, metadata = control(match_server.address, match_server.control_token)
    request = control_pb2.PlayMatchRequest(match_id="watched", bots=["s1", "s2"], seed=6,
                                           rules=pb.RulesConfig(target_score=100))  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        played = pool.submit(play_match, match_server.address, match_server.control_token, request)
        bots[0].wait_for(lambda: bool(bots[0].of_kind("match_started")))
        stream = stub.Spectate(control_pb2.SpectateRequest(match_id="watched"), metadata=metadata, timeout=60)
        first = next(stream)
        go.set()
        batches = [first, *stream]
        finished = played.result(60)[-1].finished
    events = [e for b in batches for e in b.events]
    assert len(events) == finished.event_count
    assert events[-1].WhichOneof("kind") == "match_ended"
    for event in events:
        kind = event.WhichOneof("kind")
        if kind in ("dealt", "drew", "hand_shown"):
            assert getattr(event, kind).hidden and not getattr(event, kind).cards
    for bot in bots:
        bot.close()
