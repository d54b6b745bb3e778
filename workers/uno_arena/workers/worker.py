"""`ArenaWorker`: RQ's forking worker, made to outlive Redis outages, with the reaper built in.

RQ's `Worker.work` quits on the first Redis error its loop does not expect,
and a Redis that restarts under a busy worker raises several: the monitor's
heartbeats, the job status it reads when the work horse exits, the state it
writes, the horse's filing of the job; so does a Redis that answers but
refuses writes (out of memory, too few replicas: `outage.unavailable`). So
the worker talks to Redis through a client of its own that waits for Redis
instead of raising (`outage.patient_client`: redis-py's retry, for ever,
with a backoff): every step RQ takes, in the worker and in its work horse,
waits out a restart or a refusal, and RQ's own code runs unchanged. The job
itself (`workers.jobs`) and the reaper use clients that fail at once, and
wait as long as they may themselves.

RQ's own scheduler is not run: each worker's `Reaper` moves due retries
(and requeues the matches of dead workers), so no single process holds up
the retries. `rq worker -w uno_arena.workers.worker.ArenaWorker PREFIX.matches`
is the same as `uno-arena worker`.

Three of RQ's methods are overridden, the constructor, `work` and
`handle_exception`, each for what RQ's public API (constructor options, job
callbacks, `Retry`, exception handlers) does not give; the docstring of each
says which guarantee needs it. Three more count the worker's metrics
(`execute_job`, `perform_job`, `handle_job_failure`: `workers.metrics` says
why the counting needs them). Everything else is RQ's (rq>=3.0.0,<3.1:
pyproject.toml says why it is bounded).

The worker heartbeats in Redis (RQ's, in its hash `rq:worker:NAME`) at least
every `WORKER_TTL_S - 15` seconds while idle and every 30 s while a job runs,
and RQ lets the hash expire when they stop: that is what `uno-arena worker
health` reads (`workers.health`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

import redis
from rq.defaults import DEFAULT_LOGGING_DATE_FORMAT, DEFAULT_LOGGING_FORMAT
from rq.exceptions import StopRequested
from rq.executions import Execution
from rq.job import Job
from rq.queue import Queue
from rq.registry import StartedJobRegistry
from rq.worker import DequeueStrategy, Worker

from uno_arena.records.outage import patient_client, prompt_client
from uno_arena.workers import metrics
from uno_arena.workers.jobs import MATCH_JOB, REFRESH_JOB, MatchFailed
from uno_arena.workers.queue import prefix_of
from uno_arena.workers.reaper import Reaper, release_due_retries
from uno_arena.workers.settings import WorkerSettings

log = logging.getLogger(__name__)

LONGEST_RESTART_PAUSE_S = 30.0
# RQ's worker_ttl for `uno-arena worker` (RQ's default: 420): an idle worker heartbeats every 45 s (its
# wait for a job is worker_ttl - 15 s) and its hash in Redis lives worker_ttl + 60 s past a heartbeat (a
# busy one's: 90 s, heartbeats every 30 s), so a worker that died is gone from Redis within two minutes,
# not eight (`uno-arena worker health`, and the reaper's judging of a started job's worker)
WORKER_TTL_S = 60
JOB_KINDS = {MATCH_JOB: "match", REFRESH_JOB: "leaderboard"}  # a job's function -> its duration's label


class ArenaWorker(Worker):
    """An RQ worker that rides out Redis outages and runs a reaper per match queue it serves."""

    def __init__(self, queues: str | Queue | Sequence[str] | Sequence[Queue], name: str | None = None, *,
                 connection: redis.Redis | None = None, **kwargs: Any) -> None:  # fmt: skip
        """RQ's worker, on a client of its own that waits for Redis (see the module's docstring). The
        queues are given to RQ by name, so that RQ makes them on that client too.

        Why an override: `connection` is RQ's own option, but whoever makes the worker chooses it, and
        `rq worker -w uno_arena.workers.worker.ArenaWorker` passes a client that fails on the first
        Redis error; a worker must ride out outages however it was started (no exit, exactly once)."""
        given: list[str | Queue] = [queues] if isinstance(queues, str | Queue) else list(queues)
        if connection is None:
            connection = next(q.connection for q in given if isinstance(q, Queue))
        names = [q.name if isinstance(q, Queue) else q for q in given]
        waiting = patient_client(connection, f"worker {name}" if name else "worker")
        kwargs.setdefault("worker_ttl", WORKER_TTL_S)
        super().__init__(names, name, connection=waiting, **kwargs)
        self.metrics = metrics.WorkerMetrics()  # `uno-arena worker --metrics` serves its registry
        self._report_fd: int | None = None  # the write end of the running job's report pipe

    def work(
        self,
        burst: bool = False,
        logging_level: str | None = None,
        date_format: str = DEFAULT_LOGGING_DATE_FORMAT,
        log_format: str = DEFAULT_LOGGING_FORMAT,
        max_jobs: int | None = None,
        max_idle_time: int | None = None,
        with_scheduler: bool = False,
        dequeue_strategy: DequeueStrategy = DequeueStrategy.DEFAULT,
    ) -> bool:
        """RQ's work loop, with the reapers running beside it, without RQ's scheduler, and started again
        whenever it quits without being asked to.

        Why an override: the reapers (due retries within a second, dead workers' matches requeued) must
        run in every worker process, for as long as its loop does, and `rq worker --with-scheduler` must
        not start RQ's scheduler, whose lock would leave retries to one process; and RQ's loop quits on
        any error it does not expect (one the patient client does not wait out, such as a command Redis
        refuses for the command's own sake), which must not end a worker. RQ has no hook around its
        loop. (That RQ's loop ended because it was asked to is read from RQ's `_stop_requested` and
        `_shutdown_requested_date`: `work` says only whether it ran a job.)
        """
        if with_scheduler:
            self.log.info("Worker %s: not starting RQ's scheduler: the reaper moves due retries", self.name)
        options: dict[str, Any] = {
            "logging_level": logging_level, "date_format": date_format, "log_format": log_format,
            "max_jobs": max_jobs, "max_idle_time": max_idle_time, "dequeue_strategy": dequeue_strategy,
        }  # fmt: skip
        reapers = self._start_reapers()
        worked, pause = False, 1.0
        try:
            while True:
                started = time.monotonic()
                worked |= bool(super().work(burst, with_scheduler=False, **options))
                if self._stop_requested or self._shutdown_requested_date is not None or burst:
                    return worked
                if max_jobs is not None or max_idle_time is not None:
                    return worked
                pause = 1.0 if time.monotonic() - started > 60 else min(pause * 2, LONGEST_RESTART_PAUSE_S)
                self.log.warning("Worker %s: the work loop stopped unasked; starting it again in %.0f s",
                                 self.name, pause)  # fmt: skip
                time.sleep(pause)  # a backoff, so that a loop that keeps failing does not spin
        except StopRequested:
            return worked
        finally:
            for reaper in reapers:
                reaper.stop()

    def _start_reapers(self) -> list[Reaper]:
        lease = WorkerSettings.from_env().lease_seconds
        reapers = []
        for queue in self.queues:
            prefix = prefix_of(queue.name)
            if prefix is None:
                continue
            # The reaper's client fails at once: after an outage it must wait a lease's life before
            # judging leases, so it has to notice the outage (workers.reaper.Reaper).
            reaper = Reaper(prompt_client(self.connection), prefix, interval=max(lease / 2, 0.5))
            release_due_retries(self.connection, prefix)  # at once: a burst may end before the first tick
            reaper.start()
            reapers.append(reaper)
        return reapers

    def execute_job(self, job: Job, queue: Queue) -> None:
        """(In the worker process.) RQ's: fork a work horse for the job and wait for it to exit; timed,
        and the horse's report read from a pipe it inherits (`workers.metrics`).

        Why an override: the job's duration and its report can only be counted in the worker process,
        which outlives the horse, and only around the fork; RQ has no hook there."""
        kind = JOB_KINDS.get(_func_name(job), "other")
        reader, writer = os.pipe()
        self._report_fd = writer  # the horse, a fork, writes its report to it
        started = time.monotonic()
        try:
            super().execute_job(job, queue)
        finally:
            self._report_fd = None
            os.close(writer)  # the horse has exited: with this closed, the pipe holds all it will
            self.metrics.job_ended(kind, time.monotonic() - started, metrics.read_report(reader))

    def perform_job(self, job: Job, queue: Queue, execution: Execution) -> bool:
        """(In the work horse.) RQ's: run the job and file how it ended; then hand the job's report to
        the worker process.

        Why an override: RQ's horse runs this and exits (`os._exit`), so after it is the horse's last
        chance to report, and a fresh report must be started before the job runs."""
        metrics.new_report()
        try:
            return bool(super().perform_job(job, queue, execution))
        finally:
            if self._report_fd is not None:
                metrics.send_report(self._report_fd)

    def handle_job_failure(self, job: Job, queue: Queue,
                           started_job_registry: StartedJobRegistry | None = None, exc_string: str = "",
                           execution: Execution | None = None) -> None:  # fmt: skip
        """(In the work horse, or in the worker process for a horse that died or was stopped.) RQ's: retry
        the failed job if it has tries left, else fail it (a job stopped on request: file it as stopped);
        a match's failed attempt is counted, as retried, failed or stopped.

        Why an override: only here is it known whether RQ retries the job (RQ decides it from the job's
        tries left, and changes them as it does) or was asked to stop it (RQ forgets which job it stopped
        as it files it), and a horse that died is handled here, in the worker process, with no report of
        its own."""
        stopped = self._stopped_job_id == job.id  # RQ's own tests, before it acts
        retried = bool(job.should_retry) and not stopped
        super().handle_job_failure(job, queue, started_job_registry=started_job_registry,
                                   exc_string=exc_string, execution=execution)  # fmt: skip
        if _func_name(job) != MATCH_JOB:
            return
        outcome = metrics.STOPPED if stopped else metrics.RETRIED if retried else metrics.FAILED
        if self.is_horse:
            metrics.job_report().outcome = outcome  # the worker process counts it from the report
        else:
            self.metrics.attempt_failed(outcome)

    def handle_exception(self, job: Job, *exc_info: Any) -> None:
        """(In the work horse.) A match that could not be played for a known reason (`MatchFailed`: a bot
        not connected, a refusal by the server) is one warning line with its match id and reason; RQ
        logs anything else with its traceback. Either way RQ then runs the exception handlers, and
        retries or fails the job as before.

        Why an override: RQ logs every exception of a job with its traceback before it calls any
        exception handler (and `on_failure` callbacks run before that log line), so no public hook can
        make an expected failure one line. Returning `rq.Retry` from the job instead would leave RQ no
        way to fail a match for good on its last try."""
        error = exc_info[1] if len(exc_info) > 1 else None
        if not isinstance(error, MatchFailed):
            super().handle_exception(job, *exc_info)
            return
        ids = {"match_id": error.match_id or None, "tournament_id": error.tournament_id or None}
        self.log.warning("Worker %s: match %s failed: %s", self.name, error.match_id or job.description,
                         error.reason, extra=ids)  # fmt: skip
        with _errors_unlogged(self.log):  # RQ's traceback of it; the line above says it all
            super().handle_exception(job, *exc_info)


def _func_name(job: Job) -> str:
    """The job's function by its dotted name ("" if its data cannot be read)."""
    try:
        return str(job.func_name)
    except Exception:  # a job whose payload does not load: RQ fails it, the metrics call it "other"
        return ""


@contextlib.contextmanager
def _errors_unlogged(logger: logging.Logger) -> Iterator[None]:
    """Drop what `logger` itself logs at ERROR and above meanwhile."""

    def keep(record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR

    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)
