"""A match server in its pool: its entry in Redis (load, bots and their free slots), what it tells bots
(Welcome, PoolChanged to those that follow the pool), draining out of the pool, and a client's second
link to the same server refused instead of replacing the first. Real servers, real Redis."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import grpc
import pytest
import redis

from tests.conftest import RunningServer, start_server, stop_server
from tests.server.botclient import TestBot, play_match
from uno_arena.records import pool
from uno_arena.server.membership import Membership, advertised_address
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb

FAST = {"heartbeat_ms": 100, "pool_entry_ttl_ms": 1000, "keepalive_ms": 1000}


def leave(server: RunningServer, membership: Membership) -> None:
    server.call_soon(membership.stop()).result(10)


@pytest.fixture
def two_servers(redis_prefix: tuple[redis.Redis, str]) -> Iterator[list[tuple[RunningServer, Membership]]]:
    started: list[tuple[RunningServer, threading.Thread]] = [start_server(*redis_prefix, **FAST)
                                                             for _ in range(2)]  # fmt: skip
    members = [(server, server.join_pool()) for server, _ in started]
    eventually(lambda: all(len(server.arena.pool) == 2 for server, _ in members), "each to see the other")
    yield members
    for (server, thread), (_, membership) in zip(started, members, strict=True):
        leave(server, membership)
        stop_server(server, thread)


def eventually(condition: object, what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_server_in_a_pool_tells_its_bots_the_pool_and_its_changes(
    two_servers: list[tuple[RunningServer, Membership]], redis_prefix: tuple[redis.Redis, str]
) -> None:
    (first, _), (second, second_membership) = two_servers
    both = sorted([first.address, second.address])
    follower = TestBot(first.address, "ann", first.register("ann"), follow_pool=True)
    plain = TestBot(first.address, "bob", first.register("bob"))
    follower.wait_for(follower.welcomed)
    plain.wait_for(plain.welcomed)
    welcome = follower.of_kind("welcome")[0].welcome
    assert welcome.address == first.address and welcome.pool_name == "default"
    assert sorted(welcome.pool) == both

    second.call_soon(second_membership.drain()).result(10)  # draining: out of the pool's open servers
    second.arena.draining = True
    follower.wait_for(lambda: any(list(m.pool_changed.servers) == [first.address]
                                  for m in follower.of_kind("pool_changed")))  # fmt: skip
    assert plain.of_kind("pool_changed") == []  # only bots that asked are told
    client, prefix = redis_prefix
    entries = {e.address: e for e in pool.servers(client, pool.PoolKeys(prefix, "default"))}
    assert entries[second.address].draining and not entries[first.address].draining  # still live
    for bot in (follower, plain):
        bot.close()


def test_the_entry_counts_matches_and_each_bots_free_slots(
    two_servers: list[tuple[RunningServer, Membership]], redis_prefix: tuple[redis.Redis, str]
) -> None:
    (server, _), _ = two_servers
    client, prefix = redis_prefix
    keys = pool.PoolKeys(prefix, "default")
    bots = [TestBot(server.address, name, server.register(name), max_matches=3) for name in ("cy", "di")]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    eventually(lambda: pool.connected_bots(client, keys, server.address) == {"cy": 3, "di": 3}, "the bots")

    silent = TestBot(server.address, "ed", server.register("ed"), policy=lambda _: None)  # never answers
    silent.wait_for(silent.welcomed)
    request = control_pb2.PlayMatchRequest(match_id="m1", bots=["cy", "ed"], seed=1,
                                           rules=pb.RulesConfig(target_score=500),
                                           decision_timeout_ms=60_000)  # fmt: skip
    playing = threading.Thread(target=lambda: play_match(server.address, server.control_token, request),
                               daemon=True)  # fmt: skip
    playing.start()
    entry = lambda: {e.address: e for e in pool.servers(client, keys)}[server.address]  # noqa: E731
    eventually(lambda: entry().running == 1 and entry().load == 1, "the match in the entry")  # at once
    assert pool.connected_bots(client, keys, server.address) == {"cy": 2, "di": 3, "ed": 0}
    eventually(lambda: entry().bots == 3, "the next heartbeat")  # the rest of the entry: each heartbeat
    assert entry().pid > 0 and entry().version == "test"
    for bot in (*bots, silent):
        bot.close()
    playing.join(30)


def test_a_clients_second_link_to_one_server_is_refused_and_a_reconnect_replaces(
    match_server: RunningServer,
) -> None:
    token = match_server.register("fay")
    first = TestBot(match_server.address, "fay", token, instance="run-1", link="localhost:1")
    first.wait_for(first.welcomed)
    second = TestBot(match_server.address, "fay", token, instance="run-1", link="127.0.0.1:1")
    second.wait_for(lambda: second.ended)
    assert second.error is not None and second.error.code() == grpc.StatusCode.ALREADY_EXISTS
    assert second.close_reason() == bot_pb2.CLOSE_REASON_DUPLICATE_LINK
    assert not first.ended  # the first plays on

    again = TestBot(match_server.address, "fay", token, instance="run-1", link="localhost:1")  # a reconnect
    again.wait_for(again.welcomed)
    first.wait_for(lambda: first.ended)
    assert first.close_reason() == bot_pb2.CLOSE_REASON_REPLACED
    other_run = TestBot(match_server.address, "fay", token, instance="run-2", link="127.0.0.1:1")
    other_run.wait_for(other_run.welcomed)  # another copy of the bot: it replaces, as always
    for bot in (first, second, again, other_run):
        bot.close()


def test_the_advertised_address_is_the_one_given_or_the_one_listened_on() -> None:
    assert advertised_address("127.0.0.1:0", 5001) == "127.0.0.1:5001"
    assert advertised_address("0.0.0.0:7000", 7000, "arena-3.lan:7000") == "arena-3.lan:7000"
    assert advertised_address("[::]:0", 7002, "arena-3.lan:0") == "arena-3.lan:7002"
    wildcard = advertised_address("0.0.0.0:7000", 7000)
    assert wildcard.endswith(":7000") and not wildcard.startswith("0.0.0.0")
