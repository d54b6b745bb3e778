"""What workers and organisers do about jobs nothing will run: due retries, a dead worker's started job,
and what `progress` says meanwhile (real Redis, real RQ registries, no worker needed)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import redis
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry, StartedJobRegistry

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT
from uno_arena.records import identity
from uno_arena.records.match import record
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, TournamentStatus, progress, set_state, set_status
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import lifecycle
from uno_arena.workers.jobs import play_match
from uno_arena.workers.queue import job_id, match_queue
from uno_arena.workers.reaper import Reaper, release_due_retries


def queued_ids(client: redis.Redis, prefix: str) -> list[str]:
    return match_queue(client, prefix).get_job_ids()


def tournament(client: redis.Redis, prefix: str, bots: list[str]) -> str:
    """A started tournament whose matches wait in the queue (no worker runs here)."""
    for bot in bots:
        identity.register_bot(client, prefix, bot)
    spec = spec_from_dict({"name": "t", "bots": bots, "server": "127.0.0.1:9"})
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    lifecycle.start(client, prefix, tournament_id)
    return tournament_id


def started_by_a_dead_worker(client: redis.Redis, prefix: str, job: str) -> None:
    """What RQ writes as a worker takes a job and its work horse starts it, for a worker killed then
    (its registration gone): the job shows as started, in the started registry, and nowhere else."""
    queue = match_queue(client, prefix)
    client.lrem(queue.key, 0, job)
    found = Job.fetch(job, connection=client)
    with client.pipeline() as pipe:
        Execution.create(found, 90, pipeline=pipe, worker_name=f"{prefix}-gone")
        found.prepare_for_execution(f"{prefix}-gone", pipeline=pipe)
        pipe.execute()


def scheduled_for_a_retry(client: redis.Redis, prefix: str, job: str, due: datetime) -> None:
    """What RQ writes as a failed job is set to retry after a backoff (`Job.retry`)."""
    queue = match_queue(client, prefix)
    client.lrem(queue.key, 0, job)
    found = Job.fetch(job, connection=client)
    found.set_status(JobStatus.SCHEDULED)
    queue.schedule_job(found, due)


def test_a_due_retry_is_queued_at_once_and_a_later_one_left(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    queue = match_queue(client, prefix)
    queue.enqueue(play_match, "t", 9, prefix, job_id=f"{prefix}-queued")
    now = datetime.now(UTC)
    due = queue.enqueue_at(now - timedelta(seconds=1), play_match, "t", 0, prefix, job_id=f"{prefix}-0")
    later = queue.enqueue_at(now + timedelta(minutes=5), play_match, "t", 1, prefix, job_id=f"{prefix}-1")
    registry = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]

    assert release_due_retries(client, prefix) == [due.id]
    assert queued_ids(client, prefix) == [due.id, f"{prefix}-queued"]  # ahead of matches not tried yet
    assert registry.get_job_ids() == [later.id]
    assert release_due_retries(client, prefix) == []  # nothing twice


def test_reapers_racing_for_due_retries_queue_each_once(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    queue = match_queue(client, prefix)
    past = datetime.now(UTC) - timedelta(seconds=2)
    ids = [queue.enqueue_at(past, play_match, "t", i, prefix, job_id=f"{prefix}-{i}").id for i in range(40)]
    released: list[list[str]] = []
    go = threading.Barrier(4)

    def reaper() -> None:
        own = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
        go.wait()
        released.append(release_due_retries(own, prefix))
        own.close()

    threads = [threading.Thread(target=reaper) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    moved = [job for batch in released for job in batch]
    assert sorted(moved) == sorted(ids)  # each by exactly one of them
    assert sorted(queued_ids(client, prefix)) == sorted(ids)


def test_a_dead_workers_start_is_queued_again_once(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    tournament_id = tournament(client, prefix, ["a", "b"])
    job = job_id(prefix, tournament_id, 0)
    started_by_a_dead_worker(client, prefix, job)
    assert queued_ids(client, prefix) == []

    reaper = Reaper(client, prefix, interval=1)
    for _ in range(6):  # a sweep per reaper interval, the job never taken meanwhile (no worker runs)
        reaper.sweep()
    assert queued_ids(client, prefix) == [job]
    assert job not in StartedJobRegistry(queue=match_queue(client, prefix)).get_job_ids()


def test_a_queued_match_whose_queue_entry_was_lost_is_queued_again_once(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    """A Redis restart (or a worker killed as it took the job) can leave a job shown as queued that is in
    no list: seen so on two sweeps, it is queued again, once; a match still listed is left alone."""
    client, prefix = redis_prefix
    tournament_id = tournament(client, prefix, ["a", "b", "c"])
    lost = job_id(prefix, tournament_id, 1)
    client.lrem(match_queue(client, prefix).key, 0, lost)
    assert Job.fetch(lost, connection=client).get_status() == JobStatus.QUEUED
    before = queued_ids(client, prefix)

    reaper = Reaper(client, prefix, interval=1)
    reaper.sweep()
    assert queued_ids(client, prefix) == before  # once may be a queueing in progress
    for _ in range(4):
        reaper.sweep()
    after = queued_ids(client, prefix)
    assert after == [lost, *before]  # at the front, and the others untouched
    assert after.count(lost) == 1


def test_resume_queues_a_dead_workers_start_and_an_overdue_retry_once(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    tournament_id = tournament(client, prefix, ["a", "b", "c"])
    dead, retry, waiting = (job_id(prefix, tournament_id, i) for i in range(3))
    started_by_a_dead_worker(client, prefix, dead)
    scheduled_for_a_retry(client, prefix, retry, datetime.now(UTC) - timedelta(seconds=30))
    assert queued_ids(client, prefix) == [waiting]  # and no worker runs to pick the other two up

    assert lifecycle.resume(client, prefix, tournament_id) == 2
    queued = queued_ids(client, prefix)
    assert sorted(queued) == sorted([dead, retry, waiting]) and queued[-1] == waiting
    assert lifecycle.resume(client, prefix, tournament_id) == 0  # all three wait in the queue now


def test_resume_leaves_a_retry_not_due_yet(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    tournament_id = tournament(client, prefix, ["a", "b"])
    retry = job_id(prefix, tournament_id, 0)
    scheduled_for_a_retry(client, prefix, retry, datetime.now(UTC) + timedelta(minutes=5))
    assert lifecycle.resume(client, prefix, tournament_id) == 0
    assert queued_ids(client, prefix) == []


def test_rerun_failed_queues_a_match_whose_dead_worker_still_shows_it_started(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    tournament_id = tournament(client, prefix, ["a", "b"])
    job = job_id(prefix, tournament_id, 0)
    started_by_a_dead_worker(client, prefix, job)
    set_state(client, Keys(prefix, tournament_id), 0, MatchState.FAILED, "its worker died 5 times")

    began = time.monotonic()
    assert lifecycle.rerun_failed(client, prefix, tournament_id) == 1
    assert time.monotonic() - began < 5  # a dead worker's job is not waited for
    assert queued_ids(client, prefix) == [job]


def _finished(bots: list[str]) -> control_pb2.FinishedMatch:
    result = pb.MatchResult(bots=bots, totals=[500, 0], winners=[0], reason=pb.MATCH_END_TARGET_REACHED)
    return control_pb2.FinishedMatch(result=result, seed=1)


def test_progress_says_what_waits_and_gives_no_eta_while_nothing_runs(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    tournament_id = tournament(client, prefix, ["a", "b", "c"])
    keys = Keys(prefix, tournament_id)
    set_status(client, keys, TournamentStatus.RUNNING, started=time.time() - 600)
    assert record(client, keys, 0, _finished(["a", "b"]), b"")
    due = time.time() + 60
    set_state(
        client, keys, 1, MatchState.QUEUED, "FAILED_PRECONDITION: bot 'b' is not connected (will retry)"
    )
    client.hset(keys.retries, 1, due)  # as the job does when an attempt fails with retries left

    state = progress(client, prefix, tournament_id)
    assert state.retries == {1: pytest.approx(due)} and state.next_retry == pytest.approx(due)
    assert state.eta_s is None  # nothing runs: no ETA to grow while the tournament waits
    set_state(client, keys, 2, MatchState.RUNNING)
    assert progress(client, prefix, tournament_id).eta_s is not None
    assert not progress(client, prefix, tournament_id).only_failed_left

    set_state(client, keys, 1, MatchState.FAILED, "out of retries")
    set_state(client, keys, 2, MatchState.FAILED, "out of retries")
    state = progress(client, prefix, tournament_id)
    assert state.retries == {} and state.only_failed_left


def test_a_job_left_in_rqs_intermediate_list_by_a_worker_killed_taking_it_is_queued_again_once(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    """A worker killed between taking the job from the queue and starting it leaves the job in RQ's
    intermediate list (cleaned by RQ only every few minutes): seen so on two sweeps, it is queued again,
    once, and the stale entry goes."""
    client, prefix = redis_prefix
    tournament_id = tournament(client, prefix, ["a", "b", "c"])
    queue = match_queue(client, prefix)
    taken = job_id(prefix, tournament_id, 2)
    client.lrem(queue.key, 0, taken)
    client.lpush(queue.intermediate_queue_key, taken)  # where RQ's dequeue puts it (an LMOVE)
    before = queued_ids(client, prefix)

    reaper = Reaper(client, prefix, interval=1)
    reaper.sweep()
    assert queued_ids(client, prefix) == before  # once may be a worker taking it this very moment
    for _ in range(4):
        reaper.sweep()
    after = queued_ids(client, prefix)
    assert after == [taken, *before] and after.count(taken) == 1
    assert [text for text in client.lrange(queue.intermediate_queue_key, 0, -1)] == []
