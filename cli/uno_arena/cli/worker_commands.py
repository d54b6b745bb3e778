"""`uno-arena worker`: an `ArenaWorker` (RQ's worker, outage-proof, reaper included) on the prefix's queue."""

from __future__ import annotations

import importlib
import logging
import os
import socket

import click

from uno_arena.cli.log_format import log_format_option, say
from uno_arena.cli.metrics import Address, metrics_option, serve_metrics
from uno_arena.cli.options import connect, tls_options, with_redis
from uno_arena.v1.channels import ClientTLS
from uno_arena.workers.jobs import REFRESH_JOB
from uno_arena.workers.queue import match_queue, queue_name
from uno_arena.workers.settings import (
    LEASE_S,
    LEASE_VARIABLE,
    REDIS_WAIT_S,
    REDIS_WAIT_VARIABLE,
    SERVER_WAIT_S,
    SERVER_WAIT_VARIABLE,
    TOKEN_VARIABLE,
)
from uno_arena.workers.worker import ArenaWorker


@click.group("worker", invoke_without_command=True)
@log_format_option("worker")
@with_redis
@click.option("--control-token", envvar=TOKEN_VARIABLE,
              help=f"Control token for the match server (env {TOKEN_VARIABLE}); required.")  # fmt: skip
@tls_options
@click.option("--name", help="Worker name (default: prefix, host and pid).")
@click.option("--burst", is_flag=True, help="Stop when the queue is empty.")
@click.option("--lease-seconds", type=click.FloatRange(0.5), default=LEASE_S, show_default=True,
              help="A match whose worker shows no sign of life this long is queued again.")  # fmt: skip
@click.option("--server-wait", type=click.FloatRange(0), default=SERVER_WAIT_S, show_default=True,
              envvar=SERVER_WAIT_VARIABLE,
              help="Seconds a job waits for a match server that is down or restarting before the attempt "
                   f"fails (env {SERVER_WAIT_VARIABLE}).")  # fmt: skip
@click.option("--redis-wait", type=click.FloatRange(0), default=REDIS_WAIT_S, show_default=True,
              envvar=REDIS_WAIT_VARIABLE,
              help="Seconds a job waits for Redis to record a result before the attempt fails; the worker "
                   f"itself waits for Redis as long as it takes (env {REDIS_WAIT_VARIABLE}).")  # fmt: skip
@metrics_option("the worker's metrics (matches played, failed and retried, job durations, waits)")
@click.pass_context
def worker(context: click.Context, redis_url: str, key_prefix: str, control_token: str | None,
           tls: ClientTLS, name: str | None, burst: bool, lease_seconds: float, server_wait: float,
           redis_wait: float, metrics: Address | None) -> None:  # fmt: skip
    """Play queued matches. Start as many as you like, on any machine that reaches Redis and the server.

    Each worker also moves retries whose backoff is over to the queue and
    requeues the matches of workers that died (its reaper), so none depends
    on another; it waits out Redis and match server restarts, and a Redis refusing writes.

    Equivalent: `rq worker -w uno_arena.workers.worker.ArenaWorker -u URL PREFIX.matches` with
    UNO_ARENA_CONTROL_TOKEN set. Plain `rq worker --with-scheduler` plays matches too, but has no
    reaper and quits when Redis restarts under a busy worker.

    A tournament names its match server; the worker decides how to reach it: with TLS (--tls, or
    --tls-ca FILE for a private CA, and --tls-client-cert/--tls-client-key for a server that requires
    them). A match on a server off this machine is refused (recorded as failed) rather than played with
    the control token in clear, unless --insecure.

    `uno-arena worker health` says whether workers are alive (their heartbeats in Redis).
    """
    if context.invoked_subcommand is not None:
        return  # `worker health`: its own options say where to look
    if not control_token:
        parameter = next(p for p in context.command.params if p.name == "control_token")
        raise click.MissingParameter(ctx=context, param=parameter)
    os.environ[TOKEN_VARIABLE] = control_token  # the work horse (a fork) and the reaper read them
    os.environ.update(tls.to_env())
    os.environ[LEASE_VARIABLE] = str(lease_seconds)
    os.environ[SERVER_WAIT_VARIABLE] = str(server_wait)
    os.environ[REDIS_WAIT_VARIABLE] = str(redis_wait)
    logging.getLogger("uno_arena").setLevel(logging.INFO)  # what the jobs and the reaper do, in the log
    client = connect(redis_url)
    # the match jobs queue the leaderboard's refresh by its name: its module is loaded here once, so each
    # work horse (a fork) that runs one starts with it, and a worker that could not run it says so now
    importlib.import_module(REFRESH_JOB.rpartition(".")[0])
    name = name or f"{key_prefix}-{socket.gethostname()}-{os.getpid()}".replace(":", "-")
    arena_worker = ArenaWorker([match_queue(client, key_prefix)], connection=client, name=name)
    if metrics is not None:
        say(f"metrics at {serve_metrics(metrics, arena_worker.metrics.registry)}")
    say(f"worker {arena_worker.name} on queue {queue_name(key_prefix)}")
    arena_worker.work(burst=burst)


