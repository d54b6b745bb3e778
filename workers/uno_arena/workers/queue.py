"""The match queue: one RQ job per scheduled match, never two at once, never two entries of one.

The job id is derived from the prefix, tournament and match index. Before a
match is queued, `job_run` says where its job really is: a job RQ shows as
queued, scheduled or started is left alone only if something will run it
(an entry in the queue, a retry not yet due, a live worker), so a match whose
worker died or whose retry nobody moved is queued again. RQ keeps its own
keys under `rq:` (queue `{prefix}.matches`); ours stay under the prefix.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import math
import re
import secrets
import time
from collections.abc import Iterable, Iterator

import redis
from rq import Queue, Retry
from rq.command import send_stop_job_command
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.executions import Execution, ExecutionRegistry
from rq.job import Job, JobStatus
from rq.registry import BaseRegistry, ScheduledJobRegistry, StartedJobRegistry
from rq.results import Result
from rq.worker import Worker

from uno_arena.records.spec import TournamentSpec
from uno_arena.records.tournament import Keys, MatchState, set_state
from uno_arena.workers.jobs import REFRESH_SUFFIX, play_match

log = logging.getLogger(__name__)

DECISIONS_PER_SEAT = 600  # per 500 points: well above what real matches take
QUEUE_SUFFIX = ".matches"
# A live worker takes a match's lease within milliseconds of starting its job; one started this
# long ago by a registered worker and still without a lease is taken for dead.
STARTED_GRACE_S = 10.0
QUEUEING_LOCK_MS = 10_000


def queue_name(prefix: str) -> str:
    return f"{prefix}{QUEUE_SUFFIX}"


def prefix_of(queue: str) -> str | None:
    """The key prefix whose matches a queue holds (None: not a match queue)."""
    return queue.removesuffix(QUEUE_SUFFIX) if queue.endswith(QUEUE_SUFFIX) else None


def match_queue(client: redis.Redis, prefix: str) -> Queue:
    return Queue(queue_name(prefix), connection=client)


def job_id(prefix: str, tournament_id: str, index: int) -> str:
    """The match's RQ job id: RQ allows only [A-Za-z0-9_-], so the parts are escaped, one to one.

    >>> job_id("uno-arena", "spring_2026.a", 3)
    'uno-arena__spring_u2026_da__3'
    """
    return f"{_escaped(prefix)}__{_escaped(tournament_id)}__{index}"


def _escaped(part: str) -> str:
    """`part` in RQ's alphabet: `_` starts an escape and is never doubled, so `__` can join parts."""
    return "".join(_ESCAPES.get(c) or (c if c.isascii() and (c.isalnum() or c == "-") else f"_x{ord(c):06x}")
                   for c in part)  # fmt: skip


_ESCAPES = {"_": "_u", ".": "_d", ":": "_c"}


def job_timeout(spec: TournamentSpec) -> int:
    """Seconds a match to the target may take if every bot used its whole deadline on each decision."""
    deadlines = spec.deadlines
    decisions = DECISIONS_PER_SEAT * spec.seats * math.ceil(spec.target / 500)
    waits = deadlines.wait_for_bots_ms + deadlines.disconnect_grace_ms * deadlines.max_strikes
    return math.ceil((decisions * deadlines.decision_ms + waits) / 1000) + 60


def retry(spec: TournamentSpec) -> Retry | None:
    """RQ's retry of a match's job: `attempts` counts tries, RQ's `max` the retries after the first."""
    if spec.retries.retries < 1:
        return None
    return Retry(max=spec.retries.retries, interval=list(spec.retries.backoff_s))


class Run(enum.Enum):
    """Where a match's RQ job is, as far as playing the match goes."""

    NONE = "none"  # no job, or one that ended (finished, failed, cancelled): nothing will play the match
    QUEUED = "queued"  # in the queue, or being taken from it by a worker
    SCHEDULED = "scheduled"  # waiting out a retry's backoff
    DUE = "due"  # a retry whose backoff is over, not moved to the queue yet
    STARTED = "started"  # a live worker runs it
    ABANDONED = "abandoned"  # shown as queued or started, but nothing will run it (its worker died)


