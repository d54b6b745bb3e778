"""The leaderboard's RQ job: take a tournament's new results into its stored tables.

A match job (`uno_arena.workers.jobs`) queues `refresh` by its name, `REFRESH_JOB`, on its own queue
once it has recorded its match, so any worker runs it and the workers import nothing of the
leaderboard (tests/test_layers.py). It is idempotent and cheap to run often: `board.refresh` marks the
tournament, takes in whatever its results list holds past the table's cursor, and returns at once when
another job holds the table's lock (that job then takes the marked results in). So a refresh that runs
twice, or late, or never (its worker died: the next one of the tournament, or `uno-arena leaderboard
--refresh`, takes the results in) leaves the table equal to the full recomputation.
"""

from __future__ import annotations

from rq import get_current_job

from uno_arena.leaderboard import board
from uno_arena.records.outage import patiently

REFRESH_JOB = "uno_arena.leaderboard.jobs.refresh"  # what the match job queues (a test holds it to `refresh`)


def refresh(prefix: str, tournament_id: str, redis_wait_s: float) -> str:
    """Take the tournament's new results into its table and the overall one, waiting out Redis for up to
    `redis_wait_s` (the worker's `--redis-wait`)."""
    job = get_current_job()
    if job is None:
        raise RuntimeError("refresh runs as an RQ job (else call board.refresh)")
    patiently(lambda: board.refresh(job.connection, prefix, tournament_id),
              f"{tournament_id}: refreshing the leaderboard", redis_wait_s)  # fmt: skip
    return "refreshed"
