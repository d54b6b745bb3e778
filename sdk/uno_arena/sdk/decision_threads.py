"""`DecisionThreads`: the daemon threads that run a synchronous `Bot.decide`, for the connection loop
and the local arena alike.

Daemons, so that a `decide` that never returns cannot keep the process alive after its last Ctrl-C
(the threads of `asyncio.to_thread`'s executor are joined at exit: `bot run` would hang for ever).
Reused when idle; one more is started only while all are busy (several matches at once, or a `decide`
still running after its deadline, which keeps its thread until it returns and never holds up the next).
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeAlias

_Job: TypeAlias = tuple[Callable[[Any], Any], Any, "concurrent.futures.Future[Any]"]


class DecisionThreads:
    """`submit(function, argument)` runs `function(argument)` on an idle thread (or a new one); `close`
    ends every thread once its current call, if any, has returned."""

    def __init__(self, name: str = "decide") -> None:
        self.name = name
        self._idle: list[_DecisionThread] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, function: Callable[[Any], Any], argument: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            thread = self._idle.pop() if self._idle else _DecisionThread(self)
        thread.jobs.put((function, argument, future))
        return future

    def done(self, thread: _DecisionThread) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(thread)
                return
        thread.jobs.put(None)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for thread in idle:
            thread.jobs.put(None)


class _DecisionThread:
    """One daemon thread of `DecisionThreads`: a call at a time, until told None."""

    def __init__(self, pool: DecisionThreads) -> None:
        self.pool = pool
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        threading.Thread(target=self._run, name=pool.name, daemon=True).start()

    def _run(self) -> None:
        while (job := self.jobs.get()) is not None:
            function, argument, future = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(function(argument))
                except BaseException as error:  # the bot's own failure: its caller reports it
                    future.set_exception(error)
            self.pool.done(self)
