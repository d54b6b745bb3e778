"""Stopping the server drains running matches and refuses new ones."""

from __future__ import annotations

import concurrent.futures

import grpc
import pytest

from tests.conftest import RunningServer
from tests.server.botclient import TestBot, play_match
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb


def test_drain_lets_running_matches_finish_and_refuses_new_ones(match_server: RunningServer) -> None:
    bots = [TestBot(match_server.address, n, match_server.register(n)) for n in ("d1", "d2")]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(match_id="draining", bots=["d1", "d2"], seed=8)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(play_match, match_server.address, match_server.control_token, request)
        bots[0].wait_for(lambda: bool(bots[0].of_kind("match_started")))
        drained = match_server.call_soon(match_server.arena.drain(60))
        with pytest.raises(grpc.RpcError) as refused:
            play_match(match_server.address, match_server.control_token,
                       control_pb2.PlayMatchRequest(match_id="late", bots=["d1", "d2"]))  # fmt: skip
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        finished = running.result(60)[-1].finished
        drained.result(60)
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    for bot in bots:
        bot.close()
