"""The SDK on a pool of match servers: one address given, a connection to every server of the pool, a
server joining found within a heartbeat, one leaving let go, a server reached by two addresses
connected once. Real servers in a real pool (Redis), the real SDK."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest
import redis

from tests.conftest import RunningServer, start_server, stop_server
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import play_match
from uno_arena.sdk import PoolClient
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.pool import server_list
from uno_arena.server.membership import Membership
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb

FAST = {"heartbeat_ms": 100, "pool_entry_ttl_ms": 1000, "keepalive_ms": 1000}


class Pool:
    """In-process servers of one pool, started and stopped by the test."""

    def __init__(self, redis_prefix: tuple[redis.Redis, str]) -> None:
        self.redis_prefix = redis_prefix
        self.servers: list[tuple[RunningServer, threading.Thread, Membership]] = []

    def add(self) -> RunningServer:
        server, thread = start_server(*self.redis_prefix, **FAST)
        self.servers.append((server, thread, server.join_pool()))
        return server

    def remove(self, server: RunningServer) -> None:
        for entry in self.servers:
            if entry[0] is server:
                self.servers.remove(entry)
                server.call_soon(entry[2].stop()).result(10)
                stop_server(server, entry[1])

    def close(self) -> None:
        for server, *_ in list(self.servers):
            self.remove(server)


@pytest.fixture
def servers(redis_prefix: tuple[redis.Redis, str]) -> Iterator[Pool]:
    made = Pool(redis_prefix)
    yield made
    made.close()


def eventually(condition: Callable[[], bool], what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def connected(bot: BackgroundBot) -> list[str]:
    client = bot.client
    assert isinstance(client, PoolClient)
    return bot.read(client.connected_servers)  # type: ignore[no-any-return]


def test_one_address_reaches_every_server_of_the_pool_as_it_changes(servers: Pool) -> None:
    first, second = servers.add(), servers.add()
    bot = BackgroundBot(GreedyBot(), first.address, "ann", first.register("ann"), pool=True)
    play = BackgroundBot(GreedyBot(), first.address, "bob", first.register("bob"), pool=True)
    try:
        for each in (bot, play):
            each.wait_connected(2)
        assert connected(bot) == sorted([first.address, second.address])
        request = control_pb2.PlayMatchRequest(match_id="on-second", bots=["ann", "bob"], seed=3,
                                               rules=pb.RulesConfig(target_score=50))  # fmt: skip
        ending = play_match(second.address, second.control_token, request)[-1]  # seated on the second
        assert ending.finished.result.match_id == "on-second"

        third = servers.add()  # joins: told by PoolChanged within a heartbeat
        bot.wait_connected(3)
        servers.remove(third)  # leaves: the connection is let go once it plays nothing
        eventually(lambda: third.address not in bot.read(lambda: list(bot.client.links)), "the link to go")
        assert connected(bot) == sorted([first.address, second.address]) and bot.error is None
    finally:
        for each in (bot, play):
            each.stop()


def test_a_server_reached_by_two_addresses_is_connected_once(servers: Pool) -> None:
    server = servers.add()
    port = server.address.rpartition(":")[2]
    bot = BackgroundBot(
        GreedyBot(), f"localhost:{port},{server.address}", "cy", server.register("cy"), pool=True
    )
    try:
        bot.wait_connected(1)
        client = bot.client
        assert isinstance(client, PoolClient)
        eventually(lambda: len(bot.read(lambda: client.duplicates)) == 1, "the second link to stand down")
        assert connected(bot) == [server.address]
        assert bot.error is None and not bot.finished.is_set()
    finally:
        bot.stop()


def test_addresses_are_a_list_or_commas() -> None:
    assert server_list("a:1, b:2,a:1,") == ["a:1", "b:2"]
    assert server_list(["a:1"]) == ["a:1"]
    with pytest.raises(ValueError, match="no match server address"):
        server_list(" , ")
