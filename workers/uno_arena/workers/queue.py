"""The match queue: one RQ job per scheduled match, never two at once.

The job id is derived from the prefix, tournament and match index, and a
match whose job is waiting or running is not queued again. RQ keeps its own
keys under `rq:` (queue `{prefix}.matches`); ours stay under the prefix.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import redis
from rq import Queue, Retry
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from uno_arena.records.spec import TournamentSpec
from uno_arena.records.tournament import Keys, MatchState, set_state
from uno_arena.workers.jobs import play_match

_WAITING = {JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED}
DECISIONS_PER_SEAT = 600  # per 500 points: well above what real matches take


def queue_name(prefix: str) -> str:
    return f"{prefix}.matches"


def match_queue(client: redis.Redis, prefix: str) -> Queue:
    return Queue(queue_name(prefix), connection=client)


def job_id(prefix: str, tournament_id: str, index: int) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{prefix}-{tournament_id}-{index}")


def job_timeout(spec: TournamentSpec) -> int:
    """Seconds a match to the target may take if every bot used its whole deadline on each decision."""
    deadlines = spec.deadlines
    decisions = DECISIONS_PER_SEAT * spec.seats * math.ceil(spec.target / 500)
    waits = deadlines.wait_for_bots_ms + deadlines.disconnect_grace_ms * deadlines.max_strikes
    return math.ceil((decisions * deadlines.decision_ms + waits) / 1000) + 60


def retry(spec: TournamentSpec) -> Retry | None:
    if not spec.retries.attempts:
        return None
    return Retry(max=spec.retries.attempts, interval=list(spec.retries.backoff_s))


def waiting(client: redis.Redis, prefix: str, tournament_id: str, index: int) -> bool:
    """Whether the match's job is queued, running or scheduled for a retry."""
    try:
        job = Job.fetch(job_id(prefix, tournament_id, index), connection=client)
    except NoSuchJobError:
        return False
    return job.get_status() in _WAITING


def enqueue(client: redis.Redis, prefix: str, tournament_id: str, spec: TournamentSpec,
            indices: Iterable[int], *, force: bool = False) -> int:  # fmt: skip
    """Queue these matches (not those done, nor unless `force` those whose job waits or runs).

    `force` is for a match whose worker died: RQ still shows its job as started.
    """
    keys, queue, queued = Keys(prefix, tournament_id), match_queue(client, prefix), 0
    for index in indices:
        if not force and waiting(client, prefix, tournament_id, index):
            continue
        if not set_state(client, keys, index, MatchState.QUEUED):
            continue  # recorded meanwhile
        queue.enqueue(
            play_match,
            tournament_id,
            index,
            prefix,
            job_id=job_id(prefix, tournament_id, index),
            job_timeout=job_timeout(spec),
            retry=retry(spec),
            result_ttl=86_400,
            failure_ttl=7 * 86_400,
            description=f"{tournament_id} match {index}",
        )
        queued += 1
    return queued


def delete_prefix(client: redis.Redis, prefix: str) -> None:
    """Delete every key under `prefix`, and RQ's keys for its queue, jobs and workers (all named after it)."""
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
