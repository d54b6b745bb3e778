"""Hosted bots under test: a match server that also listens on a Unix socket, `uno-arena runner` processes,
and the skip (or, under CI, failure) when the host cannot sandbox."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner

from tests.conftest import REDIS_URL, RunningServer, start_server, stop_server
from tests.provision import missing
from uno_arena.cli.main import cli
from uno_arena.records import hosted
from uno_arena.runner.sandbox import SandboxError, check_host


def require_sandbox() -> None:
    """Skip (fail under CI) unless bubblewrap, setpriv, root and writable cgroups are here."""
    try:
        check_host()
    except SandboxError as error:
        missing(f"hosted bots cannot be sandboxed here: {error} (apt-get install bubblewrap; run as root)")


@contextlib.contextmanager
def hosted_server(
    client: redis.Redis, prefix: str, **overrides: object
) -> Iterator[tuple[RunningServer, Path]]:
    """A match server listening on 127.0.0.1 and on a Unix socket (a short path: sockets allow 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="uno-arena-sock-"))
    socket_path = folder / "server.sock"
    overrides.setdefault("keepalive_ms", 1000)
    running, thread = start_server(client, prefix, unix_socket=str(socket_path), **overrides)
    try:
        yield running, socket_path
    finally:
        stop_server(running, thread)
        shutil.rmtree(folder, ignore_errors=True)


class RunnerProcess:
    """`uno-arena runner` in its own process group; `kill` is SIGKILL of the runner alone (its bots die with
    it: bubblewrap's --die-with-parent)."""

    def __init__(
        self,
        prefix: str,
        socket_path: Path,
        work_dir: Path,
        log: Path,
        runner_id: str,
        uid_base: int = 230_000,
        options: Sequence[str] = (),
    ) -> None:
        self.command = [
            sys.executable,
            "-m",
            "uno_arena.cli",
            "runner",
            "--redis-url",
            REDIS_URL,
            "--key-prefix",
            prefix,
            "--server-socket",
            str(socket_path),
            "--work-dir",
            str(work_dir),
            "--id",
            runner_id,
            "--uid-base",
            str(uid_base),
            "--lease-ms",
            "2000",
            "--drain-seconds",
            "10",
            *options,
        ]
        self.log = log
        self.id = runner_id
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> RunnerProcess:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=out, start_new_session=True)
        return self

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)

    def stop(self, timeout: float = 30) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def invoke(prefix: str, *args: str, ok: bool = True) -> str:
    result = CliRunner().invoke(cli, [*args[:2], "--redis-url", REDIS_URL, "--key-prefix", prefix, *args[2:]])
    assert (result.exit_code == 0) == ok, result.output
    return result.output


def status_of(client: redis.Redis, prefix: str, name: str, number: int) -> tuple[hosted.Status, str, str]:
    for version in hosted.versions(client, prefix, name):
        if version.number == number:
            return version.status, version.runner, version.reason
    raise AssertionError(f"no v{number} of {name}")


def connected_client(server: RunningServer, name: str) -> str | None:
    connection = server.arena.gateway.connection(name)
    return None if connection is None else connection.name


def bot_source(greeting: str, base: str = "GreedyBot", body: str = "") -> str:
    """A submitted bot: greedy, printing `greeting` when made (and `body` at module level)."""
    return (
        f"from uno_arena.sdk.examples.greedy_bot import GreedyBot\n{body}\n\n"
        f"class Hosted({base}):\n    def __init__(self):\n        super().__init__()\n"
        f"        print({greeting!r}, flush=True)\n"
    )


@pytest.fixture
def sandbox_ready() -> None:
    require_sandbox()
