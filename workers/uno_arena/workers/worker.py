"""`ArenaWorker`: RQ's forking worker, made to outlive Redis outages, with the reaper built in.

RQ's `Worker.work` quits on the first exception its loop does not expect,
and a Redis that restarts under a busy worker raises several: the monitor's
heartbeats, the job status it reads when the work horse exits, the state it
writes. This class keeps RQ's loop and changes only those steps: heartbeats
and state updates that cannot reach Redis are skipped (the next one will
do), steps that must happen wait for Redis with a backoff, and a loop that
quits anyway without being asked to is started again once Redis answers.
The job itself (`workers.jobs`) waits for Redis before it records.

RQ's own scheduler is not run: each worker's `Reaper` moves due retries
(and requeues the matches of dead workers), so no single process holds up
the retries. `rq worker -w uno_arena.workers.worker.ArenaWorker PREFIX.matches`
is the same as `uno-arena worker`.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import redis
from rq.defaults import DEFAULT_LOGGING_DATE_FORMAT, DEFAULT_LOGGING_FORMAT
from rq.exceptions import InvalidJobOperation, StopRequested
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.job_lifecycle import call_exception_handlers
from rq.queue import Queue
from rq.registry import StartedJobRegistry
from rq.utils import now
from rq.worker import Worker
from rq.worker.base import DequeueStrategy

from uno_arena.records.outage import REDIS_DOWN, patiently, wait_for_redis
from uno_arena.workers.jobs import MatchFailed
from uno_arena.workers.queue import prefix_of
from uno_arena.workers.reaper import Reaper, release_due_retries
from uno_arena.workers.settings import WorkerSettings

log = logging.getLogger(__name__)

LONGEST_RESTART_PAUSE_S = 30.0


class ArenaWorker(Worker):
    """An RQ worker that rides out Redis outages and runs a reaper per match queue it serves."""

    max_connection_wait_time = 5.0  # RQ's backoff while idle: notice that Redis is back within seconds

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._horse_exit: tuple[int | None, int | None] = (None, None)

    # --- the loop -------------------------------------------------------------------------------

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
        """RQ's work loop, restarted whenever it quits without being asked to (or through a Redis error)."""
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
                try:
                    worked |= bool(super().work(burst, with_scheduler=False, **options))
                except REDIS_DOWN as error:  # RQ's loop gave up, and its teardown could not reach Redis
                    self.log.error("Worker %s: lost Redis (%s)", self.name, error)
                    self._drop_subscription()
                except StopRequested:
                    return worked
                if self._stop_requested or self._shutdown_requested_date is not None or burst:
                    return worked
                if max_jobs is not None or max_idle_time is not None:
                    return worked
                pause = 1.0 if time.monotonic() - started > 60 else min(pause * 2, LONGEST_RESTART_PAUSE_S)
                self.log.warning("Worker %s: the work loop stopped unasked; starting it again in %.0f s once "
                                 "Redis answers", self.name, pause)  # fmt: skip
                time.sleep(pause)  # a backoff, so that a loop that keeps failing does not spin
                wait_for_redis(self.connection, f"worker {self.name}: restarting")
                self._clear_registration()
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
            reaper = Reaper(self._own_client(), prefix, interval=max(lease / 2, 0.5))
            release_due_retries(self.connection, prefix)  # at once: a burst may end before the first tick
            reaper.start()
            reapers.append(reaper)
        return reapers

    def _own_client(self) -> redis.Redis:
        """A client on a pool of its own: a thread's pool is no business of the work horses we fork."""
        pool = self.connection.connection_pool
        return redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class,
                                                                **pool.connection_kwargs))  # fmt: skip

    def _drop_subscription(self) -> None:
        try:
            self.unsubscribe()  # type: ignore[no-untyped-call]
        except REDIS_DOWN as error:
            self.log.debug("Worker %s: unsubscribing: %s", self.name, error)

    def _clear_registration(self) -> None:
        """Mark this worker's old registration dead, so that registering again under the name works."""
        try:
            self.register_death()  # type: ignore[no-untyped-call]
        except REDIS_DOWN as error:  # the next start says so if it still matters
            self.log.warning("Worker %s: %s", self.name, error)

    # --- how a failed job is logged ---------------------------------------------------------------

    def handle_exception(self, job: Job, *exc_info: Any) -> None:
        """(In the work horse.) A match that could not be played for a known reason (`MatchFailed`: a bot
        not connected, a refusal by the server) is one warning line with its match id and reason; RQ
        logs anything else with its traceback. Either way RQ then retries or fails the job as before."""
        error = exc_info[1] if len(exc_info) > 1 else None
        if not isinstance(error, MatchFailed):
            super().handle_exception(job, *exc_info)
            return
        self.log.warning("Worker %s: match %s failed: %s", self.name, error.match_id or job.description,
                         error.reason)  # fmt: skip
        call_exception_handlers(self._exc_handlers, job, *exc_info)

    # --- steps that may skip a beat -----------------------------------------------------------

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        if pipeline is not None:
            super().heartbeat(timeout, pipeline=pipeline)
            return
        try:
            super().heartbeat(timeout)
        except REDIS_DOWN as error:
            self.log.warning("Worker %s: heartbeat skipped, Redis unreachable: %s", self.name, error)

    def maintain_heartbeats(self, job: Job, execution: Execution) -> None:
        try:
            super().maintain_heartbeats(job, execution)
        except REDIS_DOWN as error:
            self.log.warning("Worker %s: job %s: heartbeat skipped, Redis unreachable: %s", self.name, job.id,
                             error)  # fmt: skip

    def set_state(self, state: str, pipeline: Any = None) -> None:
        try:
            super().set_state(state, pipeline)
        except REDIS_DOWN as error:
            self._state = state
            self.log.warning("Worker %s: state %s not saved, Redis unreachable: %s", self.name, state, error)

    def set_shutdown_requested_date(self) -> None:
        try:
            super().set_shutdown_requested_date()  # type: ignore[no-untyped-call]
        except REDIS_DOWN as error:
            self.log.warning("Worker %s: shutdown request not saved, Redis unreachable: %s", self.name, error)

    def run_maintenance_tasks(self) -> None:
        try:
            super().run_maintenance_tasks()  # type: ignore[no-untyped-call]
        except REDIS_DOWN as error:
            self.last_cleaned_at = now()  # type: ignore[assignment]  # at the next interval, not in a loop
            self.log.warning("Worker %s: maintenance skipped, Redis unreachable: %s", self.name, error)

    # --- steps that must happen -----------------------------------------------------------------

    def check_for_suspension(self, burst: bool) -> None:
        patiently(lambda: super(ArenaWorker, self).check_for_suspension(burst),
                  f"worker {self.name}: checking for suspension", None)  # fmt: skip

    def prepare_execution(self, job: Job) -> Execution:
        def attempt() -> Execution:
            before = set(self.executions)
            try:
                execution: Execution = super(ArenaWorker, self).prepare_execution(job)
            except REDIS_DOWN:
                for unsaved in set(self.executions) - before:  # the horse must get the one saved
                    del self.executions[unsaved]
                raise
            return execution

        return patiently(attempt, f"worker {self.name}: starting job {job.id}", None)

    def prepare_job_execution(self, job: Job, remove_from_intermediate_queue: bool = False) -> None:
        """(In the work horse.) The parent kills a horse that overruns the job's timeout, so no bound."""
        patiently(lambda: super(ArenaWorker, self).prepare_job_execution(job, remove_from_intermediate_queue),
                  f"job {job.id}: starting", None)  # fmt: skip

    def handle_job_success(self, job: Job, queue: Queue, started_job_registry: StartedJobRegistry,
                           execution: Execution) -> None:  # fmt: skip
        """(In the work horse.) A success RQ cannot file yet is filed once Redis is back, not failed."""
        file = super().handle_job_success
        patiently(lambda: file(job, queue, started_job_registry, execution),
                  f"job {job.id}: filing its success", None)  # fmt: skip

    def wait_for_horse(self) -> tuple[int | None, int | None, Any]:
        pid, status, usage = super().wait_for_horse()
        if pid:
            self._horse_exit = (pid, status)
        return pid, status, usage

    def monitor_work_horse(self, job: Job, queue: Queue, execution: Execution) -> None:
        """RQ's monitor; if Redis is unreachable when the horse has exited, RQ's account of a horse that
        died is settled once Redis is back."""
        self._horse_exit = (None, None)
        try:
            super().monitor_work_horse(job, queue, execution)
        except REDIS_DOWN as error:
            if self.horse_pid:  # still running: nothing here calls Redis unguarded, so this is not expected
                raise
            self.log.warning("Worker %s: job %s ended while Redis was unreachable (%s); settling it once "
                             "Redis answers", self.name, job.id, error)  # fmt: skip
            patiently(lambda: self._settle_dead_horse(job, queue, execution),
                      f"worker {self.name}: settling job {job.id}", None)  # fmt: skip

    def _settle_dead_horse(self, job: Job, queue: Queue, execution: Execution) -> None:
        """What RQ's monitor does after a horse exited abnormally, once Redis answers."""
        pid, status = self._horse_exit
        try:
            job_status = job.get_status()
        except InvalidJobOperation:
            return  # finished and expired
        if self._stopped_job_id == job.id:
            self._handle_stopped_job(job, queue, execution)
        elif job_status not in (JobStatus.FINISHED, JobStatus.FAILED):
            job.ended_at = now()
            signal = f" (signal {os.WTERMSIG(status)})" if status and os.WIFSIGNALED(status) else ""
            reason = f"Work-horse terminated unexpectedly; waitpid returned {status}{signal}; "
            self.log.warning("Worker %s: job %s failed (%s)", self.name, job.id, reason)
            self.handle_work_horse_killed(job, pid, status, None)  # type: ignore[no-untyped-call]
            self.handle_job_failure(job, queue=queue, exc_string=reason, execution=execution)
