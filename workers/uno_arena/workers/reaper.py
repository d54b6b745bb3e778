"""Noticing matches whose worker died, and queueing them again.

A job holds a lease while it plays (`workers.jobs`). A match marked running
whose lease has expired lost its worker (SIGKILL, power cut, OOM): it is put
back in the queue, where the next job attaches to it on the match server if
it is still being played there, or plays it again. Every `uno-arena worker`
runs this every few seconds; `uno-arena tournament resume` runs it once.
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.registry import ScheduledJobRegistry, StartedJobRegistry

from uno_arena.records.tournament import Keys, MatchState, TournamentStatus, list_ids, load, set_state, states
from uno_arena.workers.queue import enqueue, match_queue

log = logging.getLogger(__name__)

MAX_PLAYS = 5  # a match whose worker died this often is failed rather than tried again

# Claim a running match whose lease is gone, so that only one reaper requeues it.
_CLAIM = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= 'running' or redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


def reap(client: redis.Redis, prefix: str) -> list[tuple[str, int]]:
    """Requeue (or fail) the running matches of running tournaments that lost their worker."""
    reaped = []
    for tournament_id in list_ids(client, prefix):
        keys = Keys(prefix, tournament_id)
        if client.hget(keys.tournament, "status") != TournamentStatus.RUNNING.value.encode():
            continue
        for index, state in states(client, prefix, tournament_id).items():
            if state is MatchState.RUNNING and _claim(client, keys, index):
                _requeue(client, keys, index)
                reaped.append((tournament_id, index))
    return reaped


def _claim(client: redis.Redis, keys: Keys, index: int) -> bool:
    return bool(client.eval(_CLAIM, 2, keys.state, keys.lease(index), index, MatchState.QUEUED.value))


def _requeue(client: redis.Redis, keys: Keys, index: int) -> None:
    plays = int(client.hget(keys.attempts, index) or 0)
    if plays >= MAX_PLAYS:
        set_state(client, keys, index, MatchState.FAILED, f"its worker died {plays} times while playing it")
        log.warning("%s match %d failed: its worker died %d times", keys.tournament_id, index, plays)
        return
    spec = load(client, keys.prefix, keys.tournament_id).spec
    enqueue(client, keys.prefix, keys.tournament_id, spec, [index], force=True)
    log.warning("%s match %d lost its worker; queued again", keys.tournament_id, index)


# Requeue a match still marked queued whose job started but never took the lease.
_CLAIM_UNSTARTED = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= 'queued' or redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
return 1
"""


def stuck_starts(client: redis.Redis, prefix: str) -> set[tuple[str, int]]:
    """Matches whose RQ job has started but that are still queued and unleased.

    A live worker takes the lease within milliseconds of starting the job, so
    one seen like this twice, a lease-time apart, was started by a worker that
    died at once.
    """
    stuck = set()
    for job_id in StartedJobRegistry(queue=match_queue(client, prefix)).get_job_ids():
        try:
            job = Job.fetch(job_id, connection=client)
        except NoSuchJobError:
            continue
        if len(job.args) != 3 or job.args[2] != prefix:
            continue
        tournament_id, index = str(job.args[0]), int(job.args[1])
        keys = Keys(prefix, tournament_id)
        if client.eval(_CLAIM_UNSTARTED, 2, keys.state, keys.lease(index), index):
            stuck.add((tournament_id, index))
    return stuck


OVERDUE_S = 10  # RQ's scheduler moves a due retry within a second; one this late has no scheduler


def release_overdue_retries(client: redis.Redis, prefix: str, late_s: float = OVERDUE_S) -> list[str]:
    """Queue the retries whose backoff ended `late_s` ago and that still wait; return their job ids.

    RQ moves due retries with a scheduler that one worker runs under a lock; when that worker is
    killed, no other takes the lock until its own maintenance pass (about 10 minutes), and the
    tournament waits. A job queued twice (the scheduler came back meanwhile) is harmless: jobs
    are idempotent.
    """
    queue = match_queue(client, prefix)
    registry = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]  # rq leaves it unannotated
    released = []
    for job_id in registry.get_jobs_to_schedule(int(time.time() - late_s)):
        try:
            job = Job.fetch(job_id, connection=client)
        except NoSuchJobError:
            registry.remove(job_id)
            continue
        with client.pipeline() as pipe:
            queue.enqueue_job(job, pipeline=pipe)  # as RQ's own scheduler does with a due job
            registry.remove(job.id, pipeline=pipe)
            pipe.execute()
        released.append(job_id)
        log.warning("%s: its retry was overdue (no RQ scheduler running); queued", job.description)
    return released


class Reaper(threading.Thread):
    """Runs `reap` every `interval` seconds until stopped; errors are logged, never fatal.

    It also requeues matches whose job a worker started and died before the
    lease was taken (`stuck_starts` seen on two passes in a row), and retries
    left waiting by a dead RQ scheduler (`release_overdue_retries`).
    """

    def __init__(self, client: redis.Redis, prefix: str, interval: float) -> None:
        super().__init__(name="reaper", daemon=True)
        self.client, self.prefix, self.interval = client, prefix, interval
        self.stopped = threading.Event()
        self.suspects: set[tuple[str, int]] = set()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                reap(self.client, self.prefix)
                self._requeue_stuck_starts()
                release_overdue_retries(self.client, self.prefix)
            except redis.RedisError as error:
                log.warning("reaper: %s", error)

    def _requeue_stuck_starts(self) -> None:
        stuck = stuck_starts(self.client, self.prefix)
        for tournament_id, index in stuck & self.suspects:
            spec = load(self.client, self.prefix, tournament_id).spec
            enqueue(self.client, self.prefix, tournament_id, spec, [index], force=True)
            log.warning("%s match %d: its worker died as it started; queued again", tournament_id, index)
        self.suspects = stuck - self.suspects

    def stop(self) -> None:
        self.stopped.set()
