"""Real `uno-arena worker` processes, SDK bots on a match server, a Redis of a test's own to crash, and
bounded waits."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
import redis

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT, RunningServer, free_port
from tests.sdk.runner import BackgroundBot
from uno_arena.sdk import Bot

REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"


class WorkerProcess:
    """`uno-arena worker` in its own process group, so SIGKILL takes its work horse too."""

    def __init__(self, prefix: str, control_token: str, log: Path, lease_seconds: float = 2.0,
                 redis_url: str = REDIS_URL, options: Sequence[str] = ()) -> None:  # fmt: skip
        self.command = [sys.executable, "-m", "uno_arena.cli", "worker", "--redis-url", redis_url,
                        "--key-prefix", prefix, "--lease-seconds", str(lease_seconds), *options]  # fmt: skip
        self.environment = {**os.environ, "UNO_ARENA_CONTROL_TOKEN": control_token}
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.command, env=self.environment, stdout=out, stderr=out,
                                            start_new_session=True)  # fmt: skip
        return self

    def kill(self) -> None:
        """SIGKILL the worker, its work horse (which RQ puts in a process group of its own) and the rest."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGSTOP)  # frozen, the worker forks no horse we would miss
        horses = descendants(self.process.pid)
        os.killpg(self.process.pid, signal.SIGKILL)
        for pid in horses:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def connect_bots(server: RunningServer, bots: dict[str, Bot],
                 running: list[BackgroundBot] | None = None) -> list[BackgroundBot]:  # fmt: skip
    """An SDK client for each bot, registered on the server under its name (up to 4 matches at once),
    and wait until each is connected; they are returned. Given `running` (the `bots` fixture's list,
    which stops them however the test ends), each is added to it as it starts."""
    started = running if running is not None else []
    first = len(started)
    for name, bot in bots.items():
        started.append(BackgroundBot(bot, server.address, name, server.register(name), max_matches=4))
    for client in started[first:]:
        client.wait_connected()
    return started[first:]


class _Killable:
    """A child process the test may crash (`kill`: SIGKILL) and must not leave behind (`stop`)."""

    process: subprocess.Popen[bytes] | None = None

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()


class ServerProcess(_Killable):
    """`uno-arena server` in a process of its own, on a fixed port, so that a test can crash it (SIGKILL)
    and start it again on the same address."""

    def __init__(self, prefix: str, log: Path, port: int | None = None, redis_url: str = REDIS_URL,
                 options: Sequence[str] = ()) -> None:  # fmt: skip
        self.port = port or free_port()
        self.command = [sys.executable, "-m", "uno_arena.cli", "server", "--listen", self.address,
                        "--redis-url", redis_url, "--key-prefix", prefix, *options]  # fmt: skip
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> ServerProcess:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=out)
        with grpc.insecure_channel(self.address) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
        return self


class RedisServer(_Killable):
    """A `redis-server` of the test's own on a free port, writing every command to its append-only file in
    `folder`: `kill` is a crash (SIGKILL), `start` again restarts it from that file on the same port."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not on PATH"
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder),
                        "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                        "--logfile", str(folder / "redis.log")]  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe = self.client()
        try:
            wait_until(lambda: _answers(probe), 20, f"the test's Redis on port {self.port} to answer")
        finally:
            probe.close()
        return self


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:  # refused, or still loading its append-only file
        return False


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `condition` until it holds; fail after `timeout` seconds saying what never happened."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)
