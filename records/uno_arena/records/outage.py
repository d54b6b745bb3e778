"""Waiting out a Redis outage instead of failing because of it.

A Redis restart (from its AOF) takes seconds; a match takes minutes and its
result is only worth something once recorded. Two ways of waiting, each for
its own kind of caller (the worker, its match jobs, the leaderboard's refresh job):

- `patient_client`: a client whose every command waits for Redis, for ever
  (redis-py's own retry, with a backoff, logged). The worker and its work
  horse talk to Redis through one, so every step RQ takes (heartbeats,
  starting a job, filing how it ended, maintenance) waits out a restart
  instead of failing, without RQ's code knowing.
- `prompt_client`, whose commands fail at once, with `patiently(action, what,
  bound_s)` around what must be retried: for our own code, which must notice
  an outage. A job waits for Redis for at most `--redis-wait`, then fails its
  attempt; the reaper judges no lease until Redis has answered for a lease's
  life after an outage.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.retry import Retry

log = logging.getLogger(__name__)

# Redis is down, restarting or still loading its data (`BusyLoadingError` is a `ConnectionError`).
REDIS_DOWN: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError)
FIRST_PAUSE_S = 0.1
LONGEST_PAUSE_S = 2.0

T = TypeVar("T")


def patiently(
    action: Callable[[], T], what: str, bound_s: float | None, ids: Mapping[str, str] | None = None,
    waited: Callable[[float], None] | None = None,
) -> T:  # fmt: skip
    """`action()`, tried again while Redis is unreachable, for up to `bound_s` seconds (None: for ever).
    `ids`: the fields of its log lines (the match's, `Keys.log_ids`). `waited`, if Redis did not answer
    at once: told the seconds the action took from its first try to its success or giving up (a
    worker's metrics).

    Only for actions that may run twice (idempotent writes, reads): a command
    whose reply was lost may have been applied.
    """
    started = time.monotonic()
    pause = FIRST_PAUSE_S
    failed = False
    try:
        while True:
            try:
                return action()
            except REDIS_DOWN as error:
                failed = True
                so_far = time.monotonic() - started
                if bound_s is not None and so_far + pause > bound_s:
                    log.error("%s: Redis still unreachable after %.0f s, giving up: %s", what, so_far, error,
                              extra=ids)  # fmt: skip
                    raise
                log.warning("%s: Redis unreachable (%s); trying again in %.1f s", what, error, pause,
                            extra=ids)  # fmt: skip
                time.sleep(pause)  # a backoff between attempts
                pause = min(pause * 2, LONGEST_PAUSE_S)
    finally:
        if failed and waited is not None:
            waited(time.monotonic() - started)


def wait_for_redis(client: redis.Redis, what: str, bound_s: float | None = None) -> None:
    """Return once Redis answers a PING (or raise after `bound_s` seconds)."""
    patiently(client.ping, what, bound_s)


class _LoggedBackoff(ExponentialBackoff):
    """redis-py's exponential backoff, saying in the log that (and how long) a client waits for Redis."""

    def __init__(self, what: str) -> None:
        super().__init__(cap=LONGEST_PAUSE_S, base=FIRST_PAUSE_S / 2)
        self.what = what

    def compute(self, failures: int) -> float:
        pause: float = super().compute(failures)
        if failures & (failures - 1) == 0:  # the 1st, 2nd, 4th, 8th ... failure: a line, not a flood
            log.warning("%s: Redis unreachable; trying again in %.1f s (%d tries so far)", self.what, pause,
                        failures)  # fmt: skip
        return pause


def patient_client(client: redis.Redis, what: str) -> redis.Redis:
    """A client to the same Redis, on a pool of its own, whose every command (and pipeline) waits for
    Redis for ever instead of raising `REDIS_DOWN`.

    A command whose reply was lost is sent again, so it may apply twice: RQ's writes may (at worst a
    retry queued twice, which the match's lease and once-only recording absorb); a WATCHed
    transaction is never resent (redis-py raises WatchError, and RQ starts it over)."""
    return _client_like(client, retry=Retry(_LoggedBackoff(what), -1), retry_on_error=list(REDIS_DOWN))


def prompt_client(client: redis.Redis) -> redis.Redis:
    """A client to the same Redis, on a pool of its own, whose commands raise at once when Redis is
    unreachable (the caller waits, `patiently`, for as long as it may)."""
    return _client_like(client, retry=Retry(NoBackoff(), 0), retry_on_error=[])


def _client_like(client: redis.Redis, **options: object) -> redis.Redis:
    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, **options}
    return redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs))
