"""The RQ job: play one scheduled match on the match server and record it.

`play_match(tournament_id, index, prefix)` takes ids only and is idempotent:
a recorded match returns at once; a match still running on the server (its
last worker died) is attached to rather than played again; recording counts
it once whatever happens. While it plays, the job renews a lease in Redis so
that a worker killed mid-match is noticed (see `workers.reaper`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import redis
from rq import get_current_job

from uno_arena.leaderboard import board
from uno_arena.records.match import is_recorded, record
from uno_arena.records.spec import TournamentSpec
from uno_arena.records.tournament import (
    Keys,
    MatchState,
    TournamentError,
    TournamentStatus,
    load,
    scheduled_match,
    set_state,
)
from uno_arena.server import wire
from uno_arena.v1 import control_pb2, control_pb2_grpc
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers.settings import WorkerSettings

log = logging.getLogger(__name__)


class MatchFailed(RuntimeError):
    """The match could not be played (e.g. a bot not connected); RQ retries it if it can."""


def play_match(tournament_id: str, index: int, prefix: str) -> str:
    job = get_current_job()
    if job is None:
        raise RuntimeError("play_match runs as an RQ job")
    client: redis.Redis = job.connection
    keys = Keys(prefix, tournament_id)
    if is_recorded(client, keys, index):
        return "already recorded"
    try:
        tournament = load(client, prefix, tournament_id)
    except TournamentError:  # deleted from Redis meanwhile: nothing to play or record, nothing to retry
        log.warning("%s match %d: the tournament is gone", tournament_id, index)
        return "tournament gone"
    if tournament.status is TournamentStatus.CANCELLED:
        set_state(client, keys, index, MatchState.CANCELLED)
        return "tournament cancelled"
    settings = WorkerSettings.from_env()
    with _lease(client, keys, index, job.id, settings.lease_seconds):
        try:
            finished, log_bytes = _play(client, keys, index, tournament.spec, settings)
        except MatchFailed as error:
            retrying = bool(job.retries_left)
            state = MatchState.QUEUED if retrying else MatchState.FAILED
            set_state(client, keys, index, state, f"{error}{' (will retry)' if retrying else ''}")
            raise
        new = record(client, keys, index, finished, log_bytes)
    board.refresh(client, prefix, tournament_id)
    outcome = "recorded" if new else "already recorded"
    log.info("%s match %d: %s (%s)", tournament_id, index, outcome, finished.result.totals)
    return outcome


@contextmanager
def _lease(client: redis.Redis, keys: Keys, index: int, holder: str, seconds: float) -> Iterator[None]:
    """Hold the match's lease, renewed every third of its life, and mark the match running."""
    ttl = max(int(seconds * 1000), 1)
    with client.pipeline() as pipe:  # lease first: a match shown running always has one
        pipe.set(keys.lease(index), holder, px=ttl)
        pipe.hincrby(keys.attempts, index, 1)
        pipe.execute()
    set_state(client, keys, index, MatchState.RUNNING)
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(seconds / 3):
            try:
                client.set(keys.lease(index), holder, px=ttl)
            except redis.RedisError as error:  # the next renewal may get through
                log.warning("cannot renew the lease of match %d: %s", index, error)

    thread = threading.Thread(target=renew, name=f"lease-{index}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        client.delete(keys.lease(index))


def _play(client: redis.Redis, keys: Keys, index: int, spec: TournamentSpec,
          settings: WorkerSettings) -> tuple[control_pb2.FinishedMatch, bytes]:  # fmt: skip
    match = scheduled_match(client, keys.prefix, keys.tournament_id, index)
    deadlines = spec.deadlines
    request = control_pb2.PlayMatchRequest(
        match_id=keys.match_id(index),
        bots=list(match.bots),
        rules=wire.rules(spec.rules),
        seed=match.seed,
        decision_timeout_ms=deadlines.decision_ms,
        max_strikes=deadlines.max_strikes,
        disconnect_grace_ms=deadlines.disconnect_grace_ms,
        wait_for_bots_ms=deadlines.wait_for_bots_ms,
    )
    metadata = [("authorization", f"Bearer {settings.control_token}")]
    chunks: list[bytes] = []
    events = 0
    try:
        with grpc.insecure_channel(spec.server) as channel:
            stub = control_pb2_grpc.ControlServiceStub(channel)
            for progress in stub.PlayMatch(request, metadata=metadata):
                kind = progress.WhichOneof("kind")
                if kind == "log":
                    chunks.append(progress.log.SerializeToString())
                    events += len(progress.log.events)
                elif kind == "finished":
                    _check(progress.finished, events)
                    return progress.finished, b"".join(chunks)
    except grpc.RpcError as error:
        raise MatchFailed(f"{error.code().name}: {error.details()}") from None
    raise MatchFailed("the match server ended the stream without a result")


def _check(finished: control_pb2.FinishedMatch, events: int) -> None:
    if finished.result.reason == pb.MATCH_END_ABORTED:
        raise MatchFailed("the match server aborted the match (shutting down?)")
    if finished.event_count != events:
        raise MatchFailed(f"event log incomplete: {events} of {finished.event_count} events")
