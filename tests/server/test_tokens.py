"""Tokens replaced or revoked while their bot is connected end its connection; `bot revoke`, `bot list`."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import grpc
import pytest
import redis.asyncio as aioredis
from click.testing import CliRunner, Result
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

import tests.conftest as conftest
from tests.conftest import RunningServer
from tests.server.botclient import TestBot
from tests.server.test_limits import on_server, wait_until
from uno_arena.cli.main import cli
from uno_arena.records import identity
from uno_arena.v1 import bot_pb2

FAST = {"token_check_ms": 100}


def connected(server: RunningServer, name: str, token: str, **options: Any) -> TestBot:
    bot = TestBot(server.address, name, token, **options)
    bot.wait_for(bot.welcomed)
    return bot


def ended_with(bot: TestBot) -> tuple[grpc.StatusCode, bot_pb2.CloseReason]:
    """The status code the stream ended with, and the reason the server sent beside it."""
    bot.wait_for(lambda: bot.ended, timeout=15)
    assert bot.error is not None
    return bot.error.code(), bot.close_reason()


def checks_after(server: RunningServer, rounds: int) -> Callable[[], bool]:
    """A predicate: the token watch has run `rounds` more times since now."""
    start: int = on_server(server, lambda: server.arena.token_checks)
    return lambda: on_server(server, lambda: server.arena.token_checks) >= start + rounds


def bot_command(server: RunningServer, *args: str) -> Result:
    options = ["--redis-url", conftest.REDIS_URL, "--key-prefix", server.prefix]
    return CliRunner().invoke(cli, ["bot", *args, *options], catch_exceptions=False)


@pytest.mark.settings(**FAST)
def test_a_replaced_token_ends_the_live_connection(match_server: RunningServer) -> None:
    old_token = match_server.register("renewed")
    old = connected(match_server, "renewed", old_token)
    new_token = identity.register_bot(match_server.redis, match_server.prefix, "renewed", replace=True)
    assert ended_with(old) == (grpc.StatusCode.UNAUTHENTICATED, bot_pb2.CLOSE_REASON_TOKEN_REVOKED)
    old.close()
    renewed = connected(match_server, "renewed", new_token)
    wait_until(checks_after(match_server, 3), what="three token checks")
    assert not renewed.ended  # the new token stays valid
    renewed.close()
    again = TestBot(match_server.address, "renewed", old_token)
    assert ended_with(again) == (grpc.StatusCode.UNAUTHENTICATED, bot_pb2.CLOSE_REASON_TOKEN_REFUSED)
    again.close()


@pytest.mark.settings(**FAST)
def test_bot_revoke_deletes_the_bot_and_ends_its_connection(match_server: RunningServer) -> None:
    bot = connected(match_server, "gone", match_server.register("gone"))
    done = bot_command(match_server, "revoke", "gone")
    assert done.exit_code == 0, done.output
    assert ended_with(bot) == (grpc.StatusCode.UNAUTHENTICATED, bot_pb2.CLOSE_REASON_TOKEN_REVOKED)
    assert not match_server.redis.exists(identity.bot_key(match_server.prefix, "gone"))
    bot.close()
    again = bot_command(match_server, "revoke", "gone")
    assert again.exit_code == 1 and "bot 'gone' is not registered" in again.output


@pytest.mark.settings(**FAST)
def test_redis_unreachable_during_a_token_check_disconnects_nobody(match_server: RunningServer) -> None:
    bot = connected(match_server, "patient", match_server.register("patient"))
    wait_until(checks_after(match_server, 1), what="a token check")
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]

    async def swap(client: aioredis.Redis) -> aioredis.Redis:
        previous, match_server.arena.redis = match_server.arena.redis, client
        return previous

    unreachable = aioredis.Redis(
        host="127.0.0.1", port=dead, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
    )
    real = match_server.call_soon(swap(unreachable)).result(10)
    try:
        wait_until(checks_after(match_server, 3), what="three token checks against no Redis")
        assert not bot.ended
        assert on_server(match_server, lambda: match_server.arena.gateway.connection("patient")) is not None
    finally:
        match_server.call_soon(swap(real)).result(10)
    bot.close()


def test_bot_list_shows_registrations_connections_and_matches(match_server: RunningServer) -> None:
    listed = connected(match_server, "listed-a", match_server.register("listed-a"), max_matches=2)
    match_server.register("listed-b")
    done = bot_command(match_server, "list", "--server", match_server.address,
                       "--control-token", match_server.control_token)  # fmt: skip
    assert done.exit_code == 0, done.output
    rows = {line.split()[1]: line for line in done.stdout.splitlines() if "listed-" in line}
    assert set(rows) == {"listed-a", "listed-b"}
    assert "yes" in rows["listed-a"] and "0/2" in rows["listed-a"] and "test" in rows["listed-a"]
    assert " no " in rows["listed-b"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nowhere = f"127.0.0.1:{probe.getsockname()[1]}"
    unasked = bot_command(
        match_server, "list", "--server", nowhere, "--control-token", match_server.control_token
    )
    assert unasked.exit_code == 0, unasked.output
    assert "listed-a" in unasked.stdout and "listed-b" in unasked.stdout
    assert f"connections not shown: no match server answers at {nowhere}" in unasked.stderr
    listed.close()
