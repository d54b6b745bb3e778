"""Ctrl-C on real `uno-arena bot run` and `uno-arena server` processes, mid-match.

The first Ctrl-C drains (the running match is played to its end, then the process exits 0); a
second one stops at once (a bot's seat is forfeited; a server's matches are aborted).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import grpc
import pytest
import redis

import tests.conftest as conftest
from tests.conftest import RunningServer
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import control
from uno_arena.records import identity
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb

PACED_BOT = '''
import time

from uno_arena.sdk.examples.greedy_bot import GreedyBot


class PacedBot(GreedyBot):
    """Greedy, a little slower: a match lasts long enough to be interrupted in its middle."""

    def decide(self, observation):
        time.sleep(0.005)
        return super().decide(observation)
'''


class PacedBot(GreedyBot):
    """The same, in-process (for the server tests)."""

    def decide(self, observation: Observation) -> Action:
        time.sleep(0.005)  # paces the bot; nothing waits on it
        return super().decide(observation)


class Output:
    """A process's stderr, read line by line in a thread, so a test can wait for a line."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self.closed = False
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.closed = True
            self._changed.notify_all()

    def text(self) -> str:
        with self._changed:
            return "".join(self.lines)

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        """The first match of `pattern` in the output, waiting for it (or for the output to end)."""
        with self._changed:
            self._changed.wait_for(lambda: self.closed or re.search(pattern, "".join(self.lines)), timeout)
        found = re.search(pattern, self.text())
        assert found is not None, f"no {pattern!r} in:\n{self.text()}"
        return found

    def finish(self, timeout: float = 30) -> str:
        self._reader.join(timeout)
        return self.text()


