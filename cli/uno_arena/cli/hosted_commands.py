"""`uno-arena bot submit|versions|logs`: hosted bots' code (docs/hosting.md)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from rich.console import Console

from uno_arena.cli.options import connect, with_redis
from uno_arena.cli.tables import Column, json_option, print_fitted, wide_option
from uno_arena.records import hosted

_token = click.option(
    "--token", envvar="UNO_ARENA_BOT_TOKEN", required=True, help="The bot's token (env UNO_ARENA_BOT_TOKEN)."
)


@click.command("submit")
@click.argument("name")
@click.argument("path", metavar="PATH")
@_token
@with_redis
def submit(name: str, path: str, token: str, redis_url: str, key_prefix: str) -> None:
    """Store bot NAME's code as its next version (v1, v2, ...): runners run it from then on.

    PATH is path/to/bot.py:ClassName (that file alone) or a folder holding uno-arena-bot.toml with
    entry = "bot.py:ClassName" (every file of the folder). At most 1 MB packed. The new version replaces
    the old one for the next matches (docs/hosting.md).
    """
    try:
        package = hosted.pack(Path(path))
        number = hosted.submit(connect(redis_url), key_prefix, name, token, package)
    except (hosted.SubmitError, click.BadParameter) as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"cannot read {path}: {error.strerror or error}") from None
    click.echo(f"v{number}")
    click.echo(
        f"bot {name!r} v{number} submitted ({package.files} files, {len(package.code)} bytes packed, "
        f"entry {package.entry}); runners start it within seconds",
        err=True,
    )


_VERSION_COLUMNS = (
    Column("version", whole=True),
    Column("status", whole=True),
    Column("submitted (UTC)", whole=True, drop=2),
    Column("entry", drop=3),
    Column("packed", whole=True, drop=1),
    Column("reason"),
)


@click.command("versions")
@click.argument("name")
@wide_option
@json_option
@with_redis
def versions(name: str, wide: bool, as_json: bool, redis_url: str, key_prefix: str) -> None:
    """List bot NAME's submitted versions: which one runs, and why one stopped (disabled: its reason)."""
    try:
        found = hosted.versions(connect(redis_url), key_prefix, name)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "version": v.label,
                        "active": v.active,
                        "status": v.status.value,
                        "reason": v.reason,
                        "runner": v.runner,
                        "crashes": v.crashes,
                        "entry": v.entry,
                        "sha256": v.sha256,
                        "packed": v.packed,
                        "size": v.size,
                        "submitted": v.submitted,
                    }
                    for v in found
                ],
                indent=1,
            )
        )
        return
    if not found:
        raise click.ClickException(f"bot {name!r}: no code submitted (uno-arena bot submit {name} PATH)")
    rows = []
    for v in found:
        running = v.runner and v.status is hosted.Status.RUNNING
        status = v.status.value + (f" on {v.runner}" if running else "")
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(v.submitted))
        rows.append([v.label + (" *" if v.active else ""), status, when, v.entry, str(v.packed), v.reason])
    print_fitted(Console(), _VERSION_COLUMNS, rows, wide, title=f"versions of {name} (* runs)")


@click.command("logs")
@click.argument("name")
@click.option(
    "--version",
    "version",
    default=None,
    metavar="V",
    help="v1, v2, ... (default: the active one).",
)
@_token
@with_redis
def logs(name: str, version: str | None, token: str, redis_url: str, key_prefix: str) -> None:
    """Print what bot NAME's hosted code printed (its last 64 KiB): for its author, with its token."""
    try:
        number = hosted.parse_version(version) if version else None
        shown, text = hosted.logs(connect(redis_url), key_prefix, name, token, number)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"bot {name!r} v{shown}: last {len(text)} bytes of output", err=True)
    sys.stdout.write(text.decode("utf-8", errors="replace"))
    sys.stdout.flush()
