"""The reaper queues retries that a dead RQ scheduler left waiting (real Redis, real RQ registries)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import redis
from rq.registry import ScheduledJobRegistry

from uno_arena.workers.jobs import play_match
from uno_arena.workers.queue import match_queue
from uno_arena.workers.reaper import release_overdue_retries


def test_an_overdue_retry_is_queued_and_a_later_one_left(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    queue = match_queue(client, prefix)
    now = datetime.now(UTC)
    # No worker runs RQ's scheduler here, as after the one holding its lock was killed.
    late = queue.enqueue_at(now - timedelta(minutes=5), play_match, "t", 0, prefix, job_id=f"{prefix}-0")
    later = queue.enqueue_at(now + timedelta(minutes=5), play_match, "t", 1, prefix, job_id=f"{prefix}-1")
    registry = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]
    assert set(registry.get_job_ids()) == {late.id, later.id} and queue.job_ids == []

    assert release_overdue_retries(client, prefix) == [late.id]
    assert queue.job_ids == [late.id]
    assert registry.get_job_ids() == [later.id]
    assert release_overdue_retries(client, prefix) == []  # nothing twice
