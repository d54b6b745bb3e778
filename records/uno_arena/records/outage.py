"""Waiting out a Redis outage instead of failing because of it.

A Redis restart (from its AOF) takes seconds; a match takes minutes and its
result is only worth something once recorded. So the worker and its jobs
(the match job, the leaderboard's refresh job) retry what they have to write,
with a backoff, and log while they wait.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

import redis

log = logging.getLogger(__name__)

# Redis is down, restarting or still loading its data (`BusyLoadingError` is a `ConnectionError`).
REDIS_DOWN: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError)
FIRST_PAUSE_S = 0.1
LONGEST_PAUSE_S = 2.0

T = TypeVar("T")


def patiently(action: Callable[[], T], what: str, bound_s: float | None) -> T:
    """`action()`, tried again while Redis is unreachable, for up to `bound_s` seconds (None: for ever).

    Only for actions that may run twice (idempotent writes, reads): a command
    whose reply was lost may have been applied.
    """
    started = time.monotonic()
    pause = FIRST_PAUSE_S
    while True:
        try:
            return action()
        except REDIS_DOWN as error:
            waited = time.monotonic() - started
            if bound_s is not None and waited + pause > bound_s:
                log.error("%s: Redis still unreachable after %.0f s, giving up: %s", what, waited, error)
                raise
            log.warning("%s: Redis unreachable (%s); trying again in %.1f s", what, error, pause)
            time.sleep(pause)  # a backoff between attempts
            pause = min(pause * 2, LONGEST_PAUSE_S)


def wait_for_redis(client: redis.Redis, what: str, bound_s: float | None = None) -> None:
    """Return once Redis answers a PING (or raise after `bound_s` seconds)."""
    patiently(client.ping, what, bound_s)
