"""What a worker process needs that is not in Redis: its control token, how it reaches the match server
(TLS: a tournament's spec names the server's address, the worker decides how to reach it), how it shows
it is alive, and how long it waits out an outage.

Read from the environment, because jobs run in RQ's work horse (a fork of the
worker) and plain `rq worker` must work too: `uno-arena worker` sets these
variables from its flags before it starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from uno_arena.v1.channels import ClientTLS, TLSError

TOKEN_VARIABLE = "UNO_ARENA_CONTROL_TOKEN"
LEASE_VARIABLE = "UNO_ARENA_LEASE_SECONDS"
SERVER_WAIT_VARIABLE = "UNO_ARENA_SERVER_WAIT_SECONDS"
REDIS_WAIT_VARIABLE = "UNO_ARENA_REDIS_WAIT_SECONDS"
LEASE_S, SERVER_WAIT_S, REDIS_WAIT_S = 15.0, 120.0, 300.0  # the defaults


class WorkerSettingsError(RuntimeError):
    """The worker cannot play matches as configured."""


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    control_token: str
    lease_seconds: float = LEASE_S  # a match whose worker stops renewing its lease this long is played again
    server_wait_s: float = SERVER_WAIT_S  # how long a job waits for a match server that is down or restarting
    redis_wait_s: float = REDIS_WAIT_S  # how long a job waits for Redis before its attempt fails
    tls: ClientTLS = field(default_factory=ClientTLS)  # from UNO_ARENA_TLS, UNO_ARENA_TLS_CA ...

    @classmethod
    def from_env(cls) -> WorkerSettings:
        token = os.environ.get(TOKEN_VARIABLE, "")
        if not token:
            raise WorkerSettingsError(f"{TOKEN_VARIABLE} is not set: workers need a control token "
                                      "(`uno-arena control-token`)")  # fmt: skip
        lease = _seconds(LEASE_VARIABLE, LEASE_S, positive=True)
        server_wait = _seconds(SERVER_WAIT_VARIABLE, SERVER_WAIT_S)
        redis_wait = _seconds(REDIS_WAIT_VARIABLE, REDIS_WAIT_S)
        try:
            tls = ClientTLS.from_env()
        except TLSError as error:
            raise WorkerSettingsError(str(error)) from None
        return cls(token, lease, server_wait, redis_wait, tls)


def _seconds(variable: str, default: float, *, positive: bool = False) -> float:
    raw = os.environ.get(variable, "")
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise WorkerSettingsError(f"{variable} must be a number of seconds, got {raw!r}") from None
    if value < 0 or (positive and value == 0):
        raise WorkerSettingsError(f"{variable} must be {'>' if positive else '>='} 0, got {value:g}")
    return value
