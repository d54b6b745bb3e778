"""A match's page: the viewer of its replay (from Redis, or a replay file) or, while it is played, of its
live public events; and the replay's JSON, which the viewer's script steps through.

The page says what the server knows (bots, winner, end reason, seed, rules, faults, the text replay),
so it reads without JavaScript; `static/viewer.js` draws the table at each step from the events. Its
settings (JSON in the page) carry the protocol's names and labels (`names.viewer_names`), so the
script holds no copy of them.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, abort, jsonify, render_template, url_for

from uno_arena.records import live, ruleset
from uno_arena.records.match import RecordedMatch, load_match
from uno_arena.records.replay import (
    ReplayFileError,
    ReplayFileTooLarge,
    export,
    hands_played,
    lines,
    read_replay_file,
    replay_file_size,
    replay_path_in,
)
from uno_arena.records.tournament import is_match_id
from uno_arena.rules import ConfigError
from uno_arena.v1 import codec
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import name_of
from uno_arena.v1.printable import printable
from uno_arena.web.context import context
from uno_arena.web.names import viewer_names

if TYPE_CHECKING:  # annotations only: the replay files alone are served without a Redis client
    import redis

log = logging.getLogger(__name__)
blueprint = Blueprint("viewer", __name__)

# A replay file over LARGE_REPLAY_BYTES takes seconds and some ten times its size in memory to read: at
# most LARGE_READS such reads run at once (the others wait), so the process's memory stays bounded and
# the usual files (some 100-300 KB) never wait behind them.
LARGE_REPLAY_BYTES = 1024 * 1024
LARGE_READS = 2
_large_reads = threading.BoundedSemaphore(LARGE_READS)


@dataclass(frozen=True, slots=True)
class FaultRow:
    """One fault as the summary lists it; `step` is where the viewer shows it (None: not known)."""

    seat: int
    bot: str
    kind: str
    detail: str
    applied: str
    strikes: int
    forfeited: bool
    step: int | None


@dataclass(frozen=True, slots=True)
class MatchView:
    """What match.html shows above the table; `live` pages know only the match id, its seats and its
    tournament (the rest arrives as events)."""

    match_id: str
    live: bool
    bots: tuple[str, ...]
    tournament: str = ""
    winners: tuple[str, ...] = ()
    totals: tuple[int, ...] = ()
    reason: str = ""
    seed: str = ""
    rules: str = ""
    target: int | None = None
    hands: str = ""
    forfeited: tuple[str, ...] = ()
    faults: tuple[FaultRow, ...] = ()
    text: str = ""
    script: dict[str, Any] = field(default_factory=dict)  # the viewer's settings, as JSON in the page


@blueprint.get("/match/<match_id>.json")
def match_json(match_id: str) -> Response:
    web = context()
    found = _recorded(web.client, web.prefix, match_id, web.replays)
    if found is None:
        abort(404, f"no recorded match {match_id!r}")
    return jsonify(export(found))


@blueprint.get("/match/<match_id>")
def match(match_id: str) -> str:
    """The replay of a recorded match; else, while it is played, its live view; else a 404."""
    web = context()
    found = _recorded(web.client, web.prefix, match_id, web.replays)
    if found is not None:
        view = replay_view(found)
    elif web.client is None:
        abort(404, f"no replay file of {match_id!r}")
    else:
        bots = live.running_bots(web.client, web.prefix, match_id)
        if bots is None:
            abort(404, f"no recorded or running match {match_id!r}")
        view = live_view(match_id, bots)
    # `<` escaped: no bot name or match id can close the script element it is written into
    script = json.dumps(view.script).replace("<", "\\u003c")
    return render_template("match.html", match_view=view, script=script)


def replay_view(found: RecordedMatch) -> MatchView:
    summary = found.record
    bots = tuple(printable(bot) for bot in summary.bots)  # a replay file may come from anywhere
    rules, target = _rules(found, len(bots))
    faults = tuple(_fault_row(fault, bots) for fault in found.finished.faults)
    script = {"mode": "replay", "match_id": found.match_id, "bots": list(bots), "target": target,
              "json_url": url_for("viewer.match_json", match_id=found.match_id),
              "names": viewer_names()}  # fmt: skip
    return MatchView(
        match_id=found.match_id,
        live=False,
        bots=bots,
        tournament=summary.tournament,
        winners=tuple(bots[w] for w in summary.winners if w < len(bots)),
        totals=summary.totals,
        reason=summary.reason_name,
        seed=str(summary.seed),
        rules=rules,
        target=target,
        hands=hands_played(found),
        forfeited=tuple(bots[s] for s in summary.forfeited if s < len(bots)),
        faults=faults,
        text="\n".join(lines(found)),
        script=script,
    )


def live_view(match_id: str, bots: tuple[str, ...]) -> MatchView:
    tournament = match_id.rpartition("-m")[0] if is_match_id(match_id) else ""
    script = {"mode": "live", "match_id": match_id, "bots": list(bots), "target": None,
              "json_url": url_for("viewer.match_json", match_id=match_id),
              "events_url": url_for("live.events", match_id=match_id), "names": viewer_names()}  # fmt: skip
    return MatchView(match_id=match_id, live=True, bots=bots, tournament=tournament, script=script)


def _rules(found: RecordedMatch, players: int) -> tuple[str, int | None]:
    """The rules said as everywhere else, and the target score; a replay file may come from anywhere,
    so rules that do not read are said, not raised."""
    try:
        config = codec.rules_from(found.finished.rules, players)
    except ConfigError as error:
        return f"unreadable ({error})", None
    return ruleset.summary(config), config.target_score


def _fault_row(fault: pb.Fault, bots: tuple[str, ...]) -> FaultRow:
    # `event_index` counts the events logged before the action applied for the fault: the viewer's
    # step N shows the table after N events, so that action's first event is step event_index + 1.
    # A fault recorded before the field existed, or one that belongs to no decision, has no step.
    step = fault.event_index + 1 if fault.HasField("event_index") else None
    bot = bots[fault.seat] if fault.seat < len(bots) else f"seat {fault.seat}"
    return FaultRow(fault.seat, bot, name_of(pb.FaultKind, fault.kind), printable(fault.detail),
                    fault.applied.text, fault.strikes, fault.forfeited, step)  # fmt: skip


def _recorded(
    client: redis.Redis | None, prefix: str, match_id: str, replays: Path | None
) -> RecordedMatch | None:
    """The match from Redis (if there is one), else from the replay files; None if neither has it (an
    unreadable replay file is a 404 saying so, one over the size limit a 413)."""
    found = load_match(client, prefix, match_id) if client is not None and is_match_id(match_id) else None
    path = replay_path_in(replays, match_id) if found is None and replays is not None else None
    if path is not None:
        limit = context().max_replay_bytes
        try:
            if replay_file_size(path) > LARGE_REPLAY_BYTES:
                with _large_reads:
                    found = read_replay_file(path, limit)
            else:
                found = read_replay_file(path, limit)
        except ReplayFileTooLarge as error:
            log.warning("%s", error)
            abort(413, too_large(match_id, error))
        except ReplayFileError as error:
            log.warning("%s", error)
            abort(404, f"the replay file of {match_id!r} is not readable")
    return found


def too_large(match_id: str, error: ReplayFileTooLarge) -> str:
    """What a page says of a replay file over the size limit."""
    return (f"the replay file of {match_id!r} is too large to show ({error.size:,} bytes; the limit is "
            f"{error.limit:,}: uno-arena web --max-replay-mib)")  # fmt: skip
