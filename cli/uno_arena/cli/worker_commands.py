"""`uno-arena worker`: an RQ worker on the project's queue, plus the reaper that requeues lost matches."""

from __future__ import annotations

import os
import socket

import click
from rq import Worker

from uno_arena.cli.options import connect, with_redis
from uno_arena.workers.queue import match_queue, queue_name
from uno_arena.workers.reaper import Reaper
from uno_arena.workers.settings import LEASE_VARIABLE, TOKEN_VARIABLE


@click.command("worker")
@with_redis
@click.option("--control-token", envvar=TOKEN_VARIABLE, required=True,
              help=f"Control token for the match server (env {TOKEN_VARIABLE}).")  # fmt: skip
@click.option("--name", help="Worker name (default: prefix, host and pid).")
@click.option("--burst", is_flag=True, help="Stop when the queue is empty.")
@click.option("--lease-seconds", type=click.FloatRange(0.5), default=15.0, show_default=True,
              help="A match whose worker shows no sign of life this long is queued again.")  # fmt: skip
def worker(redis_url: str, key_prefix: str, control_token: str, name: str | None, burst: bool,
           lease_seconds: float) -> None:  # fmt: skip
    """Play queued matches. Start as many as you like, on any machine that reaches Redis and the server.

    Equivalent: `rq worker --with-scheduler -u URL PREFIX.matches` with UNO_ARENA_CONTROL_TOKEN set
    (but without the reaper, so a killed worker's match waits for RQ's own cleanup or `tournament resume`).
    """
    os.environ[TOKEN_VARIABLE] = control_token  # the work horse (a fork) reads them
    os.environ[LEASE_VARIABLE] = str(lease_seconds)
    client = connect(redis_url)
    reaper = Reaper(connect(redis_url), key_prefix, interval=max(lease_seconds / 2, 0.5))
    reaper.start()
    name = name or f"{key_prefix}-{socket.gethostname()}-{os.getpid()}".replace(":", "-")
    rq_worker = Worker([match_queue(client, key_prefix)], connection=client, name=name)
    click.echo(f"worker {rq_worker.name} on queue {queue_name(key_prefix)}")
    try:
        rq_worker.work(with_scheduler=True, burst=burst)
    finally:
        reaper.stop()