def job_run(client: redis.Redis, prefix: str, tournament_id: str, index: int,
            grace_s: float = STARTED_GRACE_S, moving_stuck: bool = False) -> Run:  # fmt: skip
    """Where the match's job is. A started job counts as running while the match's lease is held, or
    for `grace_s` after it started if the worker that started it is registered with RQ. A job in RQ's
    intermediate list (taken from the queue by a worker, not started yet) counts as queued, unless
    `moving_stuck`: a caller that saw it there seconds ago knows its worker died taking it."""
    try:
        job = Job.fetch(job_id(prefix, tournament_id, index), connection=client)
    except NoSuchJobError:
        return Run.NONE
    status = job.get_status(refresh=False)
    queue = match_queue(client, prefix)
    if status == JobStatus.SCHEDULED:
        due = _scheduled_at(queue, job.id)
        if due is None:
            return Run.ABANDONED
        return Run.DUE if due <= time.time() else Run.SCHEDULED
    if status not in (JobStatus.QUEUED, JobStatus.STARTED, JobStatus.DEFERRED):
        return Run.NONE
    runs = _runs(client, queue, job.id)
    if status == JobStatus.STARTED or runs:
        keys = Keys(prefix, tournament_id)
        runs = runs or [(job.worker_name or "", job.started_at.timestamp() if job.started_at else 0.0)]
        alive = client.exists(keys.lease(index)) or any(
            _registered(client, worker) and time.time() - began < grace_s for worker, began in runs
        )
        return Run.STARTED if alive else Run.ABANDONED
    listed = _listed(client, queue, job.id) or (not moving_stuck and _taken(queue, job.id))
    return Run.QUEUED if listed else Run.ABANDONED


@contextlib.contextmanager
def _queueing(client: redis.Redis, keys: Keys, index: int) -> Iterator[bool]:
    """Whether this process may queue the match now: one at a time, so no two queue it twice."""
    token = secrets.token_hex(8)
    mine = bool(client.set(keys.queueing(index), token, nx=True, px=QUEUEING_LOCK_MS))
    try:
        yield mine
    finally:
        if mine:
            client.eval(_RELEASE, 1, keys.queueing(index), token)


_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end"


def enqueue(client: redis.Redis, prefix: str, tournament_id: str, spec: TournamentSpec,
            indices: Iterable[int], *, force: bool = False, at_front: bool = False,
            moving_stuck: bool = False) -> int:  # fmt: skip
    """Queue these matches, each at most once; return how many were queued.

    Left alone: matches done, and those whose job will run anyway: in the
    queue, waiting out a retry, or (unless `force`, for a caller that knows
    the worker is gone) started by a live worker. A retry whose time has
    come is moved to the queue now, with its retries left. A match whose job
    was abandoned (its worker died), or `force`d, goes to the front: the
    server may still hold its result, which it forgets after a while.
    `moving_stuck`: see `job_run` (the reaper's orphans).
    """
    keys, queue, queued = Keys(prefix, tournament_id), match_queue(client, prefix), 0
    for index in indices:
        identifier = job_id(prefix, tournament_id, index)
        with _queueing(client, keys, index) as mine:
            if not mine:
                continue  # another process is queueing it this very moment
            run = job_run(client, prefix, tournament_id, index, moving_stuck=moving_stuck)
            if run in (Run.QUEUED, Run.SCHEDULED) or (run is Run.STARTED and not force):
                continue
            if not set_state(client, keys, index, MatchState.QUEUED):
                continue  # recorded meanwhile
            client.hdel(keys.retries, index)
            if run is Run.DUE:
                queued += release_due(client, queue, identifier)
                continue
            _forget_run(client, queue, identifier)
            queue.enqueue(
                play_match,
                tournament_id,
                index,
                prefix,
                job_id=identifier,
                job_timeout=job_timeout(spec),
                retry=retry(spec),
                result_ttl=86_400,
                failure_ttl=7 * 86_400,
                description=f"{tournament_id} match {index}",
                at_front=at_front or run in (Run.ABANDONED, Run.STARTED),
            )
            queued += 1
    return queued


# --- RQ's bookkeeping ------------------------------------------------------------------------------
# Every read or write of RQ's keys outside RQ's own calls (`Queue.enqueue`, `Job.fetch` ...) is here,
# through RQ's public API (the registries, `Execution`, the intermediate queue) except where a docstring
# says why not. pyproject.toml pins the RQ releases this is tested with (tests/workers/test_rq_range.py).


def _scheduled_at(queue: Queue, job: str) -> float | None:
    """When a retry is due (unix seconds), or None if it is not in RQ's scheduled registry."""
    try:
        due = ScheduledJobRegistry(queue=queue).get_scheduled_time(job)  # type: ignore[no-untyped-call]
    except NoSuchJobError:
        return None
    return due.timestamp()


def due_retries(queue: Queue) -> list[str]:
    """The jobs in RQ's scheduled registry whose retry is due now."""
    registry = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]  # rq leaves it unannotated
    return registry.get_jobs_to_schedule()


def release_due(client: redis.Redis, queue: Queue, job: str) -> bool:
    """Move a retry from RQ's scheduled registry to the front of the queue, if this call claims it.

    The claim is the removal from the registry (a ZREM): of all the processes
    that try at once, exactly one removes the entry, and only that one queues
    the job. (RQ's scheduler does the same under a lock one process holds.)
    """
    if not ScheduledJobRegistry(queue=queue).remove(job):  # type: ignore[no-untyped-call]
        return False
    try:
        found = Job.fetch(job, connection=client)
    except NoSuchJobError:
        return False
    queue.enqueue_job(found, at_front=True)  # as RQ's scheduler does, ahead of matches not tried yet
    return True


