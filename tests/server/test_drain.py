"""A bot's clean stop (Drain): no new match for it, its running ones finish, then its stream ends OK."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable

import grpc
import pytest

from tests.conftest import RunningServer, free_port
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import TestBot, control, play_match
from uno_arena.sdk import Action, BotClient, ClientSettings, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb


def drain(reason: str = "a test") -> bot_pb2.BotMessage:
    return bot_pb2.BotMessage(drain=bot_pb2.Drain(reason=reason))


def wait_until(predicate: Callable[[], bool], timeout: float = 30) -> None:
    """Poll a condition of the server's own state (which has no event to wait on)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_draining_bot_finishes_its_match_gets_no_new_one_and_its_stream_ends_ok(
    match_server: RunningServer,
) -> None:
    bots = [TestBot(match_server.address, n, match_server.register(n)) for n in ("dr1", "dr2")]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    leaving = bots[0]
    request = control_pb2.PlayMatchRequest(match_id="drained", bots=["dr1", "dr2"], seed=3)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(play_match, match_server.address, match_server.control_token, request)
        leaving.wait_for(lambda: bool(leaving.of_kind("decision_request")))  # the match is under way
        leaving.send(drain("Ctrl-C"))
        leaving.send(drain("Ctrl-C again"))  # harmless: still one Draining
        leaving.wait_for(lambda: bool(leaving.of_kind("draining")))
        with pytest.raises(grpc.RpcError) as refused:  # waits as for a bot that is not connected
            play_match(match_server.address, match_server.control_token,
                       control_pb2.PlayMatchRequest(match_id="refused", bots=["dr1", "dr2"],
                                                    wait_for_bots_ms=200))  # fmt: skip
        finished = running.result(120)[-1].finished
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.details() == "bot 'dr1' is draining (it takes no new match) (waited 0.2 s)"
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert not finished.result.forfeited
    leaving.wait_for(lambda: leaving.ended)
    assert leaving.error is None  # status OK
    assert leaving.close_reason() == bot_pb2.CLOSE_REASON_DRAINED
    kinds = leaving.kinds()
    assert kinds.count("draining") == 1
    assert leaving.of_kind("draining")[0].draining.running_matches == 1
    assert kinds[-1] == "match_finished"  # the stream ends right after the last match
    assert kinds.count("match_started") == 1
    assert not bots[1].ended  # the other bot plays on
    for bot in bots:
        bot.close()


def test_a_bot_with_no_match_is_drained_at_once_and_may_come_back_fresh(match_server: RunningServer) -> None:
    token = match_server.register("fresh")
    other = TestBot(match_server.address, "other", match_server.register("other"))
    first = TestBot(match_server.address, "fresh", token)
    first.wait_for(first.welcomed)
    first.send(drain())
    first.wait_for(lambda: first.ended)
    assert first.error is None and first.close_reason() == bot_pb2.CLOSE_REASON_DRAINED
    assert first.kinds() == ["welcome", "draining"]
    assert first.of_kind("draining")[0].draining.running_matches == 0
    # A PlayMatch waiting for the bot waits as for one that is not connected: the bot's next
    # connection is not draining, and the match starts on it.
    stub, metadata = control(match_server.address, match_server.control_token)
    request = control_pb2.PlayMatchRequest(match_id="comes-back", bots=["fresh", "other"], seed=5,
                                           rules=pb.RulesConfig(target_score=100))  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(lambda: list(stub.PlayMatch(request, metadata=metadata, timeout=120)))
        wait_until(lambda: match_server.arena.gateway.reserving == 1)
        second = TestBot(match_server.address, "fresh", token)
        finished = waiting.result(120)[-1].finished
    assert finished.result.reason in (pb.MATCH_END_TARGET_REACHED, pb.MATCH_END_MAX_HANDS)
    second.wait_for(lambda: bool(second.of_kind("match_finished")))
    assert second.kinds().count("draining") == 0  # a fresh connection, not draining
    for bot in (first, second, other):
        bot.close()


