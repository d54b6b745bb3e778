"""The RQ job: play one scheduled match on the match server and record it.

`play_match(tournament_id, index, prefix)` takes ids only and is idempotent:
a recorded match returns at once; a match still running on the server (its
last worker died) is attached to rather than played again; recording counts
it once whatever happens. While it plays, the job holds a lease in Redis so
that a worker killed mid-match is noticed (see `workers.reaper`), and a
second copy of the job finds the match taken and leaves it.

What the server sends back is checked against the schedule (seats, seed,
rules): a match id the server knows as some other match is never recorded.
Outages are waited out rather than counted as failures: Redis (every write,
for up to `redis_wait_s`) and the match server (`server_wait_s`: a server
that is down, restarting or aborted the match as it shut down is waited for,
then asked again for the same match id).

While it plays, the job also follows the match's public events into its live
feed for the web view (`workers.live`), with each fault its PlayMatch stream
reports; that never delays or fails the match.

Once the match is recorded, the job queues the leaderboard's refresh (`REFRESH_JOB`, a job of its own)
at the front of its queue, by name: the workers import nothing of the leaderboard, which reads the
records.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

import grpc
import redis
from rq import Queue, get_current_job
from rq.job import Job

from uno_arena.records.live import LiveFeed
from uno_arena.records.match import is_recorded, record
from uno_arena.records.outage import patiently, prompt_client
from uno_arena.records.pool import PoolKeys, place, set_aside
from uno_arena.records.spec import TournamentSpec
from uno_arena.records.tournament import (
    Keys,
    MatchState,
    ScheduledMatch,
    TournamentError,
    TournamentStatus,
    load,
    scheduled_match,
    set_state,
)
from uno_arena.rules import ConfigError
from uno_arena.v1 import channels, codec, control_pb2, control_pb2_grpc
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.channels import ClientTLS, TLSError
from uno_arena.workers.live import Follower
from uno_arena.workers.metrics import job_report
from uno_arena.workers.settings import WorkerSettings

log = logging.getLogger(__name__)

T = TypeVar("T")
# The leaderboard's job that takes a tournament's new results into its tables, by its RQ name: RQ
# imports it in the worker that runs it (an organiser's install has it; tests/test_layers.py checks the name).
REFRESH_JOB = "uno_arena.leaderboard.jobs.refresh"
MATCH_JOB = "uno_arena.workers.jobs.play_match"  # `play_match`'s RQ name: its jobs' `func_name`
REFRESH_SUFFIX = "__board"  # a refresh's job id: its match job's and this (`workers.queue` finds them by it)
FIRST_SERVER_PAUSE_S = 0.5
LONGEST_SERVER_PAUSE_S = 5.0
END_FEED_WAIT_S = 10.0  # how long ending a live feed waits out Redis; the result is recorded by then


class Waiting(Protocol):
    """A job's `waiting`: an action on Redis, tried again while Redis is away (for `redis_wait_s`)."""

    def __call__(self, action: Callable[[], T], what: str) -> T: ...


