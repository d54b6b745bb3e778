"""Real `uno-arena worker` processes for tests, and bounded waits on Redis."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT

REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"


class WorkerProcess:
    """`uno-arena worker` in its own process group, so SIGKILL takes its work horse too."""

    def __init__(self, prefix: str, control_token: str, log: Path, lease_seconds: float = 2.0) -> None:
        self.command = [sys.executable, "-m", "uno_arena.cli", "worker", "--redis-url", REDIS_URL,
                        "--key-prefix", prefix, "--lease-seconds", str(lease_seconds)]  # fmt: skip
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