def test_the_server_logs_one_line_per_drain(
    match_server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    bot = TestBot(match_server.address, "logged", match_server.register("logged"))
    bot.wait_for(bot.welcomed)
    with caplog.at_level("INFO", logger="uno_arena.server"):
        bot.send(drain("x" * 300))  # over the limit: cut
        bot.wait_for(lambda: bot.ended)
    lines = [r.getMessage() for r in caplog.records if "draining" in r.getMessage()]
    assert lines == [f"bot logged draining: 0 matches left ({'x' * 256})"]
    bot.close()


class Noticing(GreedyBot):
    """Greedy, and says when it has made a decision (the match is under way)."""

    def __init__(self) -> None:
        self.decided = threading.Event()

    def decide(self, observation: Observation) -> Action:
        self.decided.set()
        return super().decide(observation)


def test_the_sdk_drains_mid_match_finishes_it_and_returns(match_server: RunningServer) -> None:
    noticing = Noticing()
    staying = BackgroundBot(
        GreedyBot(), match_server.address, "sdk-stays", match_server.register("sdk-stays")
    )
    leaving = BackgroundBot(noticing, match_server.address, "sdk-drains", match_server.register("sdk-drains"))
    for bot in (staying, leaving):
        bot.wait_connected()
    request = control_pb2.PlayMatchRequest(match_id="sdk-drain", bots=["sdk-stays", "sdk-drains"], seed=9)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(play_match, match_server.address, match_server.control_token, request)
        assert noticing.decided.wait(30)
        leaving.loop.call_soon_threadsafe(leaving.client.drain, "a test")
        finished = running.result(120)[-1].finished
    assert leaving.finished.wait(30), "run() did not return after the drain"
    assert leaving.error is None and leaving.client.drained
    assert leaving.client.running_matches == 0 and leaving.client.connections == 1
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert not finished.result.forfeited
    staying.stop()


def test_the_sdk_reconnects_to_finish_its_matches_when_lost_while_draining(
    match_server: RunningServer,
) -> None:
    """Lost while draining with a match running: it reconnects, says Drain again after Hello, the
    server resumes the match on the new stream, and run() returns once it is finished."""
    noticing = Noticing()
    staying = BackgroundBot(
        GreedyBot(), match_server.address, "lost-stays", match_server.register("lost-stays")
    )
    token = match_server.register("lost-drains")
    leaving = BackgroundBot(
        noticing, match_server.address, "lost-drains", token, backoff_initial=0.05, backoff_max=0.2
    )
    for bot in (staying, leaving):
        bot.wait_connected()
    gateway = match_server.arena.gateway
    request = control_pb2.PlayMatchRequest(match_id="lost-drain", bots=["lost-stays", "lost-drains"], seed=4,
                                           disconnect_grace_ms=20_000)  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(play_match, match_server.address, match_server.control_token, request)
        assert noticing.decided.wait(30)
        first = gateway.connection("lost-drains")
        assert first is not None
        leaving.loop.call_soon_threadsafe(leaving.client.drain, "a test")
        wait_until(lambda: first.draining)

        async def lose_it() -> None:
            first.close("lost in a test", grpc.StatusCode.UNAVAILABLE)

        match_server.call_soon(lose_it()).result(10)
        leaving.wait_connected(2)
        second = gateway.connection("lost-drains")
        finished = running.result(120)[-1].finished
    assert leaving.finished.wait(30), "run() did not return after the drain"
    assert second is not None and second is not first and second.draining
    assert leaving.error is None and leaving.client.drained
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert not finished.result.forfeited
    staying.stop()


class _Waiting(logging.Handler):
    """Sets `event` when the SDK says it waits before reconnecting."""

    def __init__(self, event: asyncio.Event) -> None:
        super().__init__()
        self.event = event

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("reconnecting in"):
            self.event.set()


def test_the_sdk_draining_with_no_match_returns_without_waiting_to_reconnect() -> None:
    """Nothing to finish: drain() during the wait before a reconnect makes run() return at once."""

    async def main() -> BotClient:
        free = free_port()  # nothing listens there
        settings = ClientSettings(backoff_initial=30)
        client = BotClient(GreedyBot(), f"127.0.0.1:{free}", "nobody", "token", settings)
        waiting = asyncio.Event()
        handler = _Waiting(waiting)
        sdk_log = logging.getLogger("uno_arena.sdk.client")
        sdk_log.addHandler(handler)
        level = sdk_log.level
        sdk_log.setLevel(logging.INFO)
        try:
            runner = asyncio.create_task(client.run())
            await asyncio.wait_for(waiting.wait(), 30)
            client.drain("a test")
            await asyncio.wait_for(runner, 10)  # not the 30 s backoff
        finally:
            sdk_log.removeHandler(handler)
            sdk_log.setLevel(level)
        return client

    client = asyncio.run(main())
    assert client.draining and not client.drained and client.connections == 0