class MatchFailed(RuntimeError):
    """The match could not be played (e.g. a bot not connected); RQ retries it if it can.

    An expected failure with a reason: the worker logs it as one line (`match_id` and the reason recorded,
    `retrying` or not), not as a traceback.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.match_id = ""
        self.tournament_id = ""
        self.reason = message


class _ServerGone(Exception):
    """The server is down or restarting (UNAVAILABLE), or aborted the match as it shut down."""


def play_match(tournament_id: str, index: int, prefix: str) -> str:
    job = get_current_job()
    if job is None:
        raise RuntimeError("play_match runs as an RQ job")
    # A client that fails at once when Redis is away (the worker's waits for ever): this job waits for
    # Redis itself, for at most `redis_wait_s`, and then fails its attempt.
    client = prompt_client(job.connection)
    try:
        return _play_match(client, tournament_id, index, prefix, job)
    finally:
        client.connection_pool.disconnect()


def _play_match(client: redis.Redis, tournament_id: str, index: int, prefix: str, job: Job) -> str:
    settings = WorkerSettings.from_env()
    keys = Keys(prefix, tournament_id)
    ids = keys.log_ids(index)  # the fields of each line about the match (`--log-format json`)

    report = job_report()  # what the worker's metrics count of this job

    def waited_for_redis(seconds: float) -> None:
        report.redis_wait_s += seconds

    def waiting(action: Callable[[], T], what: str) -> T:
        return patiently(action, f"{tournament_id} match {index}: {what}", settings.redis_wait_s, ids,
                         waited_for_redis)  # fmt: skip

    if waiting(lambda: is_recorded(client, keys, index), "reading its record"):
        return "already recorded"
    try:
        tournament = waiting(lambda: load(client, prefix, tournament_id), "reading the tournament")
    except TournamentError:  # deleted from Redis meanwhile: nothing to play or record, nothing to retry
        log.warning("%s match %d: the tournament is gone", tournament_id, index, extra=ids)
        return "tournament gone"
    if tournament.status is TournamentStatus.CANCELLED:
        waiting(lambda: set_state(client, keys, index, MatchState.CANCELLED), "marking it cancelled")
        return "tournament cancelled"
    match = waiting(lambda: scheduled_match(client, prefix, tournament_id, index), "reading the schedule")
    lease = Lease(client, keys, index, settings.lease_seconds)
    try:
        taken = waiting(lease.take, "taking its lease")
    except TournamentError:  # deleted since it was read: nothing to play or record, nothing to retry
        log.warning("%s match %d: the tournament is gone", tournament_id, index, extra=ids)
        return "tournament gone"
    if not taken:
        log.info("%s match %d: another worker is playing it", tournament_id, index, extra=ids)
        return "played by another worker"
    feed = LiveFeed(client, keys, index, match.bots)
    follower = Follower(feed, None, settings.control_token, settings.tls)
    with lease.kept():
        follower.start()
        try:
            try:
                if tournament.spec.pool:
                    finished, log_bytes = _play_on_pool(client, keys, index, match, tournament.spec, settings,
                                                        follower, waiting)  # fmt: skip
                else:
                    follower.follow(tournament.spec.server)
                    finished, log_bytes = _play(keys, index, match, tournament.spec, settings, follower.fault)
            except MatchFailed as error:
                retrying = bool(job.retries_left)
                due = time.time() + job.get_retry_interval() if retrying else None
                reason = f"{error}{' (will retry)' if retrying else ''}"
                error.match_id, error.reason = keys.match_id(index), reason  # for the worker's log line
                error.tournament_id = tournament_id
                waiting(lambda: _mark_failed(client, keys, index, reason, due), "recording why it failed")
                follower.close()
                _end_feed(feed, recorded=False, reason=reason)
                raise
            ended = time.time()  # the finish time, even if recording waits out a Redis outage
            try:
                new = waiting(lambda: record(client, keys, index, finished, log_bytes, ended),
                              "recording the result")  # fmt: skip
            except TournamentError:  # deleted while it played (`tournament delete --force`): nothing to write
                log.warning("%s match %d: the tournament was deleted while it played; not recorded",
                            tournament_id, index, extra=ids)  # fmt: skip
                return "tournament gone"
            report.played = new
            follower.close()  # after recording: following never delays the record
            _end_feed(feed, recorded=True)
        finally:
            follower.close()
    waiting(lambda: queue_refresh(job, prefix, tournament_id, settings), "queueing the leaderboard's refresh")
    outcome = "recorded" if new else "already recorded"
    log.info("%s match %d: %s (%s)", tournament_id, index, outcome, finished.result.totals, extra=ids)
    return outcome


def queue_refresh(job: Job, prefix: str, tournament_id: str, settings: WorkerSettings) -> None:
    """Queue the leaderboard's refresh of the tournament at the front of the match job's queue, so the
    next free worker runs it. One per recorded match, named after the match's job (its id holds the
    prefix, like every lasting RQ key of ours); the refreshes coalesce (`board.refresh`), so many
    workers queueing them at once cost a few milliseconds each, and queueing one twice is harmless."""
    Queue(job.origin, connection=job.connection).enqueue(
        REFRESH_JOB,
        prefix,
        tournament_id,
        settings.redis_wait_s,
        job_id=f"{job.id}{REFRESH_SUFFIX}",
        job_timeout=math.ceil(settings.redis_wait_s) + 120,
        result_ttl=0,  # nothing reads its result
        failure_ttl=7 * 86_400,
        description=f"{tournament_id}: the leaderboard",
        at_front=True,
    )


def _end_feed(feed: LiveFeed, recorded: bool, reason: str = "") -> None:
    """End the match's live feed; if Redis is away, its entries expire by themselves (records.live)."""
    try:
        patiently(lambda: feed.end(recorded, reason), f"{feed.match_id}: ending its live feed",
                  END_FEED_WAIT_S)  # fmt: skip
    except redis.RedisError as error:
        log.warning(
            "%s: cannot end its live feed: %s", feed.match_id, error, extra=feed.keys.log_ids(feed.index)
        )


