"""A worker's Prometheus metrics (`uno-arena worker --metrics HOST:PORT` serves them at /metrics;
docs/operations.md, "Metrics and health", lists each), and how a job's work horse reports to them.

Where the counting happens. RQ runs each job in a work horse, a fork of the worker process that exits
when its job ends: a counter incremented there dies with it. Nor may the horse touch the worker's metric
objects at all: a fork copies their locks in whatever state the thread answering a scrape left them, and
a lock copied while held is never released in the copy. So:

- in the horse, the job counts in a plain `JobReport` (`job_report()`: a match played, the seconds it
  waited for Redis and for the match server), and `ArenaWorker.handle_job_failure` there notes whether
  RQ retries the failed match or fails it for good; when the horse's job is over
  (`ArenaWorker.perform_job`), the report goes to the worker process as one JSON line on a pipe that
  the worker opened before forking (`send_report`);
- in the worker process, `ArenaWorker.execute_job` times the horse from fork to exit (the job's
  duration), reads the pipe once the horse has exited (`read_report`: it never blocks, the horse is
  gone) and counts the report in `WorkerMetrics`, the only prometheus objects, on a registry of the
  worker's own; a horse that died without reporting (SIGKILL, out of memory, RQ's job timeout) has its
  failure handled by RQ in the worker process, whose `handle_job_failure` counts it there directly.

Counting the horse's events through Redis instead (the job's meta) would lose them in the outages the
jobs wait out; a pipe is local, and a report is a few dozen bytes, far under what a pipe holds, so the
horse's one write never waits.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector

log = logging.getLogger(__name__)

# How a match attempt that did not record its match ended: queued to be tried again, failed for good, or
# stopped on request (`tournament delete --force`: RQ's stop-job command; never retried)
RETRIED, FAILED, STOPPED = "retried", "failed", "stopped"
JOBS = ("match", "leaderboard", "other")  # the job duration's `job` label: by the job's function
# A match lasts seconds (a short target, fast bots) to many minutes (500 points, slow bots).
JOB_BUCKETS: Final = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
REPORT_BYTES: Final = 4096  # the most a report is read to: one is some 100 bytes


@dataclass
class JobReport:
    """What one job did, counted in its work horse and handed to the worker process as it ends."""

    played: bool = False  # the job played the match and recorded it (not: found it recorded already)
    outcome: str = ""  # RETRIED, FAILED or STOPPED when the match attempt failed; "" otherwise
    redis_wait_s: float = 0.0  # waiting for Redis to answer (`records.outage.patiently`)
    server_wait_s: float = 0.0  # waiting for a match server that was down or restarting

    def to_line(self) -> bytes:
        return json.dumps(asdict(self)).encode() + b"\n"

    @classmethod
    def from_line(cls, line: bytes) -> JobReport:
        fields = json.loads(line)
        return cls(played=bool(fields["played"]), outcome=str(fields["outcome"]),
                   redis_wait_s=float(fields["redis_wait_s"]),
                   server_wait_s=float(fields["server_wait_s"]))  # fmt: skip


_report = JobReport()  # the current job's, in a work horse (each horse starts with a fresh one)


def job_report() -> JobReport:
    """The report of the job this process runs (in a work horse: what goes to the worker process)."""
    return _report


def new_report() -> JobReport:
    """Start the report of a new job (in the work horse, before it runs the job)."""
    global _report
    _report = JobReport()
    return _report


def send_report(fd: int) -> None:
    """Write the current job's report to the worker process's pipe (in the work horse, as its job ends).
    Never raises: a report lost is counts lost, never a job failed."""
    try:
        os.write(fd, _report.to_line())
    except OSError as error:
        log.warning("cannot report the job's metrics to the worker process: %s", error)


def read_report(fd: int) -> JobReport | None:
    """The report the horse wrote to the pipe `fd` (whose write ends are all closed: the horse has
    exited and the worker closed its own), or None if it wrote none; closes `fd`."""
    data = b""
    try:
        os.set_blocking(fd, False)
        while len(data) < REPORT_BYTES and (chunk := os.read(fd, REPORT_BYTES)):
            data += chunk
    except BlockingIOError:  # a write end still open somewhere (a process the horse started): no more
        pass
    finally:
        os.close(fd)
    line = data.partition(b"\n")[0]
    if not line:
        return None
    try:
        return JobReport.from_line(line)
    except (ValueError, KeyError, TypeError) as error:
        log.warning("a work horse's metrics report is unreadable: %s", error)
        return None


class WorkerMetrics:
    """A worker process's metric objects, on `registry` (a new one unless given, with the process's CPU
    and memory: `process_*`)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        if registry is None:  # a registry of its own: with the process's CPU and memory (`process_*`)
            ProcessCollector(registry=self.registry)
        registry = self.registry
        self.matches_played = Counter(
            "uno_arena_worker_matches_played",
            "Matches this worker played and recorded (each match is recorded once: summed over the workers, "
            "the matches recorded).",
            registry=registry,
        )
        self.matches_retried = Counter(
            "uno_arena_worker_matches_retried",
            "Match attempts that failed and were queued to be tried again (a bot not connected, a server "
            "that refused, a work horse killed).",
            registry=registry,
        )
        self.matches_failed = Counter(
            "uno_arena_worker_matches_failed",
            "Match attempts that failed with no try left: the match is marked failed "
            "(`uno-arena tournament resume` queues it again).",
            registry=registry,
        )
        self.matches_stopped = Counter(
            "uno_arena_worker_matches_stopped",
            "Match jobs stopped on request while they played (`uno-arena tournament delete --force`): not "
            "failures, never retried, and their matches are never recorded.",
            registry=registry,
        )
        self.job_seconds = Histogram(
            "uno_arena_worker_job_duration_seconds",
            "Seconds a job took, from its work horse forked to its exit, by job: match (a match played, or "
            "found played), leaderboard (the standings' refresh after a match) or other.",
            ["job_kind"],  # not `job`, which Prometheus sets on every series it scrapes
            buckets=JOB_BUCKETS,
            registry=registry,
        )
        self._job_seconds = {kind: self.job_seconds.labels(job_kind=kind) for kind in JOBS}
        self.redis_wait_seconds = Counter(
            "uno_arena_worker_redis_wait_seconds",
            "Seconds match jobs spent waiting for Redis to answer (an outage, a restart).",
            registry=registry,
        )
        self.server_wait_seconds = Counter(
            "uno_arena_worker_server_wait_seconds",
            "Seconds match jobs spent waiting for a match server that was down or restarting.",
            registry=registry,
        )

    def attempt_failed(self, outcome: str) -> None:
        """A match attempt failed: RETRIED, FAILED or STOPPED."""
        counters = {RETRIED: self.matches_retried, FAILED: self.matches_failed, STOPPED: self.matches_stopped}
        counters[outcome].inc()

    def job_ended(self, kind: str, seconds: float, report: JobReport | None) -> None:
        """A work horse exited after `seconds`, having reported `report` (None: it reported nothing)."""
        self._job_seconds.get(kind, self._job_seconds["other"]).observe(seconds)
        if report is None:
            return
        if report.played:
            self.matches_played.inc()
        if report.outcome:
            self.attempt_failed(report.outcome)
        if report.redis_wait_s > 0:
            self.redis_wait_seconds.inc(report.redis_wait_s)
        if report.server_wait_s > 0:
            self.server_wait_seconds.inc(report.server_wait_s)
