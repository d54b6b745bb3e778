"""`uno-arena tournament export`, `import` and `delete`: a tournament out of Redis into a file, back into
any Redis, and out of Redis for good (docs/operations.md, "Export, import and delete")."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from uno_arena.cli.options import connect, with_redis
from uno_arena.cli.words import plural
from uno_arena.leaderboard import board
from uno_arena.records.archive import DEFAULT_MAX_BYTES, ArchiveError
from uno_arena.records.tournament import TournamentError, being_played, check_exists
from uno_arena.records.transfer import (
    ArchiveSummary,
    check_archive,
    conflicts,
    export_tournament,
    publish_import,
    stage_import,
)
from uno_arena.workers.removal import Removal, delete_tournament

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Say what was done as JSON (its fields: docs/operations.md)."
)
PROGRESS_FROM = 200  # keys (export) or key lines (import): a smaller job ends before a bar says anything


@contextlib.contextmanager
def progress_bar(what: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on standard error, shown in a terminal once the job is big enough to be worth one;
    yields the callback (done, total) the job reports through."""
    console = Console(stderr=True)
    bar = Progress(TextColumn(f"[bold]{what}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console, transient=True, disable=not console.is_terminal)  # fmt: skip
    task = bar.add_task(what, total=None)

    def report(done: int, total: int) -> None:
        if total >= PROGRESS_FROM:
            bar.start()
        bar.update(task, completed=done, total=total)

    try:
        yield report
    finally:
        bar.stop()


def _echo_json(values: dict[str, Any]) -> None:
    click.echo(json.dumps(values, indent=1))


@click.command("export")
@click.argument("tournament_id")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--overwrite", is_flag=True, help="Replace FILE if it exists (default: refuse).")
@click.option("--force", is_flag=True,
              help="Export a tournament being played: a snapshot of this moment, its running and queued "
                   "matches in it as such (after an import, `tournament resume` queues them).")  # fmt: skip
@json_option
@with_redis
def export_command(tournament_id: str, file: Path, overwrite: bool, force: bool, as_json: bool,
                   redis_url: str, key_prefix: str) -> None:  # fmt: skip
    """Write the tournament to FILE: its spec, schedule, every match record and replay, standings, head
    to head and ratings, as gzip-compressed JSON lines (name it NAME.jsonl.gz) that `tournament import`
    reads into any Redis."""
    client = connect(redis_url)
    try:
        check_exists(client, key_prefix, tournament_id)
    except TournamentError as error:
        raise click.ClickException(str(error)) from None
    reason = being_played(client, key_prefix, tournament_id)
    if reason is not None and not force:
        raise click.ClickException(f"tournament {tournament_id!r} is being played: {reason}. Export it once "
                                   "it has ended, or with --force for a snapshot of this moment")  # fmt: skip
    table = board.current(client, key_prefix, tournament_id)
    try:
        with progress_bar(f"exporting {tournament_id}") as report:
            extra = {"leaderboard": table.to_dict()}  # for readers of the file; an import never reads it
            exported = export_tournament(client, key_prefix, tournament_id, file, extra, overwrite, report)
    except FileExistsError:
        raise click.ClickException(f"{file} exists: --overwrite replaces it") from None
    except TournamentError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"cannot write {file}: {error.strerror or error}") from None
    if as_json:
        _echo_json({"tournament": tournament_id, "file": str(file), "bytes": exported.bytes,
                    "keys": exported.keys, "matches": exported.matches,
                    "snapshot": reason is not None})  # fmt: skip
        return
    click.echo(f"exported {tournament_id} to {file}: {plural(exported.matches, 'match record')}, "
               f"{plural(exported.keys, 'key')}, {_size(exported.bytes)}")  # fmt: skip
    if reason is not None:
        click.echo(f"a snapshot while {reason.removeprefix('it ')}: after an import, "
                   "`uno-arena tournament resume` queues what was waiting", err=True)  # fmt: skip


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.1f} KiB" if size < 2**20 else f"{size / 2**20:.1f} MiB"


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--replace", is_flag=True,
              help="Replace the tournament of the same id here: once the file's copy is written aside and "
                   "reads, delete that one (its keys and RQ jobs; refused while it is being played) and put "
                   "the new one in its place. Default: refuse to import over it.")  # fmt: skip
@click.option("--max-mib", type=click.IntRange(1, 1 << 20), default=DEFAULT_MAX_BYTES // 2**20,
              show_default=True,
              help="Refuse a file holding more JSON than this, once decompressed.")  # fmt: skip
