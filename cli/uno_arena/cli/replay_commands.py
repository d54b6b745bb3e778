"""`uno-arena replay MATCH_ID`: a recorded match, hand by hand, or its whole record as JSON."""

from __future__ import annotations

import json

import click

from uno_arena.cli.options import connect, with_redis
from uno_arena.records.match import load_match
from uno_arena.records.replay import export, lines


@click.command("replay")
@click.argument("match_id")
@click.option("--json", "as_json", is_flag=True, help="Export the result and the full event log as JSON.")
@with_redis
def replay(match_id: str, as_json: bool, redis_url: str, key_prefix: str) -> None:
    """Print a recorded match (ids are listed by `uno-arena tournament status`)."""
    match = load_match(connect(redis_url), key_prefix, match_id)
    if match is None:
        raise click.ClickException(f"no recorded match {match_id!r}")
    if as_json:
        click.echo(json.dumps(export(match), indent=1))
    else:
        for line in lines(match):
            click.echo(line)
