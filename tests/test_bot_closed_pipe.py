"""`uno-arena bot run ... 2>&1 | head -2`, then a signal: the bot stops as documented though its output is
a closed pipe (each message it writes then fails with EPIPE).

Real `uno-arena bot run` processes against a real match server; the pipe is read until the bot has
connected, then closed, as `head` does once it has its lines.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import RunningServer
from tests.sdk.runner import BackgroundBot
from tests.test_bot_stop import PACED_BOT, PacedBot, finished_of, start_match
from uno_arena.v1 import game_pb2 as pb

# The paced bot, printing a line when created: stdout into a pipe is block-buffered, so the line is still
# in the buffer at exit, when the interpreter's last flush meets the closed pipe.
PRINTING_BOT = (
    PACED_BOT
    + """

class PrintingBot(PacedBot):
    def __init__(self):
        super().__init__()
        print("printing bot ready")
"""
)


class PipedBot:
    """`uno-arena bot run printing_bot.py:PrintingBot --name NAME` with stdout and stderr into one pipe."""

    def __init__(self, folder: Path, server: RunningServer, name: str) -> None:
        (folder / "printing_bot.py").write_text(PRINTING_BOT)
        env = {**os.environ, "UNO_ARENA_BOT_TOKEN": server.register(name)}
        env.pop("PYTHONUNBUFFERED", None)  # stdout block-buffered into the pipe, as from a shell
        command = [sys.executable, "-m", "uno_arena.cli", "bot", "run", "printing_bot.py:PrintingBot",
                   "--name", name, "--server", server.address]  # fmt: skip
        self.process = subprocess.Popen(
            command, env=env, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        assert self.process.stdout is not None
        self.pipe = self.process.stdout

    def read_until(self, pattern: str, timeout: float = 30) -> str:
        """What it wrote until `pattern` appeared (on a line of its own: what `head` would print)."""
        fd, read, deadline = self.pipe.fileno(), b"", time.monotonic() + timeout
        while not re.search(pattern, read.decode(errors="replace")):
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} within {timeout} s in:\n{read.decode(errors='replace')}"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, f"the bot exited ({self.process.poll()}) before {pattern!r}:\n{read.decode()}"
                read += chunk
        return read.decode(errors="replace")

    def close_pipe(self) -> None:
        """`head` has its lines and exits: every later write of the bot fails with EPIPE."""
        self.pipe.close()

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        if not self.pipe.closed:
            self.pipe.close()


@pytest.fixture
def piped(tmp_path: Path, match_server: RunningServer) -> Iterator[PipedBot]:
    bot = PipedBot(tmp_path, match_server, "piped")
    yield bot
    bot.end()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_a_bot_whose_output_pipe_is_closed(piped: PipedBot, signum: signal.Signals) -> None:
    piped.read_until(r"piped connected to .*\n")
    piped.close_pipe()
    piped.process.send_signal(signum)  # drains: no match runs, so it exits at once
    assert piped.process.wait(10) == 0


def test_a_second_signal_stops_a_bot_mid_match_whose_output_pipe_is_closed(
    match_server: RunningServer, piped: PipedBot
) -> None:
    other = BackgroundBot(PacedBot(), match_server.address, "other", match_server.register("other"))
    try:
        other.wait_connected()
        piped.read_until(r"piped connected to .*\n")
        piped.close_pipe()
        progress = start_match(match_server.address, match_server.control_token, "piped-stop",
                               ["other", "piped"], disconnect_grace_ms=300)  # fmt: skip
        piped.process.send_signal(signal.SIGTERM)  # drains: the match plays on
        # The first signal must have been taken for a drain before the second one comes: poll the
        # server's view of the connection (the Drain message) rather than the closed output.
        deadline = time.monotonic() + 10
        while not _draining(match_server, "piped"):
            assert time.monotonic() < deadline, "the first SIGTERM did not drain the bot"
            time.sleep(0.01)  # polls a condition with a deadline
        piped.process.send_signal(signal.SIGINT)  # stops at once: the running match is forfeited
        assert piped.process.wait(10) == 1
        finished = finished_of(progress)
        assert finished.result.reason == pb.MATCH_END_FORFEIT
        assert list(finished.result.forfeited) == [1]
    finally:
        other.stop()


def _draining(server: RunningServer, name: str) -> bool:
    """The server got the bot's Drain (read on the server's loop, where the connection lives)."""

    async def draining() -> bool:
        connection = server.arena.gateway.connection(name)
        return connection is not None and connection.draining

    answer: bool = server.call_soon(draining()).result(5)
    return answer
