"""Shared fixtures: a real Redis (own database, own key prefix) and a real match server."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
import redis

from uno_arena.server import identity
from uno_arena.server.app import create_server, redis_client
from uno_arena.server.arena import Arena
from uno_arena.server.settings import ServerSettings
from uno_arena.workers.queue import delete_prefix

REDIS_HOST = os.environ.get("UNO_ARENA_TEST_REDIS_HOST", "127.0.0.1")
REDIS_PORT = int(os.environ.get("REDIS_PORT", os.environ.get("UNO_ARENA_TEST_REDIS_PORT", "6379")))
REDIS_DB = int(os.environ.get("UNO_ARENA_TEST_REDIS_DB", "13"))  # the tests' own database number


@pytest.fixture
def redis_prefix() -> Iterator[tuple[redis.Redis, str]]:
    """A Redis client on the tests' database and a fresh key prefix; deletes only its own keys."""
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
    client.ping()
    prefix = f"uno-arena-test-{uuid.uuid4().hex[:12]}"
    yield client, prefix
    delete_prefix(client, prefix)  # ours, and RQ's for our queue, jobs and workers
    client.close()


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


def start_server(
    client: redis.Redis, prefix: str, address: str = "127.0.0.1:0", **overrides: object
) -> tuple[RunningServer, threading.Thread]:
    settings = replace(ServerSettings(key_prefix=prefix), **overrides)  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    ready: dict[str, object] = {}
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        aio = redis_client(f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}")
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
