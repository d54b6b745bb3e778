"""The index of a folder of replay files, for the web view without Redis (`uno-arena web --replays DIR`
and no Redis URL): the newest files first, each with its bots, winner and end, linked to its viewer.

It reads only the files (each one's `summary`, from the file's head: `read_replay_summary`), so it
imports Flask and nothing of the platform. At most `LISTED` files are read per request (the newest); the
page says how many more there are, and a file over the size limit is listed as too large.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Blueprint, render_template

from uno_arena.records.replay import (
    REPLAY_SUFFIX,
    ReplayFileError,
    read_replay_summary,
    replay_file_size,
    replay_path_in,
)
from uno_arena.v1.printable import printable
from uno_arena.web.context import context

log = logging.getLogger(__name__)
blueprint = Blueprint("replay_index", __name__)

LISTED = 100  # replay files read and listed per request, newest first


@dataclass(frozen=True, slots=True)
class ReplayRow:
    """One replay file as the index lists it; `problem` says why a file did not read as a replay."""

    match_id: str  # the file's name without .json: its viewer is /match/<match_id>
    modified: str
    bots: tuple[str, ...] = ()
    winners: tuple[str, ...] = ()
    reason: str = ""
    problem: str = ""


@blueprint.get("/")
def index() -> str:
    folder = context().replays
    assert folder is not None  # an app without Redis always has its folder (`create_app`)
    files = _replay_files(folder)
    limit = context().max_replay_bytes
    rows = [_row(path, modified, limit) for modified, path in files[:LISTED]]
    return render_template("replays.html", rows=rows, total=len(files), folder=str(folder))


def _replay_files(folder: Path) -> list[tuple[float, Path]]:
    """The folder's replay files the viewer serves, newest first (a file removed meanwhile is left out)."""
    found = []
    try:
        entries = list(folder.iterdir())
    except OSError as error:
        log.warning("replay files: cannot list %s: %s", folder, error)
        return []
    for path in entries:
        if path.suffix != REPLAY_SUFFIX or replay_path_in(folder, path.stem) is None:
            continue  # not a replay file's name, a folder, or a partial file being written (`.x.partial`)
        try:
            found.append((path.stat().st_mtime, path))
        except OSError:
            continue
    return sorted(found, key=lambda item: (-item[0], item[1].name))


def _row(path: Path, modified: float, limit: int) -> ReplayRow:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(modified))
    try:
        size = replay_file_size(path)
        if size > limit:
            log.warning("replay files: %s is too large to show (%d bytes; limit %d)", path, size, limit)
            return ReplayRow(path.stem, when, problem=f"too large to show ({size:,} bytes; the limit is "
                                                      f"{limit:,})")  # fmt: skip
        summary: Any = read_replay_summary(path, limit)
        bots = tuple(printable(str(bot)) for bot in summary["bots"])  # a file may come from anywhere
        winners = tuple(bots[seat] for seat in summary["winners"] if 0 <= int(seat) < len(bots))
        return ReplayRow(path.stem, when, bots, winners, str(summary["reason"]))
    except (ReplayFileError, ValueError, KeyError, TypeError) as error:
        log.warning("replay files: %s does not read as a replay: %r", path, error)
        return ReplayRow(path.stem, when, problem="not a readable replay file")
