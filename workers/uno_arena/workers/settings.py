"""What a worker process needs that is not in Redis: its control token, and how it shows it is alive.

Read from the environment, because jobs run in RQ's work horse (a fork of the
worker) and plain `rq worker` must work too: `uno-arena worker` sets these
variables from its flags before it starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

TOKEN_VARIABLE = "UNO_ARENA_CONTROL_TOKEN"
LEASE_VARIABLE = "UNO_ARENA_LEASE_SECONDS"


class WorkerSettingsError(RuntimeError):
    """The worker cannot play matches as configured."""


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    control_token: str
    lease_seconds: float = 15.0  # a match whose worker stops renewing its lease this long is played again

    @classmethod
    def from_env(cls) -> WorkerSettings:
        token = os.environ.get(TOKEN_VARIABLE, "")
        if not token:
            raise WorkerSettingsError(f"{TOKEN_VARIABLE} is not set: workers need a control token "
                                      "(`uno-arena control-token`)")  # fmt: skip
        lease = float(os.environ.get(LEASE_VARIABLE, "15"))
        if lease <= 0:
            raise WorkerSettingsError(f"{LEASE_VARIABLE} must be > 0, got {lease}")
        return cls(token, lease)
