"""Noticing matches whose worker died, queueing them again, and moving retries whose time has come.

A job holds a lease while it plays (`workers.jobs`). A match marked running
whose lease has expired lost its worker (SIGKILL, power cut, OOM): it is put
back at the front of the queue, where the next job attaches to it on the
match server if it is still being played there, gets its result if the
server still has it, or plays it again.

Workers run without RQ's scheduler, which one process runs under a lock
that nobody else takes for minutes once that process dies. Instead every
worker's reaper moves due retries from RQ's scheduled registry to the queue
every second, each claimed by removing it from the registry, so exactly one
reaper queues it. Every `uno-arena worker` runs a `Reaper`; `uno-arena
tournament resume` runs `reap` once.
"""

from __future__ import annotations

import logging
import threading
import time

import redis

from uno_arena.records.tournament import (
    Keys,
    MatchState,
    TournamentError,
    TournamentStatus,
    list_ids,
    load,
    set_state,
    states,
)
from uno_arena.workers.queue import Run, due_retries, enqueue, job_id, job_run, match_queue, release_due

log = logging.getLogger(__name__)

MAX_PLAYS = 5  # a match whose worker died this often is failed rather than tried again
RETRY_TICK_S = 1.0  # how often each reaper moves due retries

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
        log.warning("%s match %d failed: its worker died %d times", keys.tournament_id, index, plays,
                    extra=keys.log_ids(index))  # fmt: skip
        return
    spec = load(client, keys.prefix, keys.tournament_id).spec
    enqueue(client, keys.prefix, keys.tournament_id, spec, [index], force=True, at_front=True)
    log.warning("%s match %d lost its worker; queued again, at the front", keys.tournament_id, index,
                extra=keys.log_ids(index))  # fmt: skip


def orphans(client: redis.Redis, prefix: str) -> set[tuple[str, int]]:
    """Matches of running tournaments marked queued that nothing will run.

    A queued match's job is normally in the queue, waiting out a retry, or
    started by a live worker. A worker can die after taking the job and
    before taking the match's lease (even before starting it: its job then
    stays in RQ's intermediate list, which RQ cleans only every few minutes),
    and a Redis restart can lose the job's queue entry; either leaves a match
    that waits for ever. The queue's own entries are read once, so only the
    few matches not found there are looked at one by one; the caller judges
    a match only when it is found on two sweeps in a row (a job passes
    through the intermediate list in milliseconds).
    """
    listed = set(match_queue(client, prefix).get_job_ids())
    found = set()
    for tournament_id in list_ids(client, prefix):
        keys = Keys(prefix, tournament_id)
        if client.hget(keys.tournament, "status") != TournamentStatus.RUNNING.value.encode():
            continue
        for index, state in states(client, prefix, tournament_id).items():
            if state is not MatchState.QUEUED or job_id(prefix, tournament_id, index) in listed:
                continue
            if job_run(client, prefix, tournament_id, index, moving_stuck=True) in (Run.NONE, Run.ABANDONED):
                found.add((tournament_id, index))
    return found


def release_due_retries(client: redis.Redis, prefix: str) -> list[str]:
    """Queue (at the front) the retries whose backoff is over; return the job ids this call moved.

    Any number of processes may run this at once: each job is claimed by
    removing it from RQ's scheduled registry, which only one of them does.
    """
    queue = match_queue(client, prefix)
    released = []
    for job in due_retries(queue):
        if release_due(client, queue, job):
            released.append(job)
            log.info("job %s: its retry is due; queued", job)
    return released


class Reaper(threading.Thread):
    """A worker's housekeeping thread; errors are logged, never fatal.

    Every `tick` seconds it queues due retries; every `interval` seconds it
    `sweep`s: requeues matches whose lease expired (`reap`) and matches
    marked queued that nothing will run (`orphans` seen on two sweeps in a row: a
    worker died between taking the job and taking the lease, or a Redis
    restart lost the queue entry). After Redis was unreachable it waits two
    intervals (a lease's life) before judging leases again, so that live
    jobs can renew the leases that lapsed meanwhile.
    """

    def __init__(self, client: redis.Redis, prefix: str, interval: float, tick: float = RETRY_TICK_S) -> None:
        super().__init__(name="reaper", daemon=True)
        self.client, self.prefix, self.interval, self.tick = client, prefix, interval, min(tick, interval)
        self.stopped = threading.Event()
        self.suspects: set[tuple[str, int]] = set()
        self.calm_from = 0.0  # monotonic time from which leases may be judged
        self.trouble = False

    def run(self) -> None:
        next_sweep = time.monotonic() + self.interval
        while not self.stopped.wait(self.tick):
            try:
                release_due_retries(self.client, self.prefix)
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + self.interval
                    if time.monotonic() >= self.calm_from:
                        self.sweep()
                if self.trouble:
                    self.trouble = False
                    log.info("reaper: Redis answers again; judging leases from %.0f s on", 2 * self.interval)
            except redis.RedisError as error:
                if not self.trouble:
                    log.warning("reaper: %s", error)
                self.trouble = True
                self.calm_from = time.monotonic() + 2 * self.interval
                self.suspects.clear()

    def sweep(self) -> None:
        """One pass: requeue the matches of dead workers."""
        reap(self.client, self.prefix)
        stuck = orphans(self.client, self.prefix)
        for tournament_id, index in stuck & self.suspects:
            try:
                spec = load(self.client, self.prefix, tournament_id).spec
            except TournamentError as error:  # deleted meanwhile
                log.warning("reaper: %s", error)
                continue
            if enqueue(
                self.client, self.prefix, tournament_id, spec, [index], at_front=True, moving_stuck=True
            ):
                ids = Keys(self.prefix, tournament_id).log_ids(index)
                log.warning("%s match %d: nothing would run it (its worker died?); queued again",
                            tournament_id, index, extra=ids)  # fmt: skip
        self.suspects = stuck - self.suspects

    def stop(self) -> None:
        self.stopped.set()