# Exit statuses of `worker health` (docs/operations.md) other than 0 (healthy) and 2 (click's usage error)
UNHEALTHY, REDIS_DOWN = 1, 3


@worker.command("health")
@with_redis
@click.option("--name", help="The worker to check (its name: `uno-arena worker --name`, or the one it said "
                             "as it started); default: every worker on the prefix's queue.")  # fmt: skip
@click.option("--max-age", type=click.FloatRange(0, min_open=True), default=None, metavar="SECONDS",
              help="Also call a worker unhealthy whose last heartbeat is older than this (an idle "
                   "`uno-arena worker` heartbeats every 45 s, a busy one every 30 s); default: RQ's own "
                   "limit, past which it drops the worker.")  # fmt: skip
def health(redis_url: str, key_prefix: str, name: str | None, max_age: float | None) -> None:
    """Say whether workers are alive: exit 0 if Redis answers and every worker asked for heartbeats.

    A probe for a supervisor (a container's HEALTHCHECK, a systemd timer, Kubernetes): a line per worker
    (its name, whether it is healthy, its last heartbeat), then the exit status: 0 healthy; 1 a worker
    is not (no heartbeat in Redis, stopped, or older than --max-age), or no worker is registered on the
    queue; 3 Redis does not answer; 2 a usage error.
    """
    import redis

    from uno_arena.records.connection import RedisUrlError, client, explain, redact
    from uno_arena.workers.health import check

    try:
        store = client(redis_url, socket_connect_timeout=5, socket_timeout=5)
    except RedisUrlError as error:
        raise click.BadParameter(str(error), param_hint="'--redis-url'") from None
    try:
        store.ping()
        found = check(store, key_prefix, name, max_age)
    except redis.RedisError as error:
        say(f"unhealthy: Redis at {redact(redis_url)} does not answer: {explain(error, redis_url)}", err=True)
        raise SystemExit(REDIS_DOWN) from None
    finally:
        store.close()
    for each in found.workers:
        say(f"{each.name}: {'healthy' if each.healthy else 'unhealthy'}: {each.detail}",
            err=not each.healthy)  # fmt: skip
    for gone in found.gone:
        say(f"{gone}: gone: still listed on the queue, but its heartbeat stopped long enough for RQ to drop "
            "it (killed, frozen); not counted (RQ's maintenance unlists it within 10 minutes)")  # fmt: skip
    if not found.workers:
        say(f"unhealthy: no worker is registered on queue {queue_name(key_prefix)}", err=True)
        raise SystemExit(UNHEALTHY)
    if not found.healthy:
        raise SystemExit(UNHEALTHY)
