"""The stored leaderboard, updated as results arrive, against the full recomputation in match-id order.

Results are written as the recording script leaves them (the match's summary, the tournament's results
list), in many orders of arrival, by one process or two at once, with a window small enough that some
arrivals fall behind it; after each, the stored tables must equal `board.compute` over the same matches.
"""

from __future__ import annotations

import multiprocessing
import random
from typing import Any

import pytest
import redis
from rq import Queue, SimpleWorker
from rq.utils import import_attribute

from uno_arena.leaderboard import board, jobs
from uno_arena.leaderboard.ratings import order_key
from uno_arena.records.match import Faults, HandRecord, MatchRecord, match_key, match_records
from uno_arena.records.tournament import Keys
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import jobs as match_jobs

BOTS = ("ada", "bob", "cy", "dee", "eve", "fay")


def synthetic(tournament_id: str, index: int, rng: random.Random) -> MatchRecord:
    """A plausible match result: 2-4 seats, sometimes a shared win, a forfeit or faults."""
    bots = tuple(rng.sample(BOTS, rng.choice((2, 2, 3, 4))))
    totals = tuple(rng.randrange(0, 600) for _ in bots)
    winners = tuple(sorted(rng.sample(range(len(bots)), 2 if rng.random() < 0.15 and len(bots) > 2 else 1)))
    forfeited = tuple(s for s in range(len(bots)) if s not in winners and rng.random() < 0.1)
    faults = tuple(Faults(timeout=rng.choice((0, 0, 1)), invalid=rng.choice((0, 0, 0, 2)),
                          bot_error=rng.choice((0, 0, 0, 1))) for _ in bots)  # fmt: skip
    hands = tuple(HandRecord(rng.choice((*winners, None)), totals, pb.HAND_END_PLAYED_OUT)
                  for _ in range(rng.randrange(1, 4)))  # fmt: skip
    match_id = Keys("p", tournament_id).match_id(index)
    return MatchRecord(match_id, tournament_id, index, bots, pb.MATCH_END_TARGET_REACHED, winners, totals,
                       forfeited, hands, faults, rng.randrange(1 << 30), 100)  # fmt: skip


def put(client: redis.Redis, prefix: str, match: MatchRecord) -> None:
    """What recording leaves behind that the leaderboard reads (records.match's script writes more)."""
    keys = Keys(prefix, match.tournament)
    with client.pipeline() as pipe:
        pipe.zadd(keys.index, {match.tournament: 0}, nx=True)
        pipe.hset(match_key(prefix, match.match_id), "summary", match.to_json())
        pipe.rpush(keys.results, match.match_id)
        pipe.execute()


def comparable(table: board.Table | None) -> dict[str, Any]:
    assert table is not None
    values = table.to_dict()
    del values["computed"]
    return values


def assert_stored_equals_full(client: redis.Redis, prefix: str, scopes: list[str]) -> None:
    for scope in scopes:
        full = board.compute(match_records(client, prefix, None if scope == board.ALL else scope))
        assert comparable(board.load(client, prefix, scope)) == comparable(full), scope


def test_the_full_recomputation_does_not_depend_on_record_order_to_the_last_bit() -> None:
    rng = random.Random(5)
    matches = [synthetic("t", i, rng) for i in range(300)]  # shared wins: thirds and halves summed
    shuffled = rng.sample(matches, len(matches))
    assert comparable(board.compute(matches)) == comparable(board.compute(shuffled))


def test_order_keys_sort_indices_past_five_digits_as_numbers() -> None:
    ids = ["t-m99999", "t-m100000", "t-m00002", "s-m00007", "t-m100001"]
    assert sorted(ids, key=order_key) == ["s-m00007", "t-m00002", "t-m99999", "t-m100000", "t-m100001"]
    assert sorted(order_key(i) for i in ids[:1] + ids[2:4]) == [
        order_key(i) for i in sorted(ids[:1] + ids[2:4])
    ]


def arrivals(matches: list[MatchRecord], how: str, rng: random.Random) -> list[MatchRecord]:
    if how == "shuffled":
        return rng.sample(matches, len(matches))
    if how == "reversed":
        return matches[::-1]
    # "jittered": as parallel workers finish: each a few places from its id's, and one rerun far behind
    jittered = sorted(matches, key=lambda m: m.index + rng.uniform(0, 6))
    jittered.append(jittered.pop(3))
    return jittered