def _runs(client: redis.Redis, queue: Queue, job: str) -> list[tuple[str, float]]:
    """(worker name, start as unix seconds) of each run of the job in RQ's started registry."""
    found = []
    # cleanup=False: RQ's cleanup of the registry would fail or retry the abandoned jobs we look for
    for entry_job, execution_id in StartedJobRegistry(queue=queue).get_job_and_execution_ids(cleanup=False):
        if entry_job != job:
            continue
        try:
            execution = Execution.fetch(execution_id, job, connection=client)
        except ValueError:  # its record expired: the worker stopped heartbeating long ago
            found.append(("", 0.0))
            continue
        found.append((execution.worker_name, execution.created_at.timestamp()))
    return found


def _listed(client: redis.Redis, queue: Queue, job: str) -> bool:
    """Whether the job waits in the queue. An LPOS on the queue's list: RQ's `Queue.get_job_position`
    does the same after asking Redis for its version, once per `Queue` object, so on every call here."""
    return client.lpos(queue.key, job) is not None


def _taken(queue: Queue, job: str) -> bool:
    """Whether a worker has taken the job from the queue and not started it yet (RQ's intermediate
    list, where RQ's dequeue moves it)."""
    return job in queue.intermediate_queue.get_job_ids()


def _registered(client: redis.Redis, worker: str) -> bool:
    """Whether an RQ worker of this name is registered and has not said it died.

    Read from the worker's hash directly: RQ's public read (`Worker.find_by_key`) builds a worker,
    which raises the client's socket timeout to RQ's dequeue timeout for every later command."""
    key = Worker.redis_worker_namespace_prefix + worker
    return bool(worker) and bool(client.exists(key)) and not client.hexists(key, "death")


def _forget_run(client: redis.Redis, queue: Queue, job: str) -> None:
    """Drop a dead run's traces (started registry, RQ's intermediate list), which RQ would otherwise
    clean up later by queueing the job a second time."""
    registry = StartedJobRegistry(queue=queue)
    with client.pipeline() as pipe:
        for entry_job, execution_id in registry.get_job_and_execution_ids(cleanup=False):
            if entry_job == job:
                registry.remove_execution(Execution(execution_id, job, client), pipeline=pipe)
        pipe.execute()
    taken = queue.intermediate_queue
    for _ in range(taken.get_job_ids().count(job)):
        taken.remove(job)


def _registries(queue: Queue) -> list[BaseRegistry]:
    """Every registry RQ keeps for the queue (sorted sets of job ids; the started one's members are
    `JOB:EXECUTION`)."""
    return [queue.started_job_registry, queue.finished_job_registry, queue.failed_job_registry,
            queue.deferred_job_registry, queue.ready_job_registry, queue.scheduled_job_registry,
            queue.canceled_job_registry]  # fmt: skip


def tournament_jobs(client: redis.Redis, prefix: str, tournament_id: str,
                    indices: Iterable[int]) -> list[str]:  # fmt: skip
    """The ids of every RQ job of the tournament that RQ still knows of: its matches' jobs
    (`job_id`) and the leaderboard refreshes they queued (`{job id}__board`), found by their job hashes
    and in the queue, the list of jobs being taken from it and every registry of it. Job ids escape the
    tournament id one to one (`job_id`), so no other tournament's job has these ids."""
    queue = match_queue(client, prefix)
    stem = re.escape(f"{_escaped(prefix)}__{_escaped(tournament_id)}__")
    mine = re.compile(rf"{stem}\d+(?:{REFRESH_SUFFIX})?")
    candidates = [f"{job_id(prefix, tournament_id, i)}{end}" for i in indices for end in ("", REFRESH_SUFFIX)]
    with client.pipeline(transaction=False) as pipe:
        for candidate in candidates:
            pipe.exists(Job.key_for(candidate))
        found = {job for job, present in zip(candidates, pipe.execute(), strict=True) if present}
    listed = [*queue.get_job_ids(), *queue.intermediate_queue.get_job_ids()]
    for registry in _registries(queue):
        members: list[bytes] = client.zrange(registry.key, 0, -1)  # type: ignore[assignment]
        listed += [member.decode().partition(":")[0] for member in members]  # started: JOB:EXECUTION
    found.update(job for job in listed if mine.fullmatch(job))
    return sorted(found)


