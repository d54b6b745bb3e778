"""`uno-arena server --processes N`: N match servers on one host, one asyncio process each, on ports of their
own (port sharing stays off), all in the same pool; the parent forwards SIGINT/SIGTERM and waits.

Each child is `uno-arena server` again with the same options, `--processes 1` and its own `--listen`
(and `--advertise`, `--metrics`) port: the port given, the next one, and so on (port 0: each picks a
free one). The
children run in a session of their own, so a Ctrl-C in the terminal reaches the parent only, which
passes each signal on once: the first drains them all (their running matches finish), a second stops
them at once, as with one server.

Exit status: 0 when every child stopped cleanly after a signal; 1 when one failed (it said why on
stderr), including a child that exits during the first `STARTUP_S` seconds, after which the parent
stops the others. A child that dies later is not restarted: the pool places no new match on it, and
its running matches are played again elsewhere (docs/scale.md); the others serve on, and the parent
exits 1 once they have stopped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType

import click

from uno_arena.cli.log_format import LOG_FORMAT_VARIABLE, in_json, say
from uno_arena.cli.options import REDIS_URL_VARIABLE

STARTUP_S = 5.0  # a child that exits this soon failed to start: the parent stops the others
POLL_S = 0.1
# set for each child, not passed through
PER_PROCESS = ("processes", "listen", "advertise", "metrics", "redis_url")


def process_count(value: str) -> int:
    """`--processes`: a number from 1, or `auto` (one per core this process may run on)."""
    if value == "auto":
        cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
        return max(1, len(cores))
    if not value.isdigit() or int(value) < 1:
        raise click.BadParameter(f"{value!r}: a number of processes (1 or more) or auto",
                                 param_hint="'--processes'")  # fmt: skip
    return int(value)


def nth_port(address: str, index: int) -> str:
    """`address` with its port moved up by `index` (a port 0 stays 0: each process picks its own)."""
    host, _, port = address.rpartition(":")
    return address if int(port) == 0 else f"{host}:{int(port) + index}"


def passed_through(context: click.Context) -> list[str]:
    """The command's own options as given (from the command line or the environment), to repeat to each
    child; the per-process ones and the Redis URL (which may hold a password: it goes by environment)
    are left out."""
    args: list[str] = []
    for parameter in context.command.params:
        if not isinstance(parameter, click.Option) or not parameter.expose_value:
            continue
        if parameter.name in PER_PROCESS:
            continue
        value = context.params.get(parameter.name or "")
        flag = parameter.opts[0]
        if parameter.is_flag:
            args += [flag] if value else []
        elif parameter.multiple:
            for item in value or ():
                args += [flag, str(item)]
        elif value is not None:
            args += [flag, str(value)]
    return args


@dataclass
class Child:
    index: int
    listen: str
    process: subprocess.Popen[bytes]
    exited: int | None = None


def run_processes(count: int, listen: str, advertise: str, redis_url: str, options: Sequence[str],
                  metrics: tuple[str, int] | None = None) -> int:  # fmt: skip
    """Start `count` servers and wait for all of them; return the exit status (module docstring).
    `metrics`: each serves its own at that port and the next ones (port 0: each its own)."""
    environment = {**os.environ, REDIS_URL_VARIABLE: redis_url,
                   LOG_FORMAT_VARIABLE: "json" if in_json() else "plain"}  # fmt: skip
    children: list[Child] = []
    signals: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        signals.append(signum)
        for child in children:
            if child.process.poll() is None:
                os.kill(child.process.pid, signum)

    previous = {signum: signal.signal(signum, forward) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        for index in range(count):
            child_listen = nth_port(listen, index)
            own = ["--listen", child_listen]
            if advertise:
                own += ["--advertise", nth_port(advertise, index)]
            if metrics is not None:
                host, port = metrics
                own += ["--metrics", nth_port(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", index)]
            command = [sys.executable, "-m", "uno_arena.cli", "server", "--processes", "1", *own, *options]
            process = subprocess.Popen(command, env=environment, start_new_session=True)
            children.append(Child(index, child_listen, process))
        pids = ", ".join(str(c.process.pid) for c in children)
        say(f"started {count} match server processes on {', '.join(c.listen for c in children)} (pids "
            f"{pids}); Ctrl-C stops them all", err=True)  # fmt: skip
        started = time.monotonic()
        failed = False
        while any(child.exited is None for child in children):
            time.sleep(POLL_S)
            for child in children:
                if child.exited is not None or (status := child.process.poll()) is None:
                    continue
                child.exited = status
                if signals:
                    continue
                failed = failed or status != 0
                early = time.monotonic() - started < STARTUP_S
                then = "stopping the others" if early else "the others serve on"
                say(f"server process {child.index} (pid {child.process.pid}, {child.listen}) exited with "
                    f"status {status}; {then}", err=True)  # fmt: skip
                if early:
                    forward(signal.SIGTERM, None)
        failed = failed or any(child.exited != 0 for child in children)
        return 1 if failed else 0
    finally:
        for child in children:
            if child.process.poll() is None:  # only when this process itself is failing
                child.process.kill()
                child.process.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
