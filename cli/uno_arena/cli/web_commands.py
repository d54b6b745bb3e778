"""`uno-arena web --listen HOST:PORT`: the read-only leaderboard page."""

from __future__ import annotations

import click
from werkzeug.serving import make_server

from uno_arena.cli.options import connect, with_redis
from uno_arena.leaderboard.web import create_app


@click.command("web")
@click.option("--listen", default="127.0.0.1:8080", show_default=True, help="HOST:PORT to serve on.")
@click.option(
    "--refresh", type=click.IntRange(1), default=5, show_default=True, help="Seconds between refreshes."
)
@with_redis
def web(listen: str, refresh: int, redis_url: str, key_prefix: str) -> None:
    """Serve standings, head to head, tournament progress and recent matches (with replays) until Ctrl-C."""
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise click.ClickException(f"--listen: expected HOST:PORT, got {listen!r}")
    server = make_server(host, int(port), create_app(connect(redis_url), key_prefix, refresh), threaded=True)
    click.echo(f"leaderboard at http://{host}:{server.server_port}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