def stop_started(client: redis.Redis, jobs: Iterable[str]) -> list[str]:
    """Ask the live workers running any of these jobs to stop them (RQ's stop-job command: the work horse
    is killed, the job filed as stopped); the ids of the jobs asked."""
    asked = []
    for job in jobs:
        try:
            if not still_started(client, [job]):
                continue
            send_stop_job_command(client, job)
        except (NoSuchJobError, InvalidJobOperation):  # ended meanwhile
            continue
        asked.append(job)
    return asked


_WAITING = (JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED)


def pending_jobs(client: redis.Redis, jobs: Iterable[str]) -> list[str]:
    """Those of the jobs that still write to their tournament: any job a live worker runs now (a match
    job is started from before its result is recorded until after it has queued the leaderboard's
    refresh), and a leaderboard refresh waiting to run (queued, deferred, or waiting out a retry). A
    match job merely queued is left out: its tournament is running (which counts by itself), or it
    finds its match recorded or the tournament cancelled and plays nothing."""
    wanted = sorted(set(jobs))
    found = Job.fetch_many(wanted, connection=client)
    waiting = [job.id for job in found if job is not None and job.id.endswith(REFRESH_SUFFIX)
               and job.get_status(refresh=False) in _WAITING]  # fmt: skip
    return sorted({*waiting, *still_started(client, wanted)})


def not_started(client: redis.Redis, jobs: Iterable[str]) -> list[str]:
    """Those of the jobs waiting to run: queued (or being taken from the queue), deferred, or waiting out
    a retry."""
    found = Job.fetch_many(sorted(set(jobs)), connection=client)
    return [job.id for job in found if job is not None and job.get_status(refresh=False) in _WAITING]


def still_started(client: redis.Redis, jobs: Iterable[str]) -> list[str]:
    """Those of the jobs a live worker still runs (status started, its worker registered)."""
    running = []
    for job in jobs:
        try:
            found = Job.fetch(job, connection=client)
        except NoSuchJobError:
            continue
        worker = found.worker_name or ""
        if found.get_status(refresh=False) == JobStatus.STARTED and _registered(client, worker):
            running.append(job)
    return running


def remove_jobs(client: redis.Redis, prefix: str, jobs: Iterable[str]) -> None:
    """Delete the jobs and every trace of them: out of the queue, the list of jobs being taken, every
    registry; their hashes, results, dependents, dependencies, executions (and each execution's place in
    its worker's index). RQ's `Job.delete` does most of it for a job whose hash is left; the rest is done
    by key name, for entries that outlived their job's hash."""
    queue = match_queue(client, prefix)
    wanted = set(jobs)
    for job in sorted(wanted):
        # ValueError: an execution of it whose record expired (RQ's delete stops there); what it left is
        # removed below by key name
        with contextlib.suppress(NoSuchJobError, ValueError):
            Job.fetch(job, connection=client).delete(remove_from_queue=True)
    started = StartedJobRegistry(queue=queue)
    runs = [(job, run) for job, run in started.get_job_and_execution_ids(cleanup=False) if job in wanted]
    for job in wanted:
        runs += [(job, run) for run in ExecutionRegistry(job, client).get_execution_ids()]
    with client.pipeline(transaction=False) as pipe:
        for job, run in runs:
            execution = Execution(run, job, client)
            pipe.hget(execution.key, "worker_name")
        workers = pipe.execute()
    with client.pipeline(transaction=False) as pipe:
        for (job, run), worker in zip(runs, workers, strict=True):
            execution = Execution(run, job, client, worker.decode() if isinstance(worker, bytes) else "")
            pipe.zrem(started.key, execution.composite_key)
            pipe.delete(execution.key)
            if execution.worker_name:
                pipe.srem(execution.worker_executions_key, execution.composite_key)
        for job in wanted:
            pipe.lrem(queue.key, 0, job)
            pipe.lrem(queue.intermediate_queue.key, 0, job)
            for registry in _registries(queue):
                pipe.zrem(registry.key, job)
            shell = Job(job, connection=client)
            results: str = Result.get_key(job)  # type: ignore[no-untyped-call]
            pipe.delete(shell.key, shell.dependents_key, shell.dependencies_key, results,
                        ExecutionRegistry(job, client).key)  # fmt: skip
        pipe.execute()


def delete_prefix(client: redis.Redis, prefix: str) -> None:
    """Delete every key under `prefix`, and RQ's keys for its queue, jobs and workers (all named after it).

    By RQ's key names (docs/redis.md): RQ has no call that deletes a queue with its jobs, registries
    and workers' keys."""
    keys = [
        *client.scan_iter(match=f"{prefix}:*", count=1000),
        *client.scan_iter(match=f"rq:*{prefix}*", count=1000),
    ]
    if keys:
        client.delete(*keys)
    for shared in ("rq:queues", "rq:workers"):
        mine = [m for m in client.smembers(shared) if prefix.encode() in m]
        if mine:
            client.srem(shared, *mine)
