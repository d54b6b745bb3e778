"""`uno-arena web --listen HOST:PORT`: the read-only leaderboard page, on waitress."""

from __future__ import annotations

import signal
from pathlib import Path

import click
import redis

from uno_arena.cli.options import with_redis
from uno_arena.leaderboard.web import ServerLimits, WebServer, create_app, normal_url_prefix, redis_client

DEFAULTS = ServerLimits()


@click.command("web")
@click.option("--listen", default="127.0.0.1:8080", show_default=True, help="HOST:PORT to serve on.")
@click.option(
    "--refresh",
    type=click.IntRange(1),
    default=5,
    show_default=True,
    help="Seconds between a live page's updates.",
)
@click.option("--threads", type=click.IntRange(1, 256), default=DEFAULTS.threads, show_default=True,
              help="Requests served at once; others wait (slow clients hold no thread).")  # fmt: skip
@click.option("--connection-limit", type=click.IntRange(1), default=DEFAULTS.connection_limit,
              show_default=True, help="Open connections; past it new ones wait to be accepted.")  # fmt: skip
@click.option("--channel-timeout", type=click.IntRange(1), default=DEFAULTS.channel_timeout_s,
              show_default=True, help="Seconds an idle or half-sent connection is kept open.")  # fmt: skip
@click.option("--replays", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="Also serve the replay files in DIR (`bot play --replay`, `match play`) at "
                                  "/match/MATCH_ID.")  # fmt: skip
@click.option("--url-prefix", default="", metavar="PATH", callback=lambda _c, _p, value: _url_prefix(value),
              help="Serve every page, file and API under PATH (e.g. /uno), for a reverse proxy that passes "
                   "the path on unchanged (docs/web.md).")  # fmt: skip
@click.option("--trust-proxy", is_flag=True, default=False,
              help="Believe the X-Forwarded-Prefix header (a proxy that strips its prefix says it there); "
                   "only behind a proxy that sets it, as a client could send its own.")  # fmt: skip
@with_redis
def web(listen: str, refresh: int, threads: int, connection_limit: int, channel_timeout: int,
        replays: Path | None, url_prefix: str, trust_proxy: bool, redis_url: str,
        key_prefix: str) -> None:  # fmt: skip
    """Serve the tournaments, their standings, the bots and the matches (replays and live) until Ctrl-C."""
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise click.ClickException(f"--listen: expected HOST:PORT, got {listen!r}")
    client = redis_client(redis_url)
    try:  # it must answer at the start; later, while it does not, the pages say so
        client.ping()
    except redis.RedisError as error:
        raise click.ClickException(f"cannot reach Redis at {redis_url}: {error}") from None
    limits = ServerLimits(threads, connection_limit, channel_timeout)
    try:
        server = WebServer(
            create_app(client, key_prefix, refresh, replays, url_prefix, trust_proxy),
            host.strip("[]"),
            int(port),
            limits,
        )
    except OSError as error:
        raise click.ClickException(f"cannot listen on {listen}: {error.strerror or error}") from None
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it like Ctrl-C
    urls = [url.rstrip("/") + url_prefix + "/" for url in server.urls]
    behind = " (and under a trusted proxy's X-Forwarded-Prefix)" if trust_proxy else ""
    click.echo(f"leaderboard at {', '.join(urls)}{behind} (Ctrl-C stops)")
    if replays is not None:
        click.echo(f"replay files of {replays} at {urls[0]}match/MATCH_ID (the file name without .json)")
    server.serve()


def _url_prefix(raw: str) -> str:
    try:
        return normal_url_prefix(raw)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
