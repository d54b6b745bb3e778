"""A recorded match as readable text (hand by hand, with scores) or as JSON-ready values, and replay files.

Used by `uno-arena replay` and the web view. Enum values show by their plain names, read from the
bindings' descriptors. A replay file is `export`'s JSON (what `uno-arena replay MATCH_ID --json`
prints) in a file of its own: `uno-arena bot play --replay DIR` and `uno-arena match play` write them,
without Redis, and `uno-arena replay PATH` and `uno-arena web --replays DIR` read them back.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError
from google.protobuf.message import Message

from uno_arena.records import ruleset
from uno_arena.records.match import MatchRecord, RecordedMatch
from uno_arena.rules import ConfigError
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import described, name_of

REPLAY_SUFFIX = ".json"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")


class ReplayFileError(ValueError):
    """A replay file that is missing, unreadable or not a replay; the message names the file."""


def export(match: RecordedMatch) -> dict[str, object]:
    return {
        "summary": match.record.to_dict(),
        "finished": MessageToDict(match.finished, preserving_proto_field_name=True),
        "events": [MessageToDict(e, preserving_proto_field_name=True) for e in match.events],
    }


def lines(match: RecordedMatch) -> Iterator[str]:
    """The match as text: a heading (who, the seed, the rules), each hand's events and its scores, the
    result. Private cards show as the log holds them: a tournament's log has them all, a seat's view
    only its own (`hidden` otherwise)."""
    summary = match.record
    bots = summary.bots
    yield f"{match.match_id}: {' vs '.join(bots)}, seed {summary.seed}"
    yield f"rules: {_rules_line(match.finished.rules, len(bots))}"
    hand = 0
    totals = [0] * len(bots)
    last_player: int | None = None  # the seat of the event before, if it was a play
    for event in match.events:
        kind = event.WhichOneof("kind")
        if kind is None:
            continue
        inner: Message = getattr(event, kind)
        if kind == "hand_started":
            hand += 1
            yield ""
            yield f"hand {hand}"
        elif kind == "hand_ended":
            totals = [t + p for t, p in zip(totals, event.hand_ended.points, strict=True)]
            reason = name_of(pb.HandEnd, event.hand_ended.reason)
            yield f"  hand ends ({reason}): points {list(event.hand_ended.points)}, totals {totals}"
        elif kind == "played":
            yield f"  {_played(event.played, last_player == event.played.seat, bots)}"
        elif kind in _HOUSE_RULE_EVENTS:
            yield f"  {_HOUSE_RULE_EVENTS[kind](inner, bots)}"
        else:
            yield f"  {_describe(kind, inner, bots)}"
        last_player = event.played.seat if kind == "played" else None
    winners = ", ".join(bots[w] for w in summary.winners) or "nobody"
    yield ""
    yield f"{summary.reason_name}: {winners} won; totals {list(summary.totals)}"


def _rules_line(message: pb.RulesConfig, players: int) -> str:
    """`target 150; house rules: stacking, jump_in`; a record's rules are checked when played, but a
    replay file may come from anywhere: unreadable rules are said, not raised."""
    try:
        config = ruleset.from_message(message, players)
    except ConfigError as error:
        return f"unreadable ({error})"
    return f"target {config.target_score}; {ruleset.summary(config)}"


def _describe(kind: str, inner: Message, bots: tuple[str, ...], verb: str = "", skip: str = "") -> str:
    """`alice played card=red draw two colour=red cards_left=3`: who first (seat 0 included), then
    every field that is set (but `skip`), enum values and cards by name."""
    who = ""
    if "seat" in inner.DESCRIPTOR.fields_by_name:
        who = f"{_name(getattr(inner, 'seat'), bots)} "  # noqa: B009 (the field exists on this event kind only)
    parts = [
        f"{field.name}={_show(field, value)}"
        for field, value in inner.ListFields()
        if field.name not in ("seat", skip)
    ]
    return f"{who}{verb or kind.replace('_', ' ')} {' '.join(parts)}".rstrip()


def _name(seat: int, bots: tuple[str, ...]) -> str:
    return bots[seat] if seat < len(bots) else f"seat {seat}"


def _played(played: pb.Played, laid: bool, bots: tuple[str, ...]) -> str:
    """A play; out of turn on an identical card (jump_in), or `laid` with the play before it (multi_play:
    the same seat's consecutive plays; between two turns of a seat something else always happens)."""
    if played.jump_in:
        return _describe("played", played, bots, verb="jumps in with", skip="jump_in")
    return _describe("played", played, bots, verb="also lays" if laid else "")


def _swapped(inner: Message, bots: tuple[str, ...]) -> str:
    assert isinstance(inner, pb.Swapped)
    return f"{_name(inner.seat, bots)} swaps hands with {_name(inner.other, bots)}"


def _hands_passed(inner: Message, bots: tuple[str, ...]) -> str:
    assert isinstance(inner, pb.HandsPassed)
    way = "clockwise (to the left)" if inner.direction > 0 else "counter-clockwise (to the right)"
    return f"every hand passes one seat {way}"


def _received(inner: Message, bots: tuple[str, ...]) -> str:
    assert isinstance(inner, pb.Received)
    cards = f"[{', '.join(_card(c) for c in inner.cards)}]" if not inner.hidden else "(hidden)"
    return f"{_name(inner.seat, bots)} receives {inner.count} cards from {_name(inner.giver, bots)}: {cards}"


_HOUSE_RULE_EVENTS = {"swapped": _swapped, "hands_passed": _hands_passed, "received": _received}


def _show(field: FieldDescriptor, value: Any) -> str:
    if field.is_repeated:
        return "[" + ", ".join(_one(field, v) for v in value) + "]"
    return _one(field, value)


def _one(field: FieldDescriptor, value: Any) -> str:
    if field.enum_type is not None:
        return described(field.enum_type, value)
    if isinstance(value, pb.Card):
        return _card(value)
    if isinstance(value, Message):
        return "{" + " ".join(f"{f.name}={_show(f, v)}" for f, v in value.ListFields()) + "}"
    return str(value)


def _card(value: pb.Card) -> str:
    """`red draw two`, `wild`: its index is for lookup tables only."""
    colour = name_of(pb.Colour, value.colour) if value.colour else ""
    return f"{colour} {name_of(pb.Rank, value.rank)}".strip().replace("_", " ")


def recorded_match(
    finished: control_pb2.FinishedMatch,
    events: Sequence[pb.Event],
    *,
    tournament: str = "",
    index: int = 0,
    recorded: float = 0.0,
) -> RecordedMatch:
    """A match played outside a tournament (the local arena, `match play`) as a record, to export."""
    record = MatchRecord.from_finished(finished, tournament, index, finished.result.match_id)
    return RecordedMatch(record, finished, list(events), recorded)


def replay_file_name(match_id: str) -> str:
    """`MATCH_ID.json`, with anything but letters, digits, `_`, `.` and `-` made `_` (no path escapes)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", match_id).lstrip(".") or "match"
    return f"{safe[:200]}{REPLAY_SUFFIX}"


def write_replay_file(match: RecordedMatch, folder: Path) -> Path:
    """Write the match's replay file into `folder` (made if missing); returns its path.

    Written to a temporary name and renamed, so a reader never sees half a file.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / replay_file_name(match.match_id)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(export(match), indent=1) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def replay_path_in(folder: Path, match_id: str) -> Path | None:
    """The replay file of `match_id` in `folder`, if it is there; None for a missing one or an id that
    is not a plain file name (never a path outside `folder`)."""
    if not _SAFE_NAME.fullmatch(match_id) or ".." in match_id:
        return None
    path = folder / f"{match_id}{REPLAY_SUFFIX}"
    return path if path.is_file() else None


def read_replay_file(path: Path) -> RecordedMatch:
    """The inverse of `write_replay_file`. Raises `ReplayFileError` for a missing or invalid file."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReplayFileError(f"{path}: no such replay file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ReplayFileError(f"{path}: cannot read it: {error}") from None
    try:
        values = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ReplayFileError(f"{path}: not a replay file (not JSON: {error})") from None
    missing = [
        k for k in ("summary", "finished", "events") if not isinstance(values, dict) or k not in values
    ]
    if missing:
        raise ReplayFileError(f"{path}: not a replay file (no {', '.join(missing)}; expected what "
                              "`uno-arena replay MATCH_ID --json` prints)")  # fmt: skip
    try:
        finished = ParseDict(values["finished"], control_pb2.FinishedMatch())
        events = [ParseDict(e, pb.Event()) for e in values["events"]]
        record = MatchRecord.from_json(json.dumps(values["summary"]))
    except (ParseError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ReplayFileError(f"{path}: not a valid replay file: {error}") from None
    if len(record.bots) != len(finished.result.bots) or any(
        len(e.hand_ended.points) != len(record.bots) for e in events if e.HasField("hand_ended")
    ):
        raise ReplayFileError(f"{path}: not a valid replay file: its summary and result name other seats")
    return RecordedMatch(record, finished, events, path.stat().st_mtime)
