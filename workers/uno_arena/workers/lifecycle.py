"""What an organiser does to a tournament: create, start, cancel, resume, rerun failed matches.

Progress (done, ETA) is a read of the tournament record: `uno_arena.records.tournament.progress`.
"""

from __future__ import annotations

import contextlib
import time

import redis
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job

from uno_arena.records import identity
from uno_arena.records.spec import SpecError, TournamentSpec
from uno_arena.records.tournament import (
    Keys,
    MatchState,
    TournamentError,
    TournamentStatus,
    create,
    load,
    set_state,
    set_status,
    states,
)
from uno_arena.workers.queue import Run, enqueue, job_id, job_run
from uno_arena.workers.reaper import reap
from uno_arena.workers.schedule import schedule


def check_bots(client: redis.Redis, prefix: str, spec: TournamentSpec) -> None:
    """Refuse a spec naming a bot that is not registered."""
    with client.pipeline(transaction=False) as pipe:
        for bot in spec.bots:
            pipe.exists(identity.bot_key(prefix, bot))
        known = pipe.execute()
    for bot, exists in zip(spec.bots, known, strict=True):
        if not exists:
            raise SpecError(f"bots: unknown bot {bot!r} (register it: uno-arena bot register {bot})")


def create_checked(
    client: redis.Redis, prefix: str, spec: TournamentSpec, tournament_id: str | None = None
) -> str:
    check_bots(client, prefix, spec)
    matches = schedule(spec.bots, spec.seats, spec.cycles, spec.seed, spec.rules)
    return create(client, prefix, spec, matches, tournament_id)


def start(client: redis.Redis, prefix: str, tournament_id: str) -> int:
    """Queue every match of a created tournament; return how many."""
    tournament = load(client, prefix, tournament_id)
    if tournament.status is not TournamentStatus.CREATED:
        raise TournamentError(f"tournament {tournament_id!r} is {tournament.status}; `resume` continues it")
    set_status(client, Keys(prefix, tournament_id), TournamentStatus.RUNNING, started=time.time())
    return enqueue(client, prefix, tournament_id, tournament.spec, range(tournament.matches))


def cancel(client: redis.Redis, prefix: str, tournament_id: str) -> int:
    """Stop queueing: waiting matches are cancelled (running ones finish and count). Returns how many."""
    tournament = load(client, prefix, tournament_id)
    if tournament.status is TournamentStatus.FINISHED:
        raise TournamentError(f"tournament {tournament_id!r} is already finished")
    keys = Keys(prefix, tournament_id)
    set_status(client, keys, TournamentStatus.CANCELLED)
    cancelled = 0
    for index, state in states(client, prefix, tournament_id).items():
        if state in (MatchState.SCHEDULED, MatchState.QUEUED):
            _cancel_job(client, job_id(prefix, tournament_id, index))
            cancelled += set_state(client, keys, index, MatchState.CANCELLED)
    return cancelled


def _cancel_job(client: redis.Redis, job: str) -> None:
    with contextlib.suppress(NoSuchJobError, InvalidJobOperation):
        Job.fetch(job, connection=client).cancel()


def resume(client: redis.Redis, prefix: str, tournament_id: str) -> int:
    """Queue again whatever waits with nothing to play it; return how many.

    That is: cancelled matches, matches whose worker died (running ones whose
    lease expired, jobs a dead worker had started), retries whose time has
    passed, and queued matches whose job was lost. Matches done, failed,
    running, in the queue or waiting out a retry's backoff are left alone.
    """
    tournament = load(client, prefix, tournament_id)
    keys = Keys(prefix, tournament_id)
    if tournament.status is TournamentStatus.FINISHED:
        return 0
    started = {} if tournament.started else {"started": time.time()}
    set_status(client, keys, TournamentStatus.RUNNING, **started)
    reap(client, prefix)
    pending = [i for i, s in states(client, prefix, tournament_id).items()
               if s in (MatchState.SCHEDULED, MatchState.QUEUED, MatchState.CANCELLED)]  # fmt: skip
    return enqueue(client, prefix, tournament_id, tournament.spec, pending)


def rerun_failed(client: redis.Redis, prefix: str, tournament_id: str, settle_s: float = 10) -> int:
    """Queue the failed matches again; return how many.

    A job marks its match failed just before RQ files the job as failed, so
    a job still running on a live worker is given up to `settle_s` seconds to
    settle. One that a dead worker had started is queued at once.
    """
    tournament = load(client, prefix, tournament_id)
    failed = [i for i, s in states(client, prefix, tournament_id).items() if s is MatchState.FAILED]
    if failed and tournament.status is not TournamentStatus.RUNNING:
        set_status(client, Keys(prefix, tournament_id), TournamentStatus.RUNNING)
    deadline = time.monotonic() + settle_s
    for index in failed:
        while job_run(client, prefix, tournament_id, index) is Run.STARTED and time.monotonic() < deadline:
            time.sleep(0.05)
    return enqueue(client, prefix, tournament_id, tournament.spec, failed)