@pytest.mark.parametrize("window", [5, board.WINDOW])
@pytest.mark.parametrize("how", ["shuffled", "reversed", "jittered"])
def test_stored_tables_equal_the_full_recomputation_whatever_the_order_of_arrival(
    redis_prefix: tuple[redis.Redis, str], monkeypatch: pytest.MonkeyPatch, how: str, window: int
) -> None:
    client, prefix = redis_prefix
    monkeypatch.setattr(board, "WINDOW", window)  # 5: many arrivals fall behind the kept steps
    rng = random.Random(f"{how}-{window}")
    # Two tournaments whose ids interleave in the overall table; one's indices cross 99,999.
    matches = [synthetic("cup", i, rng) for i in range(30)]
    matches += [synthetic("big", i, rng) for i in range(99_985, 100_015)]
    for n, match in enumerate(arrivals(matches, how, rng)):
        put(client, prefix, match)
        board.refresh(client, prefix, match.tournament)
        if n % 7 == 0:
            assert_stored_equals_full(client, prefix, [match.tournament, board.ALL])
    assert_stored_equals_full(client, prefix, ["cup", "big", board.ALL])
    table = board.load(client, prefix, board.ALL)
    assert table is not None and table.matches == len(matches)


def test_a_result_is_counted_once_however_often_the_table_is_updated(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    match = synthetic("cup", 0, random.Random(1))
    put(client, prefix, match)
    for _ in range(3):
        board.refresh(client, prefix, "cup")
    table = board.load(client, prefix, "cup")
    assert (
        table is not None
        and table.matches == 1
        and sum(r.matches for r in table.standings) == len(match.bots)
    )


def test_results_left_behind_are_taken_in_by_the_next_update(redis_prefix: tuple[redis.Redis, str]) -> None:
    """A job that died between recording and updating, and one that found the table locked."""
    client, prefix = redis_prefix
    rng = random.Random(2)
    put(client, prefix, synthetic("cup", 0, rng))  # its job died before updating
    keys = board.scope_keys(prefix, "cup")
    client.set(keys.lock, "another job")
    put(client, prefix, synthetic("cup", 1, rng))
    board.refresh(client, prefix, "cup")  # the lock is taken: it marks the tournament and leaves
    assert board.load(client, prefix, "cup") is None and client.sismember(keys.dirty, "cup")
    client.delete(keys.lock)
    put(client, prefix, synthetic("cup", 2, rng))
    board.refresh(client, prefix, "cup")
    assert_stored_equals_full(client, prefix, ["cup", board.ALL])
    assert not client.exists(keys.dirty)


def test_a_rebuild_replaces_a_table_stored_by_an_older_version(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    put(client, prefix, synthetic("cup", 0, random.Random(3)))
    client.set(board.key(prefix, "cup"), '{"standings": [], "head_to_head": {}, "matches": 0, "computed": 0}')
    table = board.rebuild(client, prefix, "cup")
    assert table.matches == 1 and not client.exists(board.key(prefix, "cup"))


def record_and_refresh(connection: dict[str, Any], prefix: str, indices: list[int], start: Any) -> None:
    """One worker process: record its matches, updating the table after each, as match jobs do."""
    client = redis.Redis(**connection)
    rng = random.Random(indices[0])
    start.wait()
    for index in indices:
        put(client, prefix, synthetic("cup", index, rng))
        board.refresh(client, prefix, "cup")


def test_two_processes_recording_at_once_lose_no_update(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    kwargs = client.connection_pool.connection_kwargs
    connection = {"host": kwargs["host"], "port": kwargs["port"], "db": kwargs["db"]}
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    workers = [
        context.Process(
            target=record_and_refresh, args=(connection, prefix, list(range(first, 120, 2)), start)
        )
        for first in (0, 1)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert_stored_equals_full(client, prefix, ["cup", board.ALL])
    table = board.load(client, prefix, "cup")
    assert table is not None and table.matches == 120


def test_the_refresh_job_the_match_jobs_queue_by_name_takes_the_results_in(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    """Workers import nothing of the leaderboard: they queue its job by name, which RQ resolves to it."""
    client, prefix = redis_prefix
    assert match_jobs.REFRESH_JOB == jobs.REFRESH_JOB
    assert import_attribute(match_jobs.REFRESH_JOB) is jobs.refresh
    rng = random.Random(3)
    for index in range(4):
        put(client, prefix, synthetic("cup", index, rng))
    queue = Queue(f"{prefix}.matches", connection=client)
    for _ in range(2):  # twice: the second takes nothing more in
        queue.enqueue(match_jobs.REFRESH_JOB, prefix, "cup", 5.0, result_ttl=0)
        assert SimpleWorker([queue], connection=client, name=f"{prefix}-refresh").work(burst=True)
        assert_stored_equals_full(client, prefix, ["cup", board.ALL])
    table = board.load(client, prefix, "cup")
    assert table is not None and table.matches == 4
    assert queue.count == 0 and queue.failed_job_registry.count == 0
