"""`uno-arena replay MATCH_ID|FILE`: a match, hand by hand (faults and automatic moves marked), or its whole
record as JSON.

A match id is read from Redis (a tournament's match); a path to a replay file (`bot play --replay`,
`match play`) is read from the file, with no Redis and in the base install, up to a size limit
(`--max-mib`). The text has every control character escaped (`records.replay.lines`): a bot's name or
fault detail never acts on the terminal.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from uno_arena.cli.main import PLATFORM_INSTALL
from uno_arena.cli.options import connect, with_redis
from uno_arena.records.match import RecordedMatch, load_match
from uno_arena.records.replay import (
    MAX_REPLAY_BYTES,
    REPLAY_SUFFIX,
    ReplayFileError,
    ReplayFileTooLarge,
    export,
    lines,
    read_replay_file,
)

MIB = 1024 * 1024


@click.command("replay")
@click.argument("match_id", metavar="MATCH_ID|FILE")
@click.option("--json", "as_json", is_flag=True, help="Export the result and the full event log as JSON.")
@click.option("--max-mib", type=click.IntRange(1), default=MAX_REPLAY_BYTES // MIB, show_default=True,
              help="The largest replay FILE read, in MiB (a match's is some 100-300 KB).")  # fmt: skip
@with_redis
def replay(match_id: str, as_json: bool, max_mib: int, redis_url: str, key_prefix: str) -> None:
    """Print a recorded match, hand by hand: a match id (a tournament's matches are listed by `uno-arena
    tournament status ID --matches`, and linked from the web view) or a replay file.

    Faults show as `!!` lines where they happened, with what the server applied; the moves the server
    made for a seat (a faulted decision, every decision after a forfeit) end with `[automatic]`. The
    end says the result's reason, who forfeited and when, and each seat's faults."""
    if _is_file_argument(match_id):
        match = _from_file(Path(match_id), max_mib * MIB)
    else:
        match = _from_redis(match_id, redis_url, key_prefix)
    if as_json:
        click.echo(json.dumps(export(match), indent=1))
    else:
        for line in lines(match):
            click.echo(line)


def _is_file_argument(argument: str) -> bool:
    """A path: an existing file, or anything ending in .json or naming a folder (a missing file then
    says so, rather than being looked up in Redis as a match id)."""
    return Path(argument).is_file() or argument.endswith(REPLAY_SUFFIX) or "/" in argument or "\\" in argument


def _from_file(path: Path, max_bytes: int) -> RecordedMatch:
    try:
        return read_replay_file(path, max_bytes)
    except ReplayFileTooLarge as error:
        raise click.ClickException(f"{error}; --max-mib reads a larger file you trust") from None
    except ReplayFileError as error:
        raise click.ClickException(str(error)) from None


def _from_redis(match_id: str, redis_url: str, key_prefix: str) -> RecordedMatch:
    try:
        client = connect(redis_url)
    except ImportError as error:  # the base install: files only
        if (error.name or "").partition(".")[0] != "redis":
            raise
        raise click.ClickException(
            f"no replay file {match_id!r}; reading a recorded match from Redis needs the platform: "
            f"{PLATFORM_INSTALL}"
        ) from None
    match = load_match(client, key_prefix, match_id)
    if match is None:
        raise click.ClickException(f"no recorded match {match_id!r} (nor a replay file of that name)")
    return match
