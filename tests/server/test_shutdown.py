"""Stopping the server drains running matches and refuses new ones."""

from __future__ import annotations

import concurrent.futures
import re
import signal
import subprocess
import sys
import time

import grpc
import pytest
import redis

import tests.conftest as conftest
from tests.conftest import RunningServer
from tests.server.botclient import TestBot, control, play_match
from uno_arena.records import identity
from uno_arena.server.arena import SERVER_DRAINING
from uno_arena.v1 import bot_pb2, control_pb2
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
        assert refused.value.details() == SERVER_DRAINING
        finished = running.result(60)[-1].finished
        drained.result(60)
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    for bot in bots:
        bot.close()


def test_stopping_with_bots_connected_is_quiet_and_tells_them(redis_prefix: tuple[redis.Redis, str]) -> None:
    """`uno-arena server` stopped by SIGINT ends each bot's stream with UNAVAILABLE "the server is
    stopping" (the SDK reconnects to the next server) and logs no error."""
    client, prefix = redis_prefix
    token = identity.register_bot(client, prefix, "stays")
    command = [sys.executable, "-m", "uno_arena.cli", "server", "--listen", "127.0.0.1:0",
               "--redis-url", conftest.REDIS_URL, "--key-prefix", prefix]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        lines: list[str] = []
        while not (port := re.search(r"listening on .* \(port (\d+)\)", lines[-1] if lines else "")):
            lines.append(process.stderr.readline())
            assert lines[-1], "the server exited before listening: " + "".join(lines)
        bot = TestBot(f"127.0.0.1:{port.group(1)}", "stays", token)
        bot.wait_for(bot.welcomed)
        process.send_signal(signal.SIGINT)
        bot.wait_for(lambda: bot.ended)
        assert process.wait(30) == 0
    finally:
        process.kill()
        rest = process.communicate()[1]
    assert bot.error is not None and bot.error.code() == grpc.StatusCode.UNAVAILABLE
    assert bot.error.details() == "the server is stopping"
    assert bot.close_reason() == bot_pb2.CLOSE_REASON_SERVER_STOPPING
    log = "".join(lines) + rest
    assert "match server stopped" in log
    assert "ERROR" not in log and "Traceback" not in log, log
    bot.close()


def test_a_play_match_waiting_for_its_bots_is_refused_as_soon_as_the_server_drains(
    match_server: RunningServer,
) -> None:
    """It would otherwise start a match after the drain began (and hold the stop up to its wait)."""
    stub, metadata = control(match_server.address, match_server.control_token)
    request = control_pb2.PlayMatchRequest(
        match_id="waits", bots=["absent1", "absent2"], wait_for_bots_ms=120_000
    )
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(lambda: list(stub.PlayMatch(request, metadata=metadata, timeout=60)))
        deadline = time.monotonic() + 30
        while match_server.arena.gateway.reserving < 1:  # the call waits for its bots
            assert time.monotonic() < deadline, "PlayMatch did not start waiting"
            time.sleep(0.01)
        assert match_server.call_soon(match_server.arena.drain(60)).result(30) == 0
        with pytest.raises(grpc.RpcError) as refused:
            waiting.result(30)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert refused.value.details() == SERVER_DRAINING
