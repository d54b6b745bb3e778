"""`uno-arena web` under load and trouble: clients that never finish their headers hold no thread and
are cut off after the channel timeout; while Redis is down the pages and the API say so with a 503,
and they recover by themselves when it is back."""

from __future__ import annotations

import json
import os
import selectors
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.endpoints import status_of
from tests.web.test_web import serving
from tests.workers.harness import REDIS_URL, RedisServer, wait_until
from uno_arena.web.app import ServerLimits, create_app, redis_client

HALF_SENT = b"GET / HTTP/1.1\r\nHost: slow\r\n"  # the blank line that ends the headers never comes


class WebProcess:
    """`uno-arena web` on a free port, in its own process."""

    def __init__(self, prefix: str, *flags: str) -> None:
        command = [sys.executable, "-m", "uno_arena.cli", "web", "--listen", "127.0.0.1:0", "--redis-url",
                   REDIS_URL, "--key-prefix", prefix, *flags]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=30)
        line = self.process.stdout.readline() if ready else ""
        assert line.startswith("leaderboard at http://127.0.0.1:"), line + self.stop()
        self.url = line.split()[2].rstrip("/")
        self.address = ("127.0.0.1", int(self.url.rpartition(":")[2]))

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/task"))

    def stop(self) -> str:
        """SIGTERM, which stops it like Ctrl-C; its stderr."""
        self.process.terminate()
        try:
            _, stderr = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, stderr = self.process.communicate()
        return str(stderr)


@pytest.fixture
def half_sent() -> Iterator[list[socket.socket]]:
    """Sockets that sent part of a request and then nothing; closed at the end."""
    sockets: list[socket.socket] = []
    yield sockets
    for sock in sockets:
        sock.close()


def open_half_sent(address: tuple[str, int], count: int, into: list[socket.socket]) -> None:
    for _ in range(count):
        sock = socket.create_connection(address, timeout=10)
        sock.sendall(HALF_SENT)
        into.append(sock)


def closed_by_server(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False  # open, nothing sent
    except ConnectionResetError:
        return True


def test_idle_half_sent_connections_hold_no_thread(
    redis_prefix: tuple[redis.Redis, str], half_sent: list[socket.socket]
) -> None:
    web = WebProcess(redis_prefix[1])
    try:
        open_half_sent(web.address, 200, half_sent)
        started = time.monotonic()
        with urllib.request.urlopen(f"{web.url}/", timeout=10) as response:
            assert response.status == 200 and b"all tournaments" in response.read()
        assert time.monotonic() - started < 5
        # the 200 were accepted before the GET behind them, and are still open: held, each by no thread
        assert not any(closed_by_server(sock) for sock in half_sent)
        assert web.threads() <= ServerLimits().threads + 2  # the pool and the event loop, nothing per client
    finally:
        stderr = web.stop()
    assert web.process.returncode == 0, stderr  # SIGTERM stops it cleanly


def test_half_sent_connections_are_closed_after_the_channel_timeout(
    redis_prefix: tuple[redis.Redis, str], half_sent: list[socket.socket]
) -> None:
    web = WebProcess(redis_prefix[1], "--channel-timeout", "1", "--threads", "2")
    try:
        open_half_sent(web.address, 20, half_sent)
        wait_until(lambda: all(map(closed_by_server, half_sent)), 15, "the server to close them")
        assert status_of(f"{web.url}/")[0] == 200
        assert web.threads() <= 2 + 2
    finally:
        web.stop()


def test_bad_limits_are_refused(redis_prefix: tuple[redis.Redis, str]) -> None:
    command = [sys.executable, "-m", "uno_arena.cli", "web", "--redis-url", REDIS_URL, "--key-prefix",
               redis_prefix[1], "--threads", "0"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Invalid value for '--threads'" in done.stderr


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


def test_while_redis_is_down_pages_say_so_and_recover(own_redis: RedisServer) -> None:
    url = own_redis.url
    client = redis_client(url)
    with serving(create_app(client, "uno-arena", refresh=2)) as web:
        assert status_of(f"{web}/")[0] == 200
        own_redis.stop()

        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(f"{web}/", timeout=10)
        text = page.value.read().decode()
        assert page.value.code == 503 and page.value.headers["Retry-After"] == "2"
        assert f"the leaderboard&#39;s Redis at {url} is not answering; this page retries in 2 s" in text
        assert 'http-equiv="refresh" content="2"' in text

        code, body = status_of(f"{web}/api/leaderboard/all")
        error = json.loads(body)
        assert code == 503 and error == {"error": f"the leaderboard's Redis at {url} is not answering",
                                         "retry_after_s": 2}  # fmt: skip
        assert status_of(f"{web}/tournament/cup")[0] == 503  # not a 404: it cannot tell

        own_redis.start()
        wait_until(lambda: status_of(f"{web}/")[0] == 200, 15, "the page to recover")
        assert status_of(f"{web}/api/leaderboard/all")[0] == 200
    client.close()
