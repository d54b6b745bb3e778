"""The SDK against a real server on port 0: example bots, faulty bot code, restarts, Ctrl-C."""

from __future__ import annotations

import concurrent.futures
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import RunningServer, free_port, start_server, stop_server
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import control, play_match
from tests.workers.harness import wait_until
from uno_arena.records import identity
from uno_arena.sdk import Action, Bot, BotRefused, BotReplaced, CloseReason, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.server import arena
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import names

ROOT = Path(__file__).resolve().parents[2]


def request(match_id: str, bots: list[str], **fields: object) -> control_pb2.PlayMatchRequest:
    return control_pb2.PlayMatchRequest(match_id=match_id, bots=bots, seed=11, **fields)  # type: ignore[arg-type]


def run_bots(server: RunningServer, bots: dict[str, Bot], **settings: object) -> dict[str, BackgroundBot]:
    running = {name: BackgroundBot(bot, server.address, name, server.register(name), **settings)
               for name, bot in bots.items()}  # fmt: skip
    for bot in running.values():
        bot.wait_connected()
    return running


def test_example_bots_play_full_matches(match_server: RunningServer) -> None:
    bots = run_bots(match_server, {"rand": RandomBot(1), "greedy": GreedyBot(), "greedy2": GreedyBot()})
    for match_id, seats in (("rg", ["rand", "greedy"]), ("gg", ["greedy", "greedy2"])):
        finished = play_match(match_server.address, match_server.control_token, request(match_id, seats))[
            -1
        ].finished
        assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
        assert max(finished.result.totals) >= 500
        assert not finished.faults
    for bot in bots.values():
        bot.stop()
        assert bot.error is None


class Raising(Bot):
    def decide(self, observation: Observation) -> Action:
        raise RuntimeError("a bug in the bot")


class Slow(Bot):
    def __init__(self) -> None:
        self.first = True

    def decide(self, observation: Observation) -> Action:
        if self.first:
            self.first = False
            time.sleep(1.5)  # the bot under test is slow; nothing waits on this
        return observation.legal.plays()[0] if observation.legal.plays() else observation.legal.safe_default()


@pytest.mark.parametrize("faulty", [Raising, Slow], ids=["raises", "slow"])
def test_faulty_bot_code_becomes_safe_defaults_not_strikes(
    match_server: RunningServer, faulty: type[Bot]
) -> None:
    """The SDK answers in time, every time; code that raises is reported as BOT_ERROR (no strike)."""
    bots = run_bots(match_server, {"steady": GreedyBot(), "faulty": faulty()})
    fields = {"rules": pb.RulesConfig(target_score=100), "decision_timeout_ms": 800}
    finished = play_match(
        match_server.address, match_server.control_token, request("f", ["steady", "faulty"], **fields)
    )
    assert finished[-1].finished.result.reason in (pb.MATCH_END_TARGET_REACHED, pb.MATCH_END_MAX_HANDS)
    kinds = {(f.kind, f.strikes) for f in finished[-1].finished.faults}
    assert kinds == ({(pb.FAULT_KIND_BOT_ERROR, 0)} if faulty is Raising else set())
    for bot in bots.values():
        bot.stop()


