"""`uno-arena server`, `uno-arena bot register`, `uno-arena control-token`."""

from __future__ import annotations

import asyncio
import logging

import click

from uno_arena.cli.options import connect, with_redis
from uno_arena.records import identity
from uno_arena.server.app import serve
from uno_arena.server.settings import ServerSettings

DEFAULTS = ServerSettings()


@click.command("server")
@click.option("--listen", default="127.0.0.1:50051", show_default=True, help="HOST:PORT to listen on.")
@with_redis
@click.option(
    "--decision-timeout-ms", type=click.IntRange(10), default=DEFAULTS.decision_timeout_ms, show_default=True
)
@click.option(
    "--max-message-bytes", type=click.IntRange(1024), default=DEFAULTS.max_message_bytes, show_default=True
)
@click.option(
    "--max-matches-per-bot", type=click.IntRange(1), default=DEFAULTS.max_matches_per_bot, show_default=True
)
@click.option("--max-strikes", type=click.IntRange(1), default=DEFAULTS.max_strikes, show_default=True)
@click.option(
    "--disconnect-grace-ms", type=click.IntRange(0), default=DEFAULTS.disconnect_grace_ms, show_default=True
)
@click.option(
    "--drain-timeout-ms", type=click.IntRange(0), default=DEFAULTS.drain_timeout_ms, show_default=True
)
def server_command(listen: str, redis_url: str, key_prefix: str, **limits: int) -> None:
    """Run the match server until Ctrl-C (which lets running matches finish first)."""
    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    settings = ServerSettings(key_prefix=key_prefix, **limits)
    connect(redis_url).close()
    try:
        asyncio.run(serve(listen, redis_url, settings))
    except OSError as error:
        raise click.ClickException(str(error)) from None


@click.command("register")
@click.argument("name")
@click.option(
    "--replace", is_flag=True, help="Issue a new token for an existing bot (the old one stops working)."
)
@with_redis
def register(name: str, replace: bool, redis_url: str, key_prefix: str) -> None:
    """Create bot NAME and print its token, once: only its hash is stored."""
    try:
        token = identity.register_bot(connect(redis_url), key_prefix, name, replace=replace)
    except identity.IdentityError as error:
        raise click.ClickException(str(error)) from None
    click.echo(token)
    click.echo(f"bot {name!r} registered; keep the token above secret (it is not stored)", err=True)


@click.command("control-token")
@with_redis
def control_token(redis_url: str, key_prefix: str) -> None:
    """Create a control token (for workers and the CLI) and print it, once."""
    click.echo(identity.create_control_token(connect(redis_url), key_prefix))
