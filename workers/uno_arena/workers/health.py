"""Whether workers are alive, from their heartbeats in Redis: `uno-arena worker health`.

A worker's heartbeat is RQ's own: its hash `rq:worker:NAME` holds `last_heartbeat`, renewed at least
every 45 s while idle and every 30 s while a job runs (`worker.WORKER_TTL_S`), and RQ renews the hash's
time to live with each (two minutes while idle, 90 s while busy), so the hash of a worker that stopped
heartbeating (killed, frozen, cut off from Redis) expires. A worker that stopped cleanly says so in the
hash (`death`) for its last minute, and leaves its queue's list of workers.

So a worker is healthy when its hash is there without `death`, and, if the caller asks for a tighter
bound than RQ's (`max_age_s`), its last heartbeat is at most that old. Reads only; Redis must answer.

The queue's list of workers (`rq:workers:{queue}`) keeps a worker that died (killed: it never left the
list) until some worker's maintenance cleans the list, up to ten minutes later. Such a member, whose hash
has expired, is no worker of the queue any more: it is reported apart (`Checked.gone`), not as an
unhealthy worker, so that a probe of the queue's workers does not fail while the live ones are fine.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import redis
from rq.utils import utcparse
from rq.worker import Worker

from uno_arena.workers.queue import match_queue


@dataclass(frozen=True, slots=True)
class WorkerHealth:
    """One worker's state, as `uno-arena worker health` says it."""

    name: str
    healthy: bool
    detail: str  # "heartbeat 12 s ago (busy)", "stopped at 12:00:01", "no worker of that name" ...
    heartbeat_age_s: float | None = None  # None: no heartbeat was read


@dataclass(frozen=True, slots=True)
class Checked:
    """What a check found: the workers checked, and (checking the queue's) the names still listed on
    the queue whose worker is gone from Redis (its heartbeat stopped long ago: not counted)."""

    workers: list[WorkerHealth]
    gone: list[str]

    @property
    def healthy(self) -> bool:
        """At least one worker checked, and every one healthy."""
        return bool(self.workers) and all(each.healthy for each in self.workers)


def check(client: redis.Redis, prefix: str, name: str | None = None, max_age_s: float | None = None,
          now: datetime.datetime | None = None) -> Checked:  # fmt: skip
    """The worker named `name`, or every worker registered on the prefix's match queue (none: no worker
    is), those listed whose hash has expired set apart. Raises `redis.RedisError` when Redis does not
    answer."""
    now = now or datetime.datetime.now(datetime.UTC)
    if name is not None:
        return Checked([_one(client, name, max_age_s, now)], [])
    keys = sorted(Worker.all_keys(connection=client, queue=match_queue(client, prefix)))
    with client.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.exists(key)
        present = pipe.execute()
    names = [key.removeprefix(Worker.redis_worker_namespace_prefix) for key in keys]
    listed = [found for found, there in zip(names, present, strict=True) if there]
    gone = [found for found, there in zip(names, present, strict=True) if not there]
    return Checked([_one(client, found, max_age_s, now) for found in listed], gone)


def _one(client: redis.Redis, name: str, max_age_s: float | None, now: datetime.datetime) -> WorkerHealth:
    stored = client.hgetall(Worker.redis_worker_namespace_prefix + name)
    fields = {_text(key): _text(value) for key, value in stored.items()}
    if not fields:
        return WorkerHealth(name, False, "no such worker in Redis: never started, or its heartbeat stopped "
                                         "long enough for RQ to drop it (killed, frozen)")  # fmt: skip
    if "death" in fields:
        return WorkerHealth(name, False, f"stopped at {fields['death']}")
    heartbeat = fields.get("last_heartbeat", "")
    try:
        age = max((now - utcparse(heartbeat)).total_seconds(), 0.0)
    except ValueError:
        return WorkerHealth(name, False, f"its heartbeat is unreadable: {heartbeat[:40]!r}")
    state = fields.get("state", "")
    shown = f"heartbeat {age:.0f} s ago" + (f" ({state})" if state else "")
    if max_age_s is not None and age > max_age_s:
        return WorkerHealth(name, False, f"{shown}: older than {max_age_s:g} s", age)
    return WorkerHealth(name, True, shown, age)


def _text(value: bytes | str) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value