@json_option
@with_redis
def import_command(file: Path, replace: bool, max_mib: int, as_json: bool, redis_url: str,
                   key_prefix: str) -> None:  # fmt: skip
    """Restore the tournament of FILE (written by `tournament export`) into this Redis under this prefix:
    its leaderboard, head to head, every replay and the web view's pages as they were."""
    max_bytes = max_mib * 2**20
    try:
        summary = check_archive(file, key_prefix, max_bytes)
    except ArchiveError as error:
        raise click.ClickException(str(error)) from None
    tournament_id = summary.header.tournament_id
    client = connect(redis_url)
    replacing = bool(conflicts(client, key_prefix, summary))
    if replacing:
        if not replace:
            raise click.ClickException(f"tournament {tournament_id!r} already exists under {key_prefix!r}: "
                                       "--replace deletes it first (or import it into another Redis, "
                                       "database or --key-prefix)")  # fmt: skip
        reason = being_played(client, key_prefix, tournament_id)
        if reason is not None:  # refused before the file is read again (the deletion checks again)
            raise click.ClickException(f"tournament {tournament_id!r} is being played: {reason}: --replace "
                                       "replaces only a tournament that is not")  # fmt: skip
    # The file's copy is written aside (a staging prefix) and read back first: a file that cannot be
    # imported never costs the copy already here, which is deleted only then.
    try:
        with progress_bar(f"importing {tournament_id}") as report:
            staged = stage_import(client, key_prefix, file, summary, max_bytes, report)
    except (ArchiveError, TournamentError) as error:
        kept = f" (tournament {tournament_id!r} here is untouched)" if replacing else ""
        raise click.ClickException(f"{error}{kept}") from None
    replaced: Removal | None = None
    published = False
    try:
        if replacing:
            replaced = _delete(client, key_prefix, tournament_id, force=False)
            board.forget_deleted(client, key_prefix)
        imported = publish_import(client, staged)
        published = True
    except TournamentError as error:
        lost = (f"; tournament {tournament_id!r} that was here had been deleted first: import {file} again "
                "to put it back" if replaced is not None else "")  # fmt: skip
        raise click.ClickException(f"{error}{lost}") from None
    finally:
        if not published:
            staged.discard(client)
    board.take_in_imported(client, key_prefix, tournament_id)
    if as_json:
        header = summary.header
        _echo_json({"tournament": tournament_id, "file": str(file), "keys": imported.keys,
                    "matches": imported.matches, "replaced": replaced is not None,
                    "exported_at": header.exported_at, "exported_by": header.exported_by})  # fmt: skip
        return
    if replaced is not None:
        click.echo(_removed_line(replaced, "deleted the tournament here first"))
    click.echo(f"imported {tournament_id} from {file}: {plural(imported.matches, 'match record')}, "
               f"{plural(imported.keys, 'key')}")  # fmt: skip
    click.echo(f"see it with: uno-arena tournament status {tournament_id}")
    _note_bots(summary)


def _note_bots(summary: ArchiveSummary) -> None:
    spec = summary.header.about.get("spec")
    bots = spec.get("bots") if isinstance(spec, dict) else None
    if isinstance(bots, list) and bots:
        click.echo(f"its bots' identities are not in the file: register them here (uno-arena bot register) "
                   f"to play it on ({', '.join(map(str, bots))})", err=True)  # fmt: skip


def _delete(client: Any, key_prefix: str, tournament_id: str, force: bool) -> Removal:
    try:
        return delete_tournament(client, key_prefix, tournament_id, force=force)
    except TournamentError as error:
        raise click.ClickException(str(error)) from None


# How `delete` counts the keys it removed, by what they held (`owned.KeyRole`)
_KIND_NOUNS = {"tournament": "tournament key", "leaderboard": "leaderboard key"}


def _removed_line(removal: Removal, what: str) -> str:
    counts = ", ".join(plural(n, _KIND_NOUNS.get(kind, kind)) for kind, n in removal.counts().items())
    return (f"{what}: {plural(len(removal.keys), 'key')}{f' ({counts})' if counts else ''}, "
            f"{plural(len(removal.jobs), 'RQ job')}")  # fmt: skip


@click.command("delete")
@click.argument("tournament_id")
@click.option("--force", is_flag=True,
              help="Delete it even while it is being played: cancel it and stop its running matches first "
                   "(the match server plays those to their end; nothing records them).")  # fmt: skip
@json_option
@with_redis
def delete_command(tournament_id: str, force: bool, as_json: bool, redis_url: str, key_prefix: str) -> None:
    """Delete the tournament: every Redis key it owns (its record, schedule, match records and replays,
    leaderboard, live feeds) and its RQ jobs. Refused while it is being played, unless --force."""
    client = connect(redis_url)
    removal = _delete(client, key_prefix, tournament_id, force)
    rebuilt = board.forget_deleted(client, key_prefix)
    if as_json:
        _echo_json({"tournament": tournament_id, "listed": removal.listed,
                    "keys": [key.name for key in removal.keys], "counts": removal.counts(),
                    "jobs": removal.jobs, "stopped": removal.stopped, "unstopped": removal.unstopped,
                    "overall_leaderboard_rebuilt": rebuilt})  # fmt: skip
        return
    if removal.stopped:
        stopped = ", ".join(removal.stopped)
        click.echo(f"stopped {plural(len(removal.stopped), 'running match job')}: {stopped}")
    if removal.unstopped:
        click.echo(f"still running when deleted (their workers did not answer in time): "
                   f"{', '.join(removal.unstopped)}", err=True)  # fmt: skip
    click.echo(_removed_line(removal, f"deleted tournament {tournament_id}"))
    if rebuilt:
        click.echo("the leaderboard over every tournament was rebuilt without it")
