"""`uno-arena runner`: run the hosted bots' code in sandboxes (docs/hosting.md)."""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from types import FrameType

import click

from uno_arena.cli.log_format import log_format_option, say
from uno_arena.cli.options import connect, with_redis
from uno_arena.runner.sandbox import Limits, SandboxError
from uno_arena.runner.service import Runner, RunnerSettings

DEFAULTS = RunnerSettings(server_socket=Path(), work_dir=Path())
LIMITS = Limits()


@click.command("runner")
@log_format_option("runner")
@with_redis
@click.option(
    "--server-socket",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="PATH",
    help="The match server's Unix socket (uno-arena server --unix-socket PATH): "
    "the one way out of each bot's sandbox.",
)
@click.option(
    "--work-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("/var/lib/uno-arena-runner"),
    show_default=True,
    help="Where each bot's code is unpacked, one private folder per bot.",
)
@click.option(
    "--id", "runner_id", default="", help="The runner's name (default: host, pid, a random suffix)."
)
@click.option("--max-bots", type=click.IntRange(1, 1000), default=DEFAULTS.max_bots, show_default=True)
@click.option(
    "--max-matches",
    type=click.IntRange(1),
    default=DEFAULTS.max_matches,
    show_default=True,
    help="Matches each bot plays at once.",
)
@click.option(
    "--memory-mb",
    type=click.IntRange(32),
    default=LIMITS.memory_bytes // 2**20,
    show_default=True,
    help="Each bot's memory, its /tmp included.",
)
@click.option(
    "--pids",
    type=click.IntRange(8),
    default=LIMITS.pids,
    show_default=True,
    help="Each bot's processes and threads.",
)
@click.option(
    "--cpu",
    type=click.FloatRange(0.05),
    default=LIMITS.cpu_quota_us / LIMITS.cpu_period_us,
    show_default=True,
    help="Each bot's CPU, in cores (the same for every bot).",
)
@click.option("--tmpfs-mb", type=click.IntRange(1), default=LIMITS.tmpfs_bytes // 2**20, show_default=True)
@click.option(
    "--lease-ms",
    type=click.IntRange(500),
    default=DEFAULTS.lease_ms,
    show_default=True,
    help="A dead runner's bots start on another runner after at most this.",
)
@click.option(
    "--uid-base",
    type=click.IntRange(1000),
    default=DEFAULTS.uid_base,
    show_default=True,
    help="Bot i runs as uid and gid BASE+i: runners on one host need apart ranges.",
)
@click.option(
    "--crash-limit",
    type=click.IntRange(1),
    default=DEFAULTS.crash_limit,
    show_default=True,
    help="Exits within --crash-window that disable a version.",
)
@click.option("--crash-window", type=click.FloatRange(1), default=DEFAULTS.crash_window_s, show_default=True)
@click.option(
    "--drain-seconds",
    type=click.FloatRange(0),
    default=DEFAULTS.drain_s,
    show_default=True,
    help="How long a replaced or stopped bot's running matches have to finish.",
)
def runner(
    redis_url: str,
    key_prefix: str,
    server_socket: Path,
    work_dir: Path,
    runner_id: str,
    max_bots: int,
    max_matches: int,
    memory_mb: int,
    pids: int,
    cpu: float,
    tmpfs_mb: int,
    lease_ms: int,
    uid_base: int,
    crash_limit: int,
    crash_window: float,
    drain_seconds: float,
) -> None:
    """Run the hosted bots' code in sandboxes until Ctrl-C (docs/hosting.md).

    Each active hosted bot version runs on one runner at a time (a lease in Redis): start as many runners
    as you like, on hosts whose match server listens on a Unix socket (--unix-socket). Runs as root, with
    bubblewrap and writable cgroups. Ctrl-C or SIGTERM drains the bots (their matches finish) and stops.
    """
    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    period = LIMITS.cpu_period_us
    limits = Limits(
        memory_bytes=memory_mb * 2**20,
        pids=pids,
        cpu_quota_us=int(cpu * period),
        cpu_period_us=period,
        tmpfs_bytes=tmpfs_mb * 2**20,
    )
    settings = RunnerSettings(
        server_socket=server_socket.resolve(),
        work_dir=work_dir.resolve(),
        key_prefix=key_prefix,
        runner_id=runner_id,
        limits=limits,
        max_bots=max_bots,
        max_matches=max_matches,
        lease_ms=lease_ms,
        uid_base=uid_base,
        crash_limit=crash_limit,
        crash_window_s=crash_window,
        drain_s=drain_seconds,
    )
    try:
        service = Runner(connect(redis_url), settings)
    except SandboxError as error:
        raise click.ClickException(str(error)) from None
    stops: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stops.append(signum)
        if len(stops) > 1:
            raise KeyboardInterrupt
        service.stop()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
    say(f"runner {service.id} starting")
    try:
        service.run()
    except SandboxError as error:
        raise click.ClickException(str(error)) from None
    say(f"runner {service.id} stopped")
