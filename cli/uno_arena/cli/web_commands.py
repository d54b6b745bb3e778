"""`uno-arena web --listen HOST:PORT`: the read-only web view (`uno_arena.web`), on waitress.

With `--replays DIR` and no Redis URL (neither `--redis-url` nor `UNO_ARENA_REDIS_URL`) it serves the
replay files alone, with no Redis client: that needs Flask and waitress, not the platform, so it runs
from the base install plus `pip install 'uno-arena[replays]'`. Nothing of the web view is imported
here before the command runs, so each way can say what is missing.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
from click.core import ParameterSource

from uno_arena.cli.log_format import log_format_option, say
from uno_arena.cli.main import PLATFORM_INSTALL, PLATFORM_MODULES
from uno_arena.cli.options import ping, with_redis
from uno_arena.web.limits import ServerLimits

if TYPE_CHECKING:
    import redis

DEFAULTS = ServerLimits()
MIB = 1024 * 1024
MAX_REPLAY_MIB = 8  # records.replay.MAX_REPLAY_BYTES, not imported here (a test holds them equal)
REPLAYS_INSTALL = "pip install 'uno-arena[replays]'"
REPLAYS_MODULES = frozenset({"flask", "werkzeug", "jinja2", "markupsafe", "itsdangerous", "waitress"})


@click.command("web")
@log_format_option("web")
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
                                  "/match/MATCH_ID; without a Redis URL, serve only them (no Redis "
                                  "needed).")  # fmt: skip
@click.option("--live-streams-per-client", type=click.IntRange(0), default=2, show_default=True,
              help="Live streams open at once from one client address (0: no limit of its own); behind a "
                   "proxy, the proxy is one client unless --trust-proxy.")  # fmt: skip
@click.option("--max-replay-mib", type=click.IntRange(1), default=MAX_REPLAY_MIB, show_default=True,
              help="The largest replay file shown, in MiB (a match's is some 100-300 KB); a larger one is "
                   "refused (413), never read.")  # fmt: skip
@click.option("--url-prefix", default="", metavar="PATH",
              help="Serve every page, file and API under PATH (e.g. /uno), for a reverse proxy that passes "
                   "the path on unchanged (docs/web.md).")  # fmt: skip
@click.option("--trust-proxy", is_flag=True, default=False,
              help="Believe the X-Forwarded-Prefix header (a proxy that strips its prefix says it there) and "
                   "the client address the proxy adds to X-Forwarded-For; only behind a proxy that sets "
                   "them, as a client could send its own.")  # fmt: skip
@with_redis
def web(listen: str, refresh: int, threads: int, connection_limit: int, channel_timeout: int,
        replays: Path | None, live_streams_per_client: int, max_replay_mib: int, url_prefix: str,
        trust_proxy: bool, redis_url: str, key_prefix: str) -> None:  # fmt: skip
    """Serve the tournaments, their standings, the bots and the matches (replays and live) until Ctrl-C."""
    context = click.get_current_context()
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise click.ClickException(f"--listen: expected HOST:PORT, got {listen!r}")
    source = context.get_parameter_source("redis_url")
    replays_only = replays is not None and source in (None, ParameterSource.DEFAULT)
    try:
        from uno_arena.web.app import WebServer, create_app, normal_url_prefix, redis_client
    except ImportError as error:
        _missing(context, error, replays_only)
    try:
        url_path = normal_url_prefix(url_prefix)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="'--url-prefix'") from None
    client: redis.Redis | None = None
    if not replays_only:
        try:
            from uno_arena.records.connection import RedisUrlError
        except ImportError as error:
            _missing(context, error, replays_only)
        try:
            client = redis_client(redis_url)
        except RedisUrlError as error:
            raise click.BadParameter(str(error), param_hint="'--redis-url'") from None
        ping(client, redis_url)  # it must answer at the start; later, while it does not, the pages say so
    limits = ServerLimits(threads, connection_limit, channel_timeout, live_streams_per_client)
    try:
        server = WebServer(
            create_app(client, key_prefix, refresh, replays, url_path, trust_proxy, max_replay_mib * MIB),
            host.strip("[]"),
            int(port),
            limits,
        )
    except OSError as error:
        raise click.ClickException(f"cannot listen on {listen}: {error.strerror or error}") from None
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it like Ctrl-C
    urls = [url.rstrip("/") + url_path + "/" for url in server.urls]
    behind = " (and under a trusted proxy's X-Forwarded-Prefix)" if trust_proxy else ""
    if replays_only:
        say(f"replay files of {replays} at {', '.join(urls)}{behind} (no Redis URL given: only "
            "they are served; Ctrl-C stops)")  # fmt: skip
    else:
        say(f"leaderboard at {', '.join(urls)}{behind} (Ctrl-C stops)")
        if replays is not None:
            say(f"replay files of {replays} at {urls[0]}match/MATCH_ID (the file name without .json)")
    server.serve()


def _missing(context: click.Context, error: ImportError, replays_only: bool) -> NoReturn:
    """Say what to install for what was asked (exit 1), or raise the error if it is not a missing extra."""
    module = (error.name or "").partition(".")[0]
    if replays_only and module in REPLAYS_MODULES:
        click.echo(f"{context.command_path} --replays needs Flask and waitress: {REPLAYS_INSTALL}", err=True)
    elif not replays_only and module in PLATFORM_MODULES | REPLAYS_MODULES:
        click.echo(f"{context.command_path} needs the platform: {PLATFORM_INSTALL}", err=True)
    else:
        raise error
    context.exit(1)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
