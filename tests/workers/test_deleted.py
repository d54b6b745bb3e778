"""What outlives a tournament's deletion writes nothing of it, and what a deletion waits for: real Redis,
real RQ jobs, the real deletion (`workers.removal`); no worker process.

- A leaderboard refresh already running when its tournament is deleted (the deletion lands after its
  check that the tournament exists, or while it reads the records) commits nothing and re-creates none
  of the tournament's keys; a rebuild of a deleted tournament is refused, writing nothing.
- A match job that outlives a forced deletion (its lease renewed, its failure recorded with a retry
  due, its state set) writes nothing.
- An unforced deletion refuses while a leaderboard refresh of the tournament waits to run.

Where a test makes the deletion land in the middle of a refresh, it wraps the refresh's own step (its
check, its read of the records) so that the real deletion runs right after it: the interleaving is
chosen, everything else is real.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import redis
from rq.job import Job

from tests.web.test_web import finished_match
from uno_arena.leaderboard import board
from uno_arena.records import identity
from uno_arena.records.match import record
from uno_arena.records.owned import OwnedKey, existing, owned_keys
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import (
    Keys,
    MatchState,
    TournamentError,
    TournamentStatus,
    load,
    scheduled_match,
    set_state,
)
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import jobs, lifecycle
from uno_arena.workers.queue import job_id, match_queue, tournament_jobs
from uno_arena.workers.removal import StillRunning, delete_tournament
from uno_arena.workers.settings import WorkerSettings

BOTS = ["alpha", "beta", "gamma"]
MATCHES = 3  # three bots, two seats: one cycle


def started(client: redis.Redis, prefix: str, tournament_id: str = "cup") -> list[OwnedKey]:
    """A tournament of three matches, started (its match jobs queued; no worker runs them): every key it
    may have."""
    for bot in BOTS:
        identity.register_bot(client, prefix, bot)
    lifecycle.create_checked(client, prefix, spec_from_dict({"name": "cup", "bots": BOTS}), tournament_id)
    assert lifecycle.start(client, prefix, tournament_id) == MATCHES
    return owned_keys(prefix, tournament_id, range(MATCHES))


def finished(client: redis.Redis, prefix: str, tournament_id: str = "cup") -> list[OwnedKey]:
    """The same tournament with every match recorded, as the match jobs record them: finished."""
    every = started(client, prefix, tournament_id)
    keys = Keys(prefix, tournament_id)
    started_hand = pb.Event(hand_started=pb.HandStarted(number=1))
    log = control_pb2.EventLogChunk(events=[started_hand]).SerializeToString()
    for index in range(MATCHES):
        bots = scheduled_match(client, prefix, tournament_id, index).bots
        assert record(client, keys, index, finished_match(keys.match_id(index), bots), log)
    assert load(client, prefix, tournament_id).status is TournamentStatus.FINISHED
    return every


def deleted_after(step: Callable[..., Any], client: redis.Redis, prefix: str) -> Callable[..., Any]:
    """`step`, after whose first call tournament `cup` is deleted (as `tournament delete` does)."""
    calls = []

    def then_deleted(*args: Any) -> Any:
        found = step(*args)
        if not calls:
            calls.append(args)
            delete_tournament(client, prefix, "cup", jobs_wait_s=0)
        return found

    return then_deleted


def nothing_of_it_in_the_overall_table(client: redis.Redis, prefix: str) -> bool:
    overall = board.scope_keys(prefix, board.ALL)
    return not client.sismember(overall.dirty, "cup") and not client.hexists(overall.meta, "cursor:cup")


def test_a_refresh_whose_tournament_is_deleted_after_its_check_writes_nothing(
    redis_prefix: tuple[redis.Redis, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, prefix = redis_prefix
    every = finished(client, prefix)
    monkeypatch.setattr(board, "exists", deleted_after(board.exists, client, prefix))
    board.refresh(client, prefix, "cup")  # what the refresh job a match job queued does
    assert existing(client, every) == []
    assert nothing_of_it_in_the_overall_table(client, prefix)


def test_a_refresh_whose_tournament_is_deleted_while_it_reads_the_records_writes_nothing(
    redis_prefix: tuple[redis.Redis, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deletion lands after the refresh took the table's lock and read the results, before it
    commits: its transaction (under WATCH of the index of tournaments) is not committed."""
    client, prefix = redis_prefix
    every = finished(client, prefix)
    monkeypatch.setattr(board, "_records", deleted_after(board._records, client, prefix))
    board.refresh(client, prefix, "cup")
    assert existing(client, every) == []
    assert nothing_of_it_in_the_overall_table(client, prefix)


def test_a_rebuild_of_a_deleted_tournament_is_refused_and_writes_nothing(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    every = finished(client, prefix)
    delete_tournament(client, prefix, "cup", jobs_wait_s=0)
    with pytest.raises(TournamentError, match="no tournament 'cup'"):
        board.rebuild(client, prefix, "cup")  # `leaderboard cup --refresh`, racing the deletion
    assert existing(client, every) == []


def test_a_match_job_outliving_a_forced_deletion_writes_nothing(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    every = started(client, prefix)
    keys = Keys(prefix, "cup")
    lease = jobs.Lease(client, keys, 1, 2.0)
    assert lease.take()  # a job plays match 1 ...
    removal = delete_tournament(client, prefix, "cup", force=True, stop_wait_s=0)  # ... and it is deleted
    assert removal.listed and existing(client, every) == []

    with pytest.raises(TournamentError, match="'cup' is gone"):
        lease.take(first=False)  # the job renews its lease
    with pytest.raises(TournamentError, match="'cup' is gone"):
        jobs.Lease(client, keys, 2, 2.0).take()  # another starts
    jobs._mark_failed(client, keys, 1, "UNAVAILABLE: the match server (will retry)", time.time() + 5)
    jobs._mark_failed(client, keys, 2, "out of tries", None)
    assert not set_state(client, keys, 0, MatchState.CANCELLED)  # a job finding its tournament cancelled
    assert existing(client, every) == []


def test_an_unforced_deletion_refuses_while_a_leaderboard_refresh_waits_to_run(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    """The last match job recorded its match (the tournament is finished) and queued the leaderboard's
    refresh, which no worker has run yet: deleting now would lose it (or let it write to the deleted
    tournament), so an unforced deletion waits for it and then refuses; forced, it removes it."""
    client, prefix = redis_prefix
    every = finished(client, prefix)
    last = Job.fetch(job_id(prefix, "cup", MATCHES - 1), connection=client)
    jobs.queue_refresh(last, prefix, "cup", WorkerSettings("a-control-token", redis_wait_s=5.0))
    refresh = f"{last.id}{jobs.REFRESH_SUFFIX}"
    assert refresh in match_queue(client, prefix).get_job_ids()
    before = existing(client, every)

    with pytest.raises(StillRunning) as refused:
        delete_tournament(client, prefix, "cup", jobs_wait_s=0)
    said = str(refused.value)
    assert "tournament 'cup' is being played: 1 RQ job of it still running or waiting to run" in said
    assert refresh in said and "--force" in said
    assert existing(client, every) == before  # nothing touched
    assert load(client, prefix, "cup").status is TournamentStatus.FINISHED

    removal = delete_tournament(client, prefix, "cup", force=True, stop_wait_s=0)
    assert refresh in removal.jobs and existing(client, every) == []
    assert tournament_jobs(client, prefix, "cup", range(MATCHES)) == []
