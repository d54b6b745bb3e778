"""Deleting a tournament: every key it owns (`uno_arena.records.owned`) and every RQ job of it
(`uno-arena tournament delete`).

A tournament being played is not deleted unless forced: its status is `running`, or a match of it is
still being played (a cancelled tournament plays its running matches out), or RQ jobs of it still write
to it: a job a live worker runs (a match job runs on for a moment after its match is recorded, which
can finish the tournament, and queues the leaderboard's refresh) or a leaderboard refresh waiting to run.
An unforced deletion waits for those jobs, up to `JOBS_WAIT_S`, and refuses if they have not ended.
Every write of a job to a tournament checks, in the same Redis script or transaction, that the
tournament is still there, so a job that outlives a deletion re-creates none of its keys.

Forced, it is first cancelled (a job that starts now finds it so and plays nothing), the workers
playing its matches are told to stop them (RQ's stop-job command kills the work horse; the match server
plays such a match to its end and forgets it, and nothing records it), and the deletion waits for them,
up to `STOP_WAIT_S`.

The jobs waiting to run go first (so that no worker starts one, e.g. the worker a stopped job freed),
then the deletion waits for any job of it still running. Then the jobs go (queued, scheduled for a
retry, started, finished, failed, cancelled: the job hashes and every registry entry,
`workers.queue.remove_jobs`), then the keys, the tournament's id out of the
prefix's index first, so that nothing lists it while its keys go. A job that raced the deletion (it
wrote a key or filed a job after they were read) is caught by a second pass. The match queue itself is
the prefix's, shared by every tournament (`{prefix}.matches`), so `rq:queues` is left alone.

The leaderboard over every tournament still counts the deleted one's matches until it is rebuilt: the
CLI rebuilds it (the workers do not import the leaderboard).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import redis

from uno_arena.records.owned import KeyRole, OwnedKey, existing, match_indices, owned_keys
from uno_arena.records.tournament import (
    Keys,
    TournamentError,
    TournamentStatus,
    being_played,
    check_id,
    index_key,
    set_status,
)
from uno_arena.workers.queue import (
    not_started,
    pending_jobs,
    remove_jobs,
    still_started,
    stop_started,
    tournament_jobs,
)

log = logging.getLogger(__name__)

STOP_WAIT_S = 15.0  # how long a forced deletion waits for the workers to stop its running matches
JOBS_WAIT_S = 15.0  # how long an unforced one waits for its jobs still running or queued to write to it
DELETE_BATCH = 500  # keys deleted in one command


class StillRunning(TournamentError):
    """A tournament being played, which only a forced deletion deletes."""


@dataclass(slots=True)
class Removal:
    """What a deletion removed (or, for a refused one, would have had to stop)."""

    tournament_id: str
    keys: list[OwnedKey] = field(default_factory=list)  # the keys deleted
    jobs: list[str] = field(default_factory=list)  # the RQ job ids removed
    stopped: list[str] = field(default_factory=list)  # jobs a live worker was running, told to stop
    unstopped: list[str] = field(default_factory=list)  # jobs still running when the wait for them ended
    listed: bool = False  # whether it was in the prefix's index

    def counts(self) -> dict[str, int]:
        """Keys removed by what they held (`owned.KeyRole`), in that order."""
        return {kind.value: n for kind in KeyRole if (n := sum(key.kind is kind for key in self.keys))}


def delete_tournament(client: redis.Redis, prefix: str, tournament_id: str, force: bool = False,
                      stop_wait_s: float = STOP_WAIT_S,
                      jobs_wait_s: float = JOBS_WAIT_S) -> Removal:  # fmt: skip
    """Delete every key and RQ job of the tournament. TournamentError if there is nothing of it (or the
    id is malformed); StillRunning if it is being played and not `force` (unforced, it first waits up to
    `jobs_wait_s` for its jobs that still write to it: `pending_jobs`)."""
    check_id(tournament_id)
    keys = Keys(prefix, tournament_id)
    removal = Removal(tournament_id, listed=client.zscore(index_key(prefix), tournament_id) is not None)
    indices = match_indices(client, prefix, tournament_id)  # read once: its record goes in the first pass
    every_key = owned_keys(prefix, tournament_id, indices)
    owned = existing(client, every_key)
    jobs = tournament_jobs(client, prefix, tournament_id, indices)
    if not removal.listed and not owned and not jobs:
        raise TournamentError(f"no tournament {tournament_id!r} (see `uno-arena tournament list`)")
    reason = being_played(client, prefix, tournament_id)
    if reason is not None and not force:
        raise StillRunning(f"tournament {tournament_id!r} is being played: {reason}. Cancel it "
                           f"(`uno-arena tournament cancel {tournament_id}`) and let its running matches "
                           "end, or delete it with --force, which stops them")  # fmt: skip
    if reason is None and not force:
        pending = _wait_for_jobs(client, prefix, tournament_id, indices, jobs_wait_s)
        if pending:
            jobs_left = _rq_jobs(len(pending))
            raise StillRunning(f"tournament {tournament_id!r} is being played: {jobs_left} of it still "
                               f"running or waiting to run after {jobs_wait_s:g} s "
                               f"({', '.join(pending[:5])}{', ...' if len(pending) > 5 else ''}). Let the "
                               "workers run them (is one running? `uno-arena worker health`), or delete it "
                               "with --force, which stops and removes them")  # fmt: skip
    if reason is not None and client.exists(keys.tournament):
        set_status(client, keys, TournamentStatus.CANCELLED)  # a job starting now plays nothing
    # No job of it may start from now on: those waiting to run (queued, being taken from the queue,
    # waiting out a retry) go first, before a worker freed by a stopped job takes the next. One a worker
    # took meanwhile finds the tournament cancelled or gone, plays nothing and ends at once; it is waited
    # for with the stopped ones, so that RQ files it before its traces are removed.
    waiting_to_run = not_started(client, jobs)
    remove_jobs(client, prefix, waiting_to_run)
    removal.jobs = waiting_to_run
    if reason is not None:
        removal.stopped = stop_started(client, jobs)
    deadline = time.monotonic() + stop_wait_s
    running = still_started(client, tournament_jobs(client, prefix, tournament_id, indices))
    while running and time.monotonic() < deadline:
        time.sleep(0.1)  # a poll of the workers' progress, bounded by the deadline
        running = still_started(client, tournament_jobs(client, prefix, tournament_id, indices))
    removal.unstopped = running
    if running:
        log.warning("tournament %s: %d jobs still running after %g s; deleting anyway: %s", tournament_id,
                    len(running), stop_wait_s, ", ".join(running), extra=keys.log_ids())  # fmt: skip
    for _ in range(2):  # the second pass: whatever a job raced in after the first read
        client.zrem(index_key(prefix), tournament_id)
        jobs = tournament_jobs(client, prefix, tournament_id, indices)
        remove_jobs(client, prefix, jobs)
        owned = existing(client, every_key)
        names = [key.name for key in owned]
        for start in range(0, len(names), DELETE_BATCH):
            client.delete(*names[start : start + DELETE_BATCH])
        removal.jobs = sorted({*removal.jobs, *jobs})
        removed = {key.name for key in removal.keys}
        removal.keys += [key for key in owned if key.name not in removed]
    log.info("tournament %s deleted: %d keys, %d RQ jobs", tournament_id, len(removal.keys),
             len(removal.jobs), extra=keys.log_ids())  # fmt: skip
    return removal


def _wait_for_jobs(client: redis.Redis, prefix: str, tournament_id: str, indices: list[int],
                   wait_s: float) -> list[str]:  # fmt: skip
    """Wait up to `wait_s` for the tournament's jobs that still write to it (`pending_jobs`) to end; those
    left (re-read each time: a match job ending queues a refresh)."""
    deadline = time.monotonic() + wait_s
    while True:
        pending = pending_jobs(client, tournament_jobs(client, prefix, tournament_id, indices))
        if not pending or time.monotonic() >= deadline:
            return pending
        time.sleep(0.2)  # a poll of the workers' progress, bounded by the deadline


def _rq_jobs(count: int) -> str:
    return f"{count} RQ job{'s' if count != 1 else ''}"