class BotProcess:
    """`uno-arena bot run paced_bot.py:PacedBot` in its own process, connected."""

    def __init__(self, folder: Path, server: RunningServer, name: str) -> None:
        self.name = name
        env = {**os.environ, "UNO_ARENA_BOT_TOKEN": server.register(name)}
        command = [sys.executable, "-m", "uno_arena.cli", "bot", "run", "paced_bot.py:PacedBot",
                   "--name", name, "--server", server.address]  # fmt: skip
        self.process = subprocess.Popen(command, env=env, cwd=folder, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        self.output = Output(self.process.stderr)
        self.output.wait_for(rf"{name} connected to ")

    def interrupt(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def end(self) -> str:
        """Kill it if still running; everything it wrote."""
        self.process.kill()
        self.process.wait(30)
        return self.output.finish()


@pytest.fixture
def paced_bots(tmp_path: Path, match_server: RunningServer) -> Iterator[tuple[BotProcess, BotProcess]]:
    (tmp_path / "paced_bot.py").write_text(PACED_BOT)
    bots = (BotProcess(tmp_path, match_server, "stays"), BotProcess(tmp_path, match_server, "leaves"))
    yield bots
    for bot in bots:
        bot.end()


def start_match(
    server: str, control_token: str, match_id: str, bots: list[str], **fields: object
) -> Iterator[control_pb2.MatchProgress]:
    """A PlayMatch call, read until its first hand has ended: the match is under way."""
    stub, metadata = control(server, control_token)
    request = control_pb2.PlayMatchRequest(match_id=match_id, bots=bots, seed=21, **fields)  # type: ignore[arg-type]
    progress: Iterator[control_pb2.MatchProgress] = stub.PlayMatch(request, metadata=metadata, timeout=180)
    while not next(progress).HasField("hand"):
        pass
    return progress


def finished_of(progress: Iterator[control_pb2.MatchProgress]) -> control_pb2.FinishedMatch:
    return [m for m in progress if m.HasField("finished")][-1].finished


def test_ctrl_c_on_a_bot_mid_match_finishes_the_match_and_exits_0(
    match_server: RunningServer, paced_bots: tuple[BotProcess, BotProcess]
) -> None:
    stays, leaves = paced_bots
    progress = start_match(match_server.address, match_server.control_token, "bot-drain", ["stays", "leaves"])
    leaves.interrupt()
    leaves.output.wait_for(
        r"draining: finishing 1 running match \(Ctrl-C again to stop now: it will be forfeited\)"
    )
    finished = finished_of(progress)
    assert leaves.process.wait(60) == 0
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert not finished.result.forfeited and not finished.faults
    stays.interrupt()  # nothing running: it stops at once, cleanly too
    assert stays.process.wait(30) == 0
    assert "draining: finishing 0 running matches" in stays.output.finish()
    output = leaves.output.finish()
    assert "leaves stopped: its matches finished" in output
    assert "Traceback" not in output and "ERROR" not in output, output


def test_a_second_ctrl_c_stops_the_bot_at_once_and_its_seat_forfeits(
    match_server: RunningServer, paced_bots: tuple[BotProcess, BotProcess]
) -> None:
    stays, leaves = paced_bots
    progress = start_match(match_server.address, match_server.control_token, "bot-stop",
                           ["stays", "leaves"], disconnect_grace_ms=300)  # fmt: skip
    leaves.interrupt()
    leaves.output.wait_for(r"draining: finishing 1 running match ")
    leaves.interrupt()
    assert leaves.process.wait(10) == 1  # at once, and it left a running match
    finished = finished_of(progress)
    assert finished.result.reason == pb.MATCH_END_FORFEIT
    assert list(finished.result.forfeited) == [1]
    output = leaves.output.finish()
    assert "stopping now: 1 running match will be forfeited" in output
    assert "leaves stopped: 1 running match forfeited" in output
    assert "Traceback" not in output, output
    stays.interrupt()
    assert stays.process.wait(30) == 0


STUCK_BOT = '''
import threading

from uno_arena.sdk.examples.greedy_bot import GreedyBot


class StuckBot(GreedyBot):
    """Plays its first decisions, then one `decide` never returns (the server answers its deadlines)."""

    def __init__(self):
        self.decisions = 0

    def decide(self, observation):
        self.decisions += 1
        if self.decisions == 5:
            print("stuck in decide", flush=True)
            threading.Event().wait()
        return super().decide(observation)
'''


def test_a_second_ctrl_c_stops_a_bot_whose_decide_never_returns(
    tmp_path: Path, match_server: RunningServer, paced_bots: tuple[BotProcess, BotProcess]
) -> None:
    """The decision threads are daemons: a `decide` stuck for ever cannot keep `bot run` alive."""
    assert paced_bots[0].name == "stays"  # the match's other seat
    (tmp_path / "stuck_bot.py").write_text(STUCK_BOT)
    env = {**os.environ, "UNO_ARENA_BOT_TOKEN": match_server.register("stuck")}
    command = [sys.executable, "-m", "uno_arena.cli", "bot", "run", "stuck_bot.py:StuckBot",
               "--name", "stuck", "--server", match_server.address]  # fmt: skip
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)  # fmt: skip
    assert process.stderr is not None and process.stdout is not None
    output = Output(process.stderr)
    printed = Output(process.stdout)
    try:
        output.wait_for(r"stuck connected to ")
        seats = ["stays", "stuck"]
        progress = start_match(match_server.address, match_server.control_token, "bot-stuck", seats,
                               decision_timeout_ms=200, disconnect_grace_ms=300)  # fmt: skip
        printed.wait_for("stuck in decide")
        process.send_signal(signal.SIGINT)
        output.wait_for(r"draining: finishing 1 running match ")
        process.send_signal(signal.SIGINT)
        assert process.wait(10) == 1  # at once, though a decide() is still running
        assert "stuck stopped: 1 running match forfeited" in output.finish()
        assert list(finished_of(progress).result.forfeited) == [1]
    finally:
        process.kill()
        process.wait(30)


class ServerProcess:
    """`uno-arena server` on a free port, with two in-process SDK bots connected to it."""

    def __init__(self, redis_prefix: tuple[redis.Redis, str]) -> None:
        client, prefix = redis_prefix
        command = [sys.executable, "-m", "uno_arena.cli", "server", "--listen", "127.0.0.1:0",
                   "--redis-url", conftest.REDIS_URL, "--key-prefix", prefix]  # fmt: skip
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        self.output = Output(self.process.stderr)
        port = self.output.wait_for(r"listening on .* \(port (\d+)\)")[1]
        self.address = f"127.0.0.1:{port}"
        self.control_token = identity.create_control_token(client, prefix)
        self.bots = [
            BackgroundBot(PacedBot(), self.address, name, identity.register_bot(client, prefix, name))
            for name in ("s1", "s2")
        ]
        for bot in self.bots:
            bot.wait_connected()

    def close(self) -> str:
        self.process.kill()
        self.process.wait(30)
        for bot in self.bots:
            bot.stop()
        return self.output.finish()


@pytest.fixture
def server_process(redis_prefix: tuple[redis.Redis, str]) -> Iterator[ServerProcess]:
    server = ServerProcess(redis_prefix)
    yield server
    server.close()


def test_ctrl_c_on_the_server_mid_match_finishes_it_refuses_new_ones_and_exits_0(
    server_process: ServerProcess,
) -> None:
    server = server_process
    progress = start_match(server.address, server.control_token, "server-drain", ["s1", "s2"])
    server.process.send_signal(signal.SIGINT)
    server.output.wait_for(r"stopping: no new matches; 1 running match finishes first")
    stub, metadata = control(server.address, server.control_token)
    with pytest.raises(grpc.RpcError) as refused:
        list(stub.PlayMatch(control_pb2.PlayMatchRequest(match_id="too-late", bots=["s1", "s2"]),
                            metadata=metadata, timeout=30))  # fmt: skip
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert (refused.value.details() or "").startswith("the server is draining")
    finished = finished_of(progress)
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert not finished.result.forfeited
    assert server.process.wait(60) == 0
    output = server.output.finish()
    assert "the running matches finished" in output and "match server stopped" in output
    assert "Traceback" not in output and "ERROR" not in output, output


def test_a_second_ctrl_c_on_the_server_aborts_the_running_match_and_exits_0(
    server_process: ServerProcess,
) -> None:
    server = server_process
    progress = start_match(server.address, server.control_token, "server-stop", ["s1", "s2"])
    server.process.send_signal(signal.SIGINT)
    server.output.wait_for(r"stopping: no new matches; 1 running match finishes first")
    server.process.send_signal(signal.SIGINT)
    finished = finished_of(progress)
    assert finished.result.reason == pb.MATCH_END_ABORTED
    assert server.process.wait(30) == 0
    output = server.output.finish()
    assert "stopping at once: 1 unfinished matches are aborted" in output
    assert "match server stopped" in output
    assert "Traceback" not in output and "ERROR" not in output, output