def _mark_failed(client: redis.Redis, keys: Keys, index: int, reason: str, due: float | None) -> None:
    """Queued again with the retry's due time, or failed for good (nothing, if the tournament is gone)."""
    set_state(client, keys, index, MatchState.FAILED if due is None else MatchState.QUEUED, reason, due)


# Take or renew the lease unless another holder has it (0), or the tournament is gone (-1: deleted while
# the match was played; nothing is written). Taking a vacant lease starts an attempt: the match is
# counted and shown running (after a Redis outage let it lapse, renewing takes it back).
# KEYS: lease, state, attempts, tournament; ARGV: holder, ttl ms, index, '1' if a new attempt.
_TAKE = """
if redis.call('EXISTS', KEYS[4]) == 0 then return -1 end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if not holder then
  if ARGV[4] == '1' then redis.call('HINCRBY', KEYS[3], ARGV[3], 1) end
  if redis.call('HGET', KEYS[2], ARGV[3]) ~= 'done' then redis.call('HSET', KEYS[2], ARGV[3], 'running') end
end
return 1
"""
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


class Lease:
    """The match's lease: held by one job at a time, renewed every third of its life while it plays."""

    def __init__(self, client: redis.Redis, keys: Keys, index: int, seconds: float) -> None:
        self.client, self.keys, self.index, self.seconds = client, keys, index, seconds
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.ttl_ms = max(int(seconds * 1000), 1)

    def take(self, first: bool = True) -> bool:
        """Whether this job holds the lease now (False: another live job plays the match). A
        TournamentError if the tournament is gone (deleted: nothing is written)."""
        keys = self.keys
        lease, attempt = keys.lease(self.index), "1" if first else "0"
        taken = self.client.eval(_TAKE, 4, lease, keys.state, keys.attempts, keys.tournament, self.holder,
                                 self.ttl_ms, self.index, attempt)  # fmt: skip
        if taken == -1:
            raise TournamentError(f"tournament {keys.tournament_id!r} is gone")
        return bool(taken)

    @contextlib.contextmanager
    def kept(self) -> Iterator[None]:
        stop = threading.Event()
        thread = threading.Thread(target=self._renew, args=(stop,), name=f"lease-{self.index}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            try:
                patiently(lambda: self.client.eval(_RELEASE, 1, self.keys.lease(self.index), self.holder),
                          f"{self.keys.tournament_id} match {self.index}: releasing its lease",
                          self.seconds)  # fmt: skip
            except redis.RedisError as error:  # it expires by itself
                log.warning("cannot release the lease of match %d: %s", self.index, error,
                            extra=self.keys.log_ids(self.index))  # fmt: skip

    def _renew(self, stop: threading.Event) -> None:
        pause, lost = self.seconds / 3, False
        while not stop.wait(pause):
            try:
                held = self.take(first=False)
            except TournamentError:  # deleted (`tournament delete --force` stops the job): renew nothing
                log.warning("%s match %d: the tournament was deleted; its lease is not renewed",
                            self.keys.tournament_id, self.index,
                            extra=self.keys.log_ids(self.index))  # fmt: skip
                return
            except redis.RedisError as error:  # Redis away: try again soon, it may be back
                log.warning("cannot renew the lease of match %d: %s", self.index, error,
                            extra=self.keys.log_ids(self.index))  # fmt: skip
                pause = min(0.25, self.seconds / 3)
                continue
            pause = self.seconds / 3
            if not held and not lost:
                lost = True
                log.warning("%s match %d: its lease lapsed and another job took the match; playing on "
                            "(the result counts once)", self.keys.tournament_id, self.index,
                            extra=self.keys.log_ids(self.index))  # fmt: skip


def _request(keys: Keys, index: int, match: ScheduledMatch,
             spec: TournamentSpec) -> control_pb2.PlayMatchRequest:  # fmt: skip
    deadlines = spec.deadlines
    return control_pb2.PlayMatchRequest(
        match_id=keys.match_id(index),
        bots=list(match.bots),
        rules=codec.rules(spec.rules),
        seed=match.seed,
        decision_timeout_ms=deadlines.decision_ms,
        max_strikes=deadlines.max_strikes,
        disconnect_grace_ms=deadlines.disconnect_grace_ms,
        wait_for_bots_ms=deadlines.wait_for_bots_ms,
    )


def _check_tls(settings: WorkerSettings, server: str) -> None:
    """The control token never goes in clear off this machine, unless the worker was told it may."""
    try:
        settings.tls.check(server)
        if settings.tls.enabled:
            settings.tls.credentials()
    except TLSError as error:
        raise MatchFailed(f"the worker's TLS settings: {error}") from None


def _play(keys: Keys, index: int, match: ScheduledMatch, spec: TournamentSpec, settings: WorkerSettings,
          on_fault: Callable[[pb.Fault], None]) -> tuple[control_pb2.FinishedMatch, bytes]:  # fmt: skip
    """Play the match (or attach to it, or fetch its result), waiting out a server that is away; each
    fault is handed to `on_fault` as the server reports it."""
    request = _request(keys, index, match, spec)
    _check_tls(settings, spec.server)
    gone_since: float | None = None
    pause = FIRST_SERVER_PAUSE_S
    while True:
        try:
            return _attempt(request, spec.server, settings.control_token, on_fault, settings.tls)
        except _ServerGone as gone:
            now = time.monotonic()
            gone_since = now if gone_since is None else gone_since
            left = settings.server_wait_s - (now - gone_since)
            if left <= 0:
                waited = f"waited {settings.server_wait_s:g} s for the match server"
                raise MatchFailed(f"{gone} ({waited})") from None
            log.warning("%s: %s; waiting up to %.0f s for the match server at %s", request.match_id, gone,
                        left, spec.server, extra=keys.log_ids(index))  # fmt: skip
            _await_server(spec.server, settings.tls, min(pause, left), left)
            job_report().server_wait_s += time.monotonic() - now
            pause = min(pause * 2, LONGEST_SERVER_PAUSE_S)


def _play_on_pool(client: redis.Redis, keys: Keys, index: int, match: ScheduledMatch, spec: TournamentSpec,
                  settings: WorkerSettings, follower: Follower,
                  waiting: Waiting,
                  ) -> tuple[control_pb2.FinishedMatch, bytes]:  # fmt: skip
    """`_play` on a pool of servers: the match goes where `pool.place` says (where it was placed before,
    while that server lives: a later attempt attaches to it there). A server that is lost, or refuses it
    (draining), is set aside and the match placed again at once on another: played again there,
    recorded once. With no server of the pool left to try, the job waits for one, as `_play` waits for
    its server, for up to `server_wait_s`."""
    request = _request(keys, index, match, spec)
    pool_keys = PoolKeys(keys.prefix, spec.pool)
    ids = keys.log_ids(index)
    excluded: list[str] = []
    gone_since: float | None = None
    pause = FIRST_SERVER_PAUSE_S
    while True:
        placement = waiting(lambda: place(client, pool_keys, keys.placed, index, match.bots, excluded),
                            f"placing it in pool {spec.pool}")  # fmt: skip
        tried = time.monotonic()
        if placement is None:
            besides = f" besides {', '.join(excluded)}, lost or refusing it" if excluded else ""
            gone = _ServerGone(f"no server of pool {spec.pool!r} takes matches{besides}")
            excluded.clear()  # a server lost may be back by the next try
        else:
            server = placement.server
            log.info("%s: %s %s", request.match_id, "attaching to it on" if placement.kept else "placed on",
                     server, extra=ids)  # fmt: skip
            _check_tls(settings, server)
            follower.follow(server)
            try:
                return _attempt(request, server, settings.control_token, follower.fault, settings.tls)
            except MatchFailed:  # not played there (its bots never came): the next attempt places it anew
                waiting(lambda: client.hdel(keys.placed, str(index)), "forgetting where it was placed")
                raise
            except _ServerGone as error:
                gone = error
                excluded.append(server)
                waiting(functools.partial(set_aside, client, pool_keys, server), f"setting {server} aside")
        now = time.monotonic()
        if gone_since is None or now - tried >= LONGEST_SERVER_PAUSE_S:  # it played a while: a new loss
            gone_since = tried
        left = settings.server_wait_s - (now - gone_since)
        if left <= 0:
            waited = f"waited {settings.server_wait_s:g} s for a server of pool {spec.pool}"
            raise MatchFailed(f"{gone} ({waited})")
        if placement is None:
            log.warning("%s: %s; waiting up to %.0f s for one", request.match_id, gone, left, extra=ids)
            time.sleep(min(pause, left))  # a backoff: the pool is asked again, not in a loop
            pause = min(pause * 2, LONGEST_SERVER_PAUSE_S)
        else:
            log.warning("%s: %s on %s; placing it again", request.match_id, gone, placement.server, extra=ids)


def _await_server(address: str, tls: ClientTLS, pause: float, timeout: float) -> None:
    """Pause, then wait until the server accepts connections (or `timeout` passes)."""
    time.sleep(pause)  # a backoff: a server that is up but refusing (draining) is not asked in a loop
    with channels.channel(address, tls) as channel, contextlib.suppress(grpc.FutureTimeoutError):
        grpc.channel_ready_future(channel).result(timeout=max(timeout - pause, 0.01))


def _attempt(request: control_pb2.PlayMatchRequest, server: str, token: str,
             on_fault: Callable[[pb.Fault], None],
             tls: ClientTLS) -> tuple[control_pb2.FinishedMatch, bytes]:  # fmt: skip
    metadata = [("authorization", f"Bearer {token}")]
    chunks: list[bytes] = []
    events = 0
    try:
        with channels.channel(server, tls) as channel:
            stub = control_pb2_grpc.ControlServiceStub(channel)
            for progress in stub.PlayMatch(request, metadata=metadata):
                kind = progress.WhichOneof("kind")
                if kind == "started":
                    _check_same(request, progress.started.bots, None, progress.started.rules)
                elif kind == "fault":
                    on_fault(progress.fault)
                elif kind == "log":
                    chunks.append(progress.log.SerializeToString())
                    events += len(progress.log.events)
                elif kind == "finished":
                    finished = progress.finished
                    _check_same(request, finished.result.bots, finished.seed, finished.rules)
                    if finished.result.reason == pb.MATCH_END_ABORTED:
                        raise _ServerGone("the match server aborted the match (shutting down?)")
                    if finished.event_count != events:
                        raise MatchFailed(f"event log incomplete: {events} of {finished.event_count} events")
                    return finished, b"".join(chunks)
    except grpc.RpcError as error:
        code, details = error.code(), error.details()
        if code == grpc.StatusCode.UNAVAILABLE:
            raise _ServerGone(f"UNAVAILABLE: {details}") from None
        if code == grpc.StatusCode.ALREADY_EXISTS:
            raise MatchFailed(f"{_different(request)}: {details}") from None
        raise MatchFailed(f"{code.name}: {details}") from None
    raise MatchFailed("the match server ended the stream without a result")


def _check_same(request: control_pb2.PlayMatchRequest, bots: list[str], seed: int | None,
                rules: pb.RulesConfig) -> None:  # fmt: skip
    """Refuse what the server sent under our match id if it is not the scheduled match.

    The server answers a known id with that match (running or just finished)
    whatever else the request says: an id taken earlier by another caller
    would otherwise be recorded as the scheduled match.
    """
    differences = []
    if list(bots) != list(request.bots):
        differences.append(f"bots {','.join(bots) or '-'} (scheduled {','.join(request.bots)})")
    if seed is not None and seed != request.seed:
        differences.append(f"seed {seed} (scheduled {request.seed})")
    wanted = codec.rules_from(request.rules, len(request.bots)).to_dict()
    try:
        played = codec.rules_from(rules, len(request.bots)).to_dict()
    except ConfigError as error:
        differences.append(f"rules unreadable ({error})")
    else:
        differences += [f"rules.{k} {played[k]} (scheduled {v})" for k, v in wanted.items()
                        if played.get(k) != v]  # fmt: skip
    if differences:
        raise MatchFailed(f"{_different(request)}: {'; '.join(differences)}")


def _different(request: control_pb2.PlayMatchRequest) -> str:
    return f"match id {request.match_id} on the server is a different match"
