"""Waiting out a Redis outage instead of failing because of it.

A Redis restart (from its AOF) takes seconds; a match takes minutes and its
result is only worth something once recorded. An outage is Redis unreachable
(down, restarting, loading its data) or Redis answering but refusing writes
(full with `noeviction`, too few replicas for `min-replicas-to-write`, unable
to persist, a replica): `unavailable(error)` is the one place that says
which errors are an outage. Two ways of waiting, each for its own kind of
caller (the worker, its match jobs, the leaderboard's refresh job):

- `patient_client`: a client whose every command waits out an outage, for
  ever (redis-py's own retry, with a backoff, logged). The worker and its
  work horse talk to Redis through one, so every step RQ takes (heartbeats,
  starting a job, filing how it ended, maintenance) waits out a restart or a
  refusal instead of failing, without RQ's code knowing.
- `prompt_client`, whose commands fail at once, with `patiently(action, what,
  bound_s)` around what must be retried: for our own code, which must notice
  an outage. A job waits for Redis for at most `--redis-wait`, then fails its
  attempt; the reaper judges no lease until Redis has answered for a lease's
  life after an outage.

A refused write is not applied, so trying it again applies it once; a
refused transaction (MULTI/EXEC) applies none of its commands.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

log = logging.getLogger(__name__)

# Redis is down, restarting or still loading its data (`BusyLoadingError` is a `ConnectionError`).
REDIS_DOWN: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError)
# Redis answers but refuses every write for a while, whatever the command: the error codes of its replies.
# OOM: used memory over `maxmemory` with `maxmemory-policy noeviction`; NOREPLICAS: fewer replicas than
# `min-replicas-to-write`; MISCONF: it cannot persist (a failed RDB save, `stop-writes-on-bgsave-error`);
# READONLY: a replica (a primary demoted by a failover).
WRITE_REFUSALS = ("OOM", "NOREPLICAS", "MISCONF", "READONLY")
# The code as redis-py words the reply: first (a command's), after "caused error: " (a pipeline's, which
# redis-py prefixes with the command), or after "-" (a Lua script's, with the script's position before it).
_REFUSAL = re.compile(rf"(?:^|caused error: |: -)(?:{'|'.join(WRITE_REFUSALS)}) ")
FIRST_PAUSE_S = 0.1
LONGEST_PAUSE_S = 2.0

T = TypeVar("T")


def refuses_writes(error: BaseException) -> bool:
    """Whether `error` is Redis refusing a write because of its own state (`WRITE_REFUSALS`), not because
    of the command: the write was not applied and will be once Redis takes writes again."""
    if isinstance(error, redis.exceptions.OutOfMemoryError | redis.exceptions.ReadOnlyError):
        return True  # redis-py's own classes for OOM and READONLY (with the code cut off the message)
    return isinstance(error, redis.ResponseError) and _REFUSAL.search(str(error)) is not None


def unavailable(error: BaseException) -> bool:
    """Whether `error` means Redis is unavailable for writes for now: unreachable (`REDIS_DOWN`) or
    refusing writes (`refuses_writes`). Such an error is waited out; any other one is raised."""
    return isinstance(error, REDIS_DOWN) or refuses_writes(error)


def _why(error: BaseException) -> str:
    return "refuses writes" if refuses_writes(error) else "unreachable"


def patiently(
    action: Callable[[], T], what: str, bound_s: float | None, ids: Mapping[str, str] | None = None,
    waited: Callable[[float], None] | None = None,
) -> T:  # fmt: skip
    """`action()`, tried again while Redis is unavailable (`unavailable`: unreachable or refusing writes),
    for up to `bound_s` seconds (None: for ever). `ids`: the fields of its log lines (the match's,
    `Keys.log_ids`). `waited`, if Redis did not take the action at once: told the seconds the action took
    from its first try to its success or giving up (a worker's metrics).

    Only for actions that may run twice (idempotent writes, reads): a command
    whose reply was lost may have been applied, and an action of several
    commands may have had its first ones applied before a later one was refused.
    """
    started = time.monotonic()
    pause = FIRST_PAUSE_S
    failed = False
    try:
        while True:
            try:
                return action()
            except redis.RedisError as error:
                if not unavailable(error):
                    raise
                failed = True
                so_far = time.monotonic() - started
                if bound_s is not None and so_far + pause > bound_s:
                    log.error("%s: Redis still %s after %.0f s, giving up: %s", what, _why(error), so_far,
                              error, extra=ids)  # fmt: skip
                    raise
                log.warning("%s: Redis %s (%s); trying again in %.1f s", what, _why(error), error, pause,
                            extra=ids)  # fmt: skip
                time.sleep(pause)  # a backoff between attempts
                pause = min(pause * 2, LONGEST_PAUSE_S)
    finally:
        if failed and waited is not None:
            waited(time.monotonic() - started)


def wait_for_redis(client: redis.Redis, what: str, bound_s: float | None = None) -> None:
    """Return once Redis answers a PING (or raise after `bound_s` seconds)."""
    patiently(client.ping, what, bound_s)


def pause_after(failures: int) -> float:
    """The backoff after `failures` failures in a row: 0.1 s doubling to `LONGEST_PAUSE_S`. (redis-py's
    `ExponentialBackoff` computes `base * 2**failures`, which overflows a float after ~1,000 failures:
    half an hour of waiting at 2 s apart.)"""
    doublings = min(max(failures - 1, 0), 16)
    return min(FIRST_PAUSE_S * float(2**doublings), LONGEST_PAUSE_S)


class _WaitingRetry(Retry):
    """redis-py's retry of a command (or pipeline), for ever, while Redis is `unavailable`, with a backoff
    at most `LONGEST_PAUSE_S` apart, saying in the log that (and why, and how long) the client waits.

    redis-py retries only by the error's class, and a refusal such as NOREPLICAS is a plain
    `ResponseError` known by its message: so this is redis-py's retry loop with `unavailable` deciding.
    The failures are counted across calls while they come less than `_AGAIN_S` apart, not from zero at
    each call: a transaction on WATCHed keys is never sent again (redis-py's failure handler raises
    `WatchError`, and RQ starts it over, on a connection that reconnects first), so the pause before each
    new start grows as it would for one command, instead of RQ starting over at full speed."""

    _AGAIN_S = 30.0  # failures this close to the last one are of the same outage

    def __init__(self, what: str) -> None:
        super().__init__(NoBackoff(), -1, REDIS_DOWN)  # the pause is `pause_after`
        self.what = what
        self.failures = 0
        self.last_failure = -math.inf

    def call_with_retry(self, do: Callable[[], T], fail: Callable[..., Any],
                        is_retryable: Callable[[Exception], bool] | None = None,
                        with_failure_count: bool = False) -> T:  # fmt: skip
        while True:
            try:
                return do()
            except Exception as error:
                if not unavailable(error) or (is_retryable is not None and not is_retryable(error)):
                    raise
                now = time.monotonic()
                self.failures = self.failures + 1 if now - self.last_failure < self._AGAIN_S else 1
                self.last_failure = now
                pause = pause_after(self.failures)
                if self.failures & (self.failures - 1) == 0:  # the 1st, 2nd, 4th ...: a line, not a flood
                    log.warning("%s: Redis %s (%s); trying again in %.1f s (%d tries so far)", self.what,
                                _why(error), error, pause, self.failures)  # fmt: skip
                time.sleep(pause)
                if with_failure_count:  # redis-py's handler: drop the connection; WatchError if watching
                    fail(error, self.failures)
                else:
                    fail(error)


def patient_client(client: redis.Redis, what: str) -> redis.Redis:
    """A client to the same Redis, on a pool of its own, whose every command (and pipeline) waits out an
    outage for ever (`unavailable`: Redis unreachable or refusing writes) instead of raising.

    A command whose reply was lost is sent again, so it may apply twice: RQ's writes may (at worst a
    retry queued twice, which the match's lease and once-only recording absorb); a refused one was not
    applied; a WATCHed transaction is never resent (redis-py raises WatchError, and RQ starts it over)."""
    return _client_like(client, retry=_WaitingRetry(what), retry_on_error=list(REDIS_DOWN))


def prompt_client(client: redis.Redis) -> redis.Redis:
    """A client to the same Redis, on a pool of its own, whose commands raise at once when Redis is
    unavailable (the caller waits, `patiently`, for as long as it may)."""
    return _client_like(client, retry=Retry(NoBackoff(), 0), retry_on_error=[])


def _client_like(client: redis.Redis, **options: object) -> redis.Redis:
    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, **options}
    return redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs))