def test_reconnects_after_a_server_restart(redis_prefix: tuple[object, str]) -> None:
    server, thread = start_server(*redis_prefix)  # type: ignore[arg-type]
    address = server.address
    tokens = {name: server.register(name) for name in ("back1", "back2")}
    bots = {name: BackgroundBot(GreedyBot(), address, name, token, backoff_initial=0.1, backoff_max=0.5)
            for name, token in tokens.items()}  # fmt: skip
    for bot in bots.values():
        bot.wait_connected(1)
    stop_server(server, thread)
    server, thread = start_server(*redis_prefix, address=address)  # type: ignore[arg-type]
    for bot in bots.values():
        bot.wait_connected(2)
    finished = play_match(address, server.control_token, request("after-restart", list(tokens)))[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    for bot in bots.values():
        bot.stop()
    stop_server(server, thread)


def test_ctrl_c_mid_match_stops_cleanly_and_the_seat_forfeits(match_server: RunningServer) -> None:
    in_match = threading.Event()

    class Noticing(GreedyBot):
        def decide(self, observation: Observation) -> Action:
            in_match.set()
            return super().decide(observation)

    bots = run_bots(match_server, {"stays": GreedyBot(), "leaves": Noticing()})
    fields = {"disconnect_grace_ms": 300, "decision_timeout_ms": 2000}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        played = pool.submit(play_match, match_server.address, match_server.control_token,
                             request("ctrl-c", ["stays", "leaves"], **fields))  # fmt: skip
        assert in_match.wait(30)
        bots["leaves"].stop()  # what Ctrl-C does
        finished = played.result(60)[-1].finished
    assert bots["leaves"].error is None
    assert finished.result.reason == pb.MATCH_END_FORFEIT
    assert list(finished.result.forfeited) == [1]
    bots["stays"].stop()


def test_ctrl_c_on_uno_arena_bot_run_mid_match(match_server: RunningServer) -> None:
    """The real command in its own process, its token from the environment, stopped by two SIGINTs
    (the first drains, the second stops at once: tests/test_bot_stop.py has more)."""
    stays = run_bots(match_server, {"stays-too": GreedyBot()})["stays-too"]
    env = {**os.environ, "UNO_ARENA_BOT_TOKEN": match_server.register("interrupted")}
    bot = "sdk/uno_arena/sdk/examples/greedy_bot.py:GreedyBot"
    command = [sys.executable, "-m", "uno_arena.cli", "bot", "run", bot,
               "--name", "interrupted", "--server", match_server.address]  # fmt: skip
    process = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        stub, metadata = control(match_server.address, match_server.control_token)
        deadline = time.monotonic() + 30
        while not any(
            b.name == "interrupted"
            for b in stub.ListBots(control_pb2.ListBotsRequest(), metadata=metadata).bots
        ):
            assert time.monotonic() < deadline and process.poll() is None, "the bot did not connect"
            time.sleep(0.05)
        fields = {"disconnect_grace_ms": 300, "decision_timeout_ms": 2000}
        progress = stub.PlayMatch(
            request("sigint", ["stays-too", "interrupted"], **fields), metadata=metadata, timeout=120
        )
        messages = [next(progress)]
        while not messages[-1].HasField("hand"):  # a hand has been played: the match is under way
            messages.append(next(progress))
        process.send_signal(signal.SIGINT)
        assert process.stderr is not None
        while "draining:" not in (line := process.stderr.readline()):  # two quick signals may merge
            assert line, "the bot exited without draining"
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 1  # it left a running match
        finished = [m for m in progress if m.HasField("finished")][-1].finished
    finally:
        process.kill()
        stderr = process.communicate()[1]
    assert "interrupted stopped" in stderr
    assert finished.result.reason == pb.MATCH_END_FORFEIT
    assert list(finished.result.forfeited) == [1]
    stays.stop()


def test_a_second_copy_of_a_bot_makes_the_first_stop(match_server: RunningServer) -> None:
    """Two copies under one name would replace each other forever: the replaced one stops, saying why."""
    token = match_server.register("copied")
    first = BackgroundBot(GreedyBot(), match_server.address, "copied", token)
    first.wait_connected()
    second = BackgroundBot(GreedyBot(), match_server.address, "copied", token)
    second.wait_connected()
    assert first.finished.wait(30), "the replaced copy is still running"
    assert isinstance(first.error, BotReplaced)
    assert first.error.reason is CloseReason.REPLACED  # from the reason the server sent, not its words
    assert str(first.error) == "another copy of bot copied connected; this one stops"
    stub, metadata = control(match_server.address, match_server.control_token)
    listed = stub.ListBots(control_pb2.ListBotsRequest(), metadata=metadata).bots
    assert [b.name for b in listed] == ["copied"] and second.client.connections == 1
    second.stop()
    assert second.error is None


@pytest.mark.settings(token_check_ms=100)
def test_a_revoked_token_stops_the_sdk(match_server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK knows why from the reason beside the status: the status message, for people, may say
    anything."""
    monkeypatch.setattr(arena, "TOKEN_REVOKED", "your key no longer opens this door")
    bot = BackgroundBot(GreedyBot(), match_server.address, "revoked", match_server.register("revoked"))
    bot.wait_connected()
    identity.revoke_bot(match_server.redis, match_server.prefix, "revoked")
    assert bot.finished.wait(30), "the SDK kept running with a revoked token"
    assert type(bot.error) is BotRefused and bot.error.reason is CloseReason.TOKEN_REVOKED
    assert str(bot.error) == "your key no longer opens this door"


def test_the_sdk_knows_every_close_reason_of_the_protocol() -> None:
    assert {reason.value for reason in CloseReason} == set(names(bot_pb2.CloseReason.DESCRIPTOR).values())


def test_a_hello_over_the_limits_stops_the_sdk_instead_of_retrying(match_server: RunningServer) -> None:
    """The same Hello would be refused again: reconnecting cannot help, so the SDK stops and says why."""
    bot = BackgroundBot(GreedyBot(), match_server.address, "n" * 200, "token")
    assert bot.finished.wait(30), "the SDK keeps retrying a Hello the server refuses"
    assert type(bot.error) is BotRefused and bot.error.reason is CloseReason.FIELD_TOO_LONG
    assert str(bot.error) == "Hello.bot_name: at most 128 characters, got 200"
    assert bot.client.connections == 0


def test_the_reconnect_backoff_starts_over_after_each_welcome(
    redis_prefix: tuple[object, str], caplog: pytest.LogCaptureFixture
) -> None:
    """Restarts in a row: each reconnect waits the initial backoff again (it once doubled each time)."""
    caplog.set_level(logging.INFO, logger="uno_arena.sdk.client")
    server, thread = start_server(*redis_prefix)  # type: ignore[arg-type]
    address = server.address
    bot = BackgroundBot(GreedyBot(), address, "restarts", server.register("restarts"), backoff_initial=0.2)
    for welcomes in range(1, 4):
        bot.wait_connected(welcomes)
        stop_server(server, thread)
        server, thread = start_server(*redis_prefix, address=address)  # type: ignore[arg-type]
    bot.wait_connected(4)
    bot.stop()
    stop_server(server, thread)
    waits, after_welcome = [], True
    for record in caplog.records:
        if "connected to" in record.getMessage():
            after_welcome = True
        elif record.getMessage().startswith("reconnecting in") and after_welcome:
            waits.append(float(record.getMessage().split()[2]))
            after_welcome = False
    assert len(waits) == 3 and max(waits) <= 0.2 * 1.2 + 0.05, waits


def test_a_server_that_never_answers_is_said_once_not_at_every_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Nothing listening: one clear warning, then quiet retries (it said "connection ... lost" for a
    connection that never existed, with gRPC's raw text, at every retry)."""
    caplog.set_level(logging.INFO, logger="uno_arena.sdk.client")
    address = f"127.0.0.1:{free_port()}"
    bot = BackgroundBot(GreedyBot(), address, "nobody-home", "token", backoff_initial=0.02, backoff_max=0.05)
    try:
        retries = lambda: sum(r.getMessage().startswith("reconnecting in") for r in caplog.records)  # noqa: E731
        wait_until(lambda: retries() >= 4, 30, "four retries")
    finally:
        bot.stop()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [f"no match server answers at {address}; retrying until one does"], warnings
