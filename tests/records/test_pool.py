"""The pool of match servers in a real Redis: entries that expire, drain and leave; placement that balances
load, seats a match where its bots are, keeps a placed match where it runs and never piles two onto one."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
import redis.asyncio as aioredis

from tests.conftest import REDIS_URL
from uno_arena.records import pool
from uno_arena.records.pool import Entry, PoolError, PoolKeys, place

A, B, C = "10.0.0.1:50051", "10.0.0.2:50051", "10.0.0.3:50051"  # addresses, never dialled here


def beat(keys: PoolKeys, address: str, load: int = 0, bots: dict[str, int] | None = None,
         draining: bool = False, ttl_ms: int = pool.ENTRY_TTL_MS) -> list[str]:  # fmt: skip
    """One heartbeat of the server at `address`, as `uno-arena server` writes it."""

    async def write() -> list[str]:
        client = aioredis.Redis.from_url(REDIS_URL)
        try:
            entry = Entry(address, host="h", pid=1, load=load, draining=draining, heartbeat=time.time())
            return (await pool.heartbeat(client, keys, entry, bots or {}, ttl_ms=ttl_ms)).servers
        finally:
            await client.aclose()

    return asyncio.run(write())


@pytest.fixture
def keys(redis_prefix: tuple[redis.Redis, str]) -> PoolKeys:
    return PoolKeys(redis_prefix[1], "main")


def placed(client: redis.Redis, keys: PoolKeys) -> str:
    return f"{keys.prefix}:tournament:t:placed"


def test_an_entry_lists_its_server_until_it_expires(
    redis_prefix: tuple[redis.Redis, str], keys: PoolKeys
) -> None:
    client, _ = redis_prefix
    assert beat(keys, A, load=3, bots={"ann": 2}) == [A]
    assert beat(keys, B, ttl_ms=300) == [A, B]
    entries = {entry.address: entry for entry in pool.servers(client, keys)}
    assert entries[A].load == 3 and entries[A].pid == 1 and not entries[A].draining
    assert pool.connected_bots(client, keys, A) == {"ann": 2}
    deadline = time.monotonic() + 5
    while [e.address for e in pool.servers(client, keys)] != [A]:  # B stopped beating: gone by itself
        assert time.monotonic() < deadline, "the silent server's entry did not expire"
        time.sleep(0.05)
    assert beat(keys, A) == [A]  # and the next heartbeat drops it from the sets too
    assert client.zscore(keys.live, B) is None and client.zscore(keys.open, B) is None


def test_placement_balances_load_and_counts_each_choice_at_once(
    redis_prefix: tuple[redis.Redis, str], keys: PoolKeys
) -> None:
    client, _ = redis_prefix
    bots = {"ann": 8, "bob": 8, "cy": 8, "dee": 8}
    beat(keys, A, load=2, bots=bots)
    beat(keys, B, load=0, bots=bots)
    chosen = [place(client, keys, placed(client, keys), i, ("ann", "bob")) for i in range(6)]
    servers = [c.server for c in chosen if c is not None]
    # B first (lighter), then B again, then they alternate as each choice counts at once
    assert servers[:2] == [B, B] and sorted(servers[2:]) == [A, A, B, B], servers
    assert all(c is not None and c.seated and not c.kept for c in chosen)
    loads = {e.address: e.load for e in pool.servers(client, keys)}
    assert loads == {A: 4, B: 4}
    assert pool.connected_bots(client, keys, B)["ann"] == 8 - servers.count(B)
    beat(keys, A, load=0, bots=bots)  # a heartbeat says the truth again
    assert {e.address: e.load for e in pool.servers(client, keys)}[A] == 0


def test_a_match_goes_where_its_seats_are_connected(
    redis_prefix: tuple[redis.Redis, str], keys: PoolKeys
) -> None:
    client, _ = redis_prefix
    beat(keys, A, load=0, bots={"ann": 1})  # lighter, but bob is not connected there
    beat(keys, B, load=5, bots={"ann": 0, "bob": 1})  # both connected, ann's slots full
    beat(keys, C, load=9, bots={"ann": 1, "bob": 1})  # both connected with a free slot: chosen
    first = place(client, keys, placed(client, keys), 0, ("ann", "bob"))
    assert first is not None and first.server == C and first.seated
    second = place(client, keys, placed(client, keys), 1, ("ann", "bob"))  # C's slots are taken now
    assert second is not None and second.server == B and not second.seated
    third = place(client, keys, placed(client, keys), 2, ("cy", "dee"))  # nowhere: the lightest
    assert third is not None and third.server == A and not third.seated


def test_a_placed_match_stays_where_it_runs_until_its_server_is_lost(
    redis_prefix: tuple[redis.Redis, str], keys: PoolKeys
) -> None:
    client, _ = redis_prefix
    beat(keys, A, load=0)
    beat(keys, B, load=1)
    first = place(client, keys, placed(client, keys), 7, ("ann", "bob"))
    assert first is not None and first.server == A and not first.kept
    beat(keys, A, load=50, draining=True)  # draining: no new match, but it finishes this one
    again = place(client, keys, placed(client, keys), 7, ("ann", "bob"))
    assert again is not None and again.server == A and again.kept
    assert place(client, keys, placed(client, keys), 8, ("ann", "bob")).server == B  # type: ignore[union-attr]
    moved = place(client, keys, placed(client, keys), 7, ("ann", "bob"), excluded=[A])  # A lost it
    assert moved is not None and moved.server == B and not moved.kept
    assert client.hget(placed(client, keys), "7") == B.encode()
    assert place(client, keys, placed(client, keys), 9, ("ann", "bob"), excluded=[B]) is None


def test_drain_and_leave_take_a_server_out_at_once(
    redis_prefix: tuple[redis.Redis, str], keys: PoolKeys
) -> None:
    client, _ = redis_prefix
    beat(keys, A)
    beat(keys, B)

    async def drain_then_leave() -> None:
        aio = aioredis.Redis.from_url(REDIS_URL)
        try:
            await pool.close_to_new_matches(aio, keys, A)
            assert place(client, keys, placed(client, keys), 0, ()).server == B  # type: ignore[union-attr]
            assert [e.draining for e in pool.servers(client, keys)] == [True, False]
            await pool.leave(aio, keys, A)
        finally:
            await aio.aclose()

    asyncio.run(drain_then_leave())
    assert [e.address for e in pool.servers(client, keys)] == [B]
    assert not client.exists(keys.server(A), keys.bots(A))


def test_a_heartbeat_writes_the_bots_by_change_and_says_when_their_hash_is_gone(
    redis_prefix: tuple[redis.Redis, str], keys: PoolKeys
) -> None:
    client, _ = redis_prefix
    entry = Entry(A, heartbeat=time.time())

    async def beats() -> list[bool]:
        aio = aioredis.Redis.from_url(REDIS_URL)
        try:
            first = await pool.heartbeat(aio, keys, entry, {"ann": 2, "bob": 1})  # whole
            assert pool.connected_bots(client, keys, A) == {"ann": 2, "bob": 1}
            second = await pool.heartbeat(aio, keys, entry, {"ann": 1, "cy": 4}, gone=["bob"], whole=False)
            assert pool.connected_bots(client, keys, A) == {"ann": 1, "cy": 4}
            client.delete(keys.bots(A))  # lost (Redis restarted without it): the next beat says so
            third = await pool.heartbeat(aio, keys, entry, {}, whole=False)
            return [first.bots_kept, second.bots_kept, third.bots_kept]
        finally:
            await aio.aclose()

    assert asyncio.run(beats()) == [True, True, False]


def test_names_and_addresses_are_checked() -> None:
    assert pool.check_pool_name("gpu-room.2") == "gpu-room.2"
    assert pool.check_address("[::1]:7000") == "[::1]:7000"
    for bad_name in ("", "a:b", "-x", "x" * 64):
        with pytest.raises(PoolError, match="pool name"):
            pool.check_pool_name(bad_name)
    for bad_address in ("host", "host:0", "host:70000", ":80", "a b:80"):
        with pytest.raises(PoolError, match="expected HOST:PORT"):
            pool.check_address(bad_address)
