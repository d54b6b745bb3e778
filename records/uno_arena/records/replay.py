"""A recorded match as readable text (hand by hand, with scores) or as JSON-ready values, and replay files.

Used by `uno-arena replay` and the web view. Enum values show by their plain names, read from the
bindings' descriptors. The text marks each fault where it happened (`Fault.action_index` and
`event_index`) and the automatic moves (the server's default for a faulted decision, and every decision
of a seat after it forfeited), so a forfeit does not read as normal play.

A replay file is `export`'s JSON (what `uno-arena replay MATCH_ID --json`
prints) in a file of its own: `uno-arena bot play --replay DIR` and `uno-arena match play` write them,
without Redis, and `uno-arena replay PATH` and `uno-arena web --replays DIR` read them back.

A replay file may come from anywhere, so reading one is bounded: a file over `MAX_REPLAY_BYTES` (a match's
file is some 100-300 KB) is refused before it is read (`ReplayFileTooLarge`), and a folder's index reads
only the head of each file, where its `summary` is (`read_replay_summary`). Everything in it is shown
through `printable`: the text's lines have every control character escaped, whatever bot names, ids or
fault details the file holds.
"""

from __future__ import annotations

import codecs
import json
import os
import random
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError
from google.protobuf.message import Message

from uno_arena.records import ruleset
from uno_arena.records.match import MatchRecord, RecordedMatch
from uno_arena.rules import KEEP, ConfigError, action_from_id, keep_skipped, new_match, play, to_move
from uno_arena.v1 import codec, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import described, name_of
from uno_arena.v1.printable import printable

REPLAY_SUFFIX = ".json"
MAX_REPLAY_BYTES = 8 * 1024 * 1024  # the largest replay file read (a match's is some 100-300 KB)
SUMMARY_HEAD_BYTES = 64 * 1024  # how much of a file's head `read_replay_summary` reads for its summary
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")
_SUMMARY_FIRST = re.compile(r'\s*\{\s*"summary"\s*:\s*')


class ReplayFileError(ValueError):
    """A replay file that is missing, unreadable or not a replay; the message names the file."""


class ReplayFileTooLarge(ReplayFileError):
    """A replay file over the size limit: refused before it is read (the message says both sizes)."""

    def __init__(self, path: Path, size: int, limit: int) -> None:
        super().__init__(f"{path}: too large to read as a replay file ({_mib(size)}; the limit is "
                         f"{_mib(limit)})")  # fmt: skip
        self.size, self.limit = size, limit


def _mib(size: int) -> str:
    """`8 MiB`, `161.2 MiB`, `512 bytes`."""
    if size < 1024 * 1024:
        return f"{size:,} bytes"
    return f"{size / (1024 * 1024):.1f}".removesuffix(".0") + " MiB"


def export(match: RecordedMatch) -> dict[str, object]:
    """The match as JSON-ready values; `automatic_events` (indices into `events`) are the events the text
    marks `[automatic]`, so the web view marks the same ones, and `to_move[i]` the seat whose decision
    comes next once `events[: i + 1]` happened (`seats_to_move`; null when the actions do not replay to
    the log), which the viewer marks "to move" (a reader of replay files ignores both)."""
    placed = placed_faults(match)[0]
    replayed = decisions(match)
    return {
        "summary": match.record.to_dict(),
        "finished": MessageToDict(match.finished, preserving_proto_field_name=True),
        "events": [MessageToDict(e, preserving_proto_field_name=True) for e in match.events],
        "automatic_events": sorted(_automatic_events(match, placed, replayed)),
        "to_move": seats_to_move(match, replayed),
    }


def hands_played(match: RecordedMatch) -> str:
    """`3`, or `1 completed (ended during hand 2)` when the server ended the match inside a hand (a
    forfeit, an abort): the hand the table shows is then one more than the hands scored."""
    completed = len(match.record.hands)
    started = sum(e.HasField("hand_started") for e in match.events)
    return f"{completed} completed (ended during hand {started})" if started > completed else str(completed)


AUTOMATIC = "  [automatic]"  # ends the line of an event of a move the server made for a seat


def lines(match: RecordedMatch) -> Iterator[str]:
    """The match as text: a heading (who, the seed, the rules), each hand's events and its scores, the
    result, then who forfeited and each seat's faults. Private cards show as the log holds them: a
    tournament's log has them all, a seat's view only its own (`hidden` otherwise).

    A fault shows as a `!!` line where it happened, before the events of the action applied for it;
    the events of the server's automatic moves end with `[automatic]`. Every line is `printable`: a bot
    name or fault detail from a file of unknown origin cannot act on a terminal."""
    return (printable(line) for line in _lines(match))


def _lines(match: RecordedMatch) -> Iterator[str]:
    summary = match.record
    bots = summary.bots
    yield f"{match.match_id}: {' vs '.join(bots)}, seed {summary.seed}"
    yield f"rules: {_rules_line(match.finished.rules, len(bots))}"
    placed, unplaced = placed_faults(match)
    faults_at: dict[int, list[PlacedFault]] = {}
    for placed_fault in placed:
        faults_at.setdefault(placed_fault.event_index, []).append(placed_fault)
    automatic = automatic_events(match, placed)
    hand = 0
    totals = [0] * len(bots)
    last_player: int | None = None  # the seat of the event before, if it was a play
    for index, event in enumerate(match.events):
        for placed_fault in faults_at.get(index, ()):
            yield from _fault_lines(placed_fault, match)
        kind = event.WhichOneof("kind")
        if kind is None:
            continue
        inner: Message = getattr(event, kind)
        mark = AUTOMATIC if index in automatic else ""
        if kind == "hand_started":
            hand += 1
            yield ""
            yield f"hand {hand}"
        elif kind == "hand_ended":
            totals = [t + p for t, p in zip(totals, event.hand_ended.points, strict=True)]
            reason = name_of(pb.HandEnd, event.hand_ended.reason)
            yield f"  hand ends ({reason}): points {list(event.hand_ended.points)}, totals {totals}"
        elif kind == "played":
            yield f"  {_played(event.played, last_player == event.played.seat, bots)}{mark}"
        elif kind in _SENTENCES:
            yield f"  {_SENTENCES[kind](inner, bots)}{mark}"
        else:
            yield f"  {_describe(kind, inner, bots)}{mark}"
        last_player = event.played.seat if kind == "played" else None
    for placed_fault in faults_at.get(len(match.events), ()):
        yield from _fault_lines(placed_fault, match)
    if hand > len(summary.hands):  # no MatchEnded in the log: the server ended it inside a hand
        yield f"  the match ends during hand {hand} ({summary.reason_name}): no points for it"
    winners = ", ".join(bots[w] for w in summary.winners) or "nobody"
    yield ""
    yield f"{summary.reason_name}: {winners} won; totals {list(summary.totals)}"
    yield from _outcome_lines(match, placed, unplaced)


@dataclass(frozen=True, slots=True)
class PlacedFault:
    """A recorded fault with where it happened: the index of the action applied for it in
    `FinishedMatch.actions`, the events logged before that action, and the hand it fell in (1 = first)."""

    fault: pb.Fault
    action_index: int
    event_index: int
    hand: int


def placed_faults(match: RecordedMatch) -> tuple[list[PlacedFault], list[pb.Fault]]:
    """The match's faults in the order they happened, and those whose place the record does not say (a
    record or replay file from before faults had one, or a place outside this log)."""
    events = match.events
    hand_of_event, hand = [], 0
    for event in events:
        hand += event.HasField("hand_started")
        hand_of_event.append(hand)
    placed, unplaced = [], []
    for fault in match.finished.faults:
        known = fault.HasField("action_index") and fault.HasField("event_index")
        if known and fault.event_index <= len(events) and fault.action_index < len(match.finished.actions):
            at = fault.event_index
            hand = hand_of_event[at] if at < len(events) else hand
            placed.append(PlacedFault(fault, fault.action_index, at, hand))
        else:
            unplaced.append(fault)
    placed.sort(key=lambda p: (p.action_index, p.event_index))
    return placed, unplaced


@dataclass(frozen=True, slots=True)
class Decision:
    """An applied action as the rules core replays it: whose decision it was, where its events begin."""

    seat: int
    first_event: int


def decisions(match: RecordedMatch) -> list[Decision] | None:
    """Each action of `FinishedMatch.actions`, replayed through the rules core from the record's rules
    and seed; None when they do not replay to this log (a replay file may come from anywhere).

    Records of uno-arena 0.2 and earlier hold no KEEP after a draw whose card could not be played
    (the turn ended by itself); replaying, that KEEP is taken as the rules core reads such lists
    (`keep_skipped`, `play_recorded`), and it is not one of the record's decisions: each entry stays
    the action of the same index, which a fault's `action_index` names, and the `kept` goes with the
    draw's events, as it did. A record whose last action is such a draw has its `kept` last in the
    log: that KEEP is taken too (a record of this version cut in that decision has none)."""
    finished = match.finished
    try:
        state = new_match(codec.rules_from(finished.rules, len(match.record.bots)),
                          random.Random(finished.seed))  # fmt: skip
        found = []
        for action_id in finished.actions:
            action = action_from_id(action_id)
            if keep_skipped(state, action):
                play(state, KEEP)
            found.append(Decision(to_move(state), len(state.events)))
            play(state, action)
        logged = match.events
        more = len(state.events) < len(logged)
        if more and logged[len(state.events)].HasField("kept") and keep_skipped(state, None):
            play(state, KEEP)
    except ValueError:  # ConfigError, InvalidActionError, IllegalActionError: not this match's
        return None
    return found if len(state.events) == len(match.events) else None


def automatic_actions(placed: Sequence[PlacedFault], replayed: Sequence[Decision]) -> set[int]:
    """Indices (in `FinishedMatch.actions`) of the moves the server made for a seat: the default
    applied for each faulted decision (not for a BOT_ERROR: the bot answered that itself) and every
    decision of a seat after it forfeited."""
    automatic = {p.action_index for p in placed if p.fault.kind != pb.FAULT_KIND_BOT_ERROR}
    for p in placed:
        if p.fault.forfeited:
            later = range(p.action_index + 1, len(replayed))
            automatic.update(i for i in later if replayed[i].seat == p.fault.seat)
    return automatic


def seats_to_move(match: RecordedMatch, replayed: Sequence[Decision] | None) -> list[int | None] | None:
    """For each step (the table after `events[: i + 1]`), the seat whose decision comes next: the seat of
    the first action whose events begin after it (`replayed`, from `decisions`). None at a step that
    ends a hand or the match (between hands nobody is to move) and after the last action; None for the
    whole match when its actions do not replay to its log. Public: whose turn it is is no secret."""
    if replayed is None:
        return None
    seats: list[int | None] = []
    upcoming = 0  # the first action whose events have not begun by this step
    for shown, event in enumerate(match.events, 1):
        while upcoming < len(replayed) and replayed[upcoming].first_event < shown:
            upcoming += 1
        ends = event.WhichOneof("kind") in ("hand_ended", "match_ended")
        seats.append(replayed[upcoming].seat if upcoming < len(replayed) and not ends else None)
    return seats


def automatic_events(match: RecordedMatch, placed: Sequence[PlacedFault]) -> set[int]:
    """Indices of the events that show automatic moves: those naming the action's own seat (its draw,
    its keep, its play, the cards it took), up to the end of the hand; not the other seats' consequences.
    Empty without faults, and when the record's actions do not replay to its log."""
    return _automatic_events(match, placed, decisions(match) if placed else None)


def _automatic_events(
    match: RecordedMatch, placed: Sequence[PlacedFault], replayed: Sequence[Decision] | None
) -> set[int]:
    """`automatic_events`, from the match's `decisions` (None: they do not replay to the log)."""
    if not placed or replayed is None:
        return set()
    marked = set()
    for action in sorted(automatic_actions(placed, replayed)):
        seat, start = replayed[action].seat, replayed[action].first_event
        end = replayed[action + 1].first_event if action + 1 < len(replayed) else len(match.events)
        for index in range(start, end):
            event = match.events[index]
            kind = event.WhichOneof("kind")
            if kind == "hand_ended" or kind is None:
                break
            inner = getattr(event, kind)
            names = inner.DESCRIPTOR.fields_by_name
            if any(name in names and getattr(inner, name) == seat for name in ("seat", "challenger")):
                marked.add(index)
    return marked


def _fault_lines(placed: PlacedFault, match: RecordedMatch) -> Iterator[str]:
    fault, bots = placed.fault, match.record.bots
    who = _name(fault.seat, bots)
    yield f"  !! {_fault_text(fault, bots)}"
    if fault.forfeited:
        then = "the match ends" if _ends_match(placed, match) else f"every later move of {who} is automatic"
        yield f"  !! {who} forfeits: {then}"


def _ends_match(forfeit: PlacedFault, match: RecordedMatch) -> bool:
    """Whether this forfeit left one seat, ending the match (MATCH_END_FORFEIT) after its action."""
    last = forfeit.action_index + 1 == len(match.finished.actions)
    return match.record.reason == pb.MATCH_END_FORFEIT and last


def _fault_text(fault: pb.Fault, bots: tuple[str, ...]) -> str:
    """`fault: bob timeout (no answer within 1 s), strike 2; applied draw`."""
    kind = name_of(pb.FaultKind, fault.kind)
    applied = fault.applied.text or (f"action {fault.applied.id}" if fault.HasField("applied") else "?")
    # a BOT_ERROR adds no strike unless the server counts them (`bot_errors_strike`)
    strikes = (
        f"{_count(fault.strikes, 'strike')} so far"
        if fault.kind == pb.FAULT_KIND_BOT_ERROR
        else f"strike {fault.strikes}"
    )
    return f"fault: {_name(fault.seat, bots)} {kind} ({fault.detail}), {strikes}; applied {applied}"


def _outcome_lines(
    match: RecordedMatch, placed: Sequence[PlacedFault], unplaced: Sequence[pb.Fault]
) -> Iterator[str]:
    """Who forfeited (when, why, and that the seat played on by automatic moves), each seat's faults,
    and the faults whose place the record does not say."""
    record, bots = match.record, match.record.bots
    for seat in record.forfeited:
        who = _name(seat, bots)
        forfeit = next((p for p in placed if p.fault.seat == seat and p.fault.forfeited), None)
        if forfeit is None:
            yield f"forfeited: {who} (when is not in this record)"
            continue
        kind = name_of(pb.FaultKind, forfeit.fault.kind)
        then = "" if _ends_match(forfeit, match) else "; its later moves were automatic"
        yield f"forfeited: {who} in hand {forfeit.hand} ({kind}, strike {forfeit.fault.strikes}){then}"
    faulted = [f"{_name(seat, bots)} {faults.described()}" for seat, faults in enumerate(record.faults)
               if faults.total]  # fmt: skip
    if faulted:
        yield f"faults: {'; '.join(faulted)}"
    if unplaced:
        yield "faults whose place this record does not say (recorded before faults had one):"
        for fault in unplaced:
            yield f"  {_fault_text(fault, bots)}"


def _rules_line(message: pb.RulesConfig, players: int) -> str:
    """`target 150; house rules: stacking, jump_in`; a record's rules are checked when played, but a
    replay file may come from anywhere: unreadable rules are said, not raised."""
    try:
        config = codec.rules_from(message, players)
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
        f"{field.name}={_show(field, value, bots)}"
        for field, value in inner.ListFields()
        if field.name not in ("seat", skip)
    ]
    return f"{who}{verb or kind.replace('_', ' ')} {' '.join(parts)}".rstrip()


def _name(seat: int, bots: tuple[str, ...]) -> str:
    return bots[seat] if seat < len(bots) else f"seat {seat}"


def _names(seats: Sequence[int], bots: tuple[str, ...]) -> str:
    return ", ".join(_name(seat, bots) for seat in seats) or "nobody"


def _count(number: int, thing: str) -> str:
    """`1 card`, `2 cards`."""
    return f"{number} {thing}{'' if number == 1 else 's'}"


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
    given = f"{_count(inner.count, 'card')} from {_name(inner.giver, bots)}"
    return f"{_name(inner.seat, bots)} receives {given}: {_cards(inner.cards, inner.hidden)}"


def _caught(inner: Message, bots: tuple[str, ...]) -> str:
    assert isinstance(inner, pb.Caught)
    return f"{_name(inner.catcher, bots)} catches {_name(inner.seat, bots)} without UNO"


def _challenged(inner: Message, bots: tuple[str, ...]) -> str:
    assert isinstance(inner, pb.Challenged)
    verdict = "guilty" if inner.guilty else "not guilty"
    return f"{_name(inner.challenger, bots)} challenges {_name(inner.seat, bots)}'s wild draw four: {verdict}"


def _hand_shown(inner: Message, bots: tuple[str, ...]) -> str:
    assert isinstance(inner, pb.HandShown)
    shown = f"{_name(inner.seat, bots)} shows their hand to {_name(inner.to, bots)}"
    return f"{shown}: {_cards(inner.cards, inner.hidden)}"


def _match_ended(inner: Message, bots: tuple[str, ...]) -> str:
    assert isinstance(inner, pb.MatchEnded)
    reason = name_of(pb.MatchEnd, inner.reason)
    return f"match ends ({reason}): {_names(inner.winners, bots)} won; totals {list(inner.totals)}"


def _cards(cards: Sequence[pb.Card], hidden: bool) -> str:
    return "(hidden)" if hidden else f"[{', '.join(_card(c) for c in cards)}]"


# events said as a sentence, every seat by its bot; the others by `_describe`'s `field=value`
_SENTENCES = {"swapped": _swapped, "hands_passed": _hands_passed, "received": _received, "caught": _caught,
              "challenged": _challenged, "hand_shown": _hand_shown, "match_ended": _match_ended}  # fmt: skip
# seat fields, said by bot wherever `_describe` shows an event as `field=value` (a kind added later)
_SEAT_FIELDS = frozenset({"catcher", "challenger", "to", "giver", "other", "winner", "winners"})


def _show(field: FieldDescriptor, value: Any, bots: tuple[str, ...] = ()) -> str:
    if field.name in _SEAT_FIELDS and field.type == FieldDescriptor.TYPE_UINT32:
        return _names(value, bots) if field.is_repeated else _name(value, bots)
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
    """A match played outside a tournament (the local arena, `match play`) as a record, to export; it
    finished at `recorded` (unix seconds), or now if not given."""
    ended = recorded or time.time()
    record = MatchRecord.from_finished(finished, tournament, index, finished.result.match_id, ended)
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


def read_replay_file(path: Path, max_bytes: int = MAX_REPLAY_BYTES) -> RecordedMatch:
    """The inverse of `write_replay_file`. Raises `ReplayFileError` for a missing or invalid file, and
    `ReplayFileTooLarge` for one over `max_bytes` (before reading it)."""
    raw = _read_bounded(path, max_bytes)
    try:
        values = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
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
        record = MatchRecord.from_json(json.dumps(values["summary"]), _modified(path))
    except (ParseError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ReplayFileError(f"{path}: not a valid replay file: {error}") from None
    if len(record.bots) != len(finished.result.bots) or any(
        len(e.hand_ended.points) != len(record.bots) for e in events if e.HasField("hand_ended")
    ):
        raise ReplayFileError(f"{path}: not a valid replay file: its summary and result name other seats")
    return RecordedMatch(record, finished, events, _modified(path))


def replay_file_size(path: Path) -> int:
    """The file's size in bytes; `ReplayFileError` if it is missing or cannot be read."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        raise ReplayFileError(f"{path}: no such replay file") from None
    except OSError as error:
        raise ReplayFileError(f"{path}: cannot read it: {error}") from None


def _read_bounded(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, at most `max_bytes` of them: a larger file is refused unread (and one that grows
    past the limit while read, when it does)."""
    size = replay_file_size(path)
    if size > max_bytes:
        raise ReplayFileTooLarge(path, size, max_bytes)
    try:
        with path.open("rb") as file:
            raw = file.read(max_bytes + 1)
    except FileNotFoundError:
        raise ReplayFileError(f"{path}: no such replay file") from None
    except OSError as error:
        raise ReplayFileError(f"{path}: cannot read it: {error}") from None
    if len(raw) > max_bytes:
        raise ReplayFileTooLarge(path, len(raw), max_bytes)
    return raw


def read_replay_summary(path: Path, max_bytes: int = MAX_REPLAY_BYTES) -> dict[str, Any]:
    """A replay file's `summary` (bots, winners, reason ...) as JSON values, read from the file's head.

    A replay file begins with its summary (`export`'s first key), so a folder's index reads at most
    `SUMMARY_HEAD_BYTES` of each file, however long its events. A file that does not begin so (written
    by hand) is read whole, within `max_bytes`. Raises `ReplayFileError` (`ReplayFileTooLarge`)."""
    try:
        with path.open("rb") as file:
            head = file.read(SUMMARY_HEAD_BYTES)
    except FileNotFoundError:
        raise ReplayFileError(f"{path}: no such replay file") from None
    except OSError as error:
        raise ReplayFileError(f"{path}: cannot read it: {error}") from None
    try:  # a character cut at the end of the head waits for bytes that are not read
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as error:
        raise ReplayFileError(f"{path}: not a replay file (not UTF-8: {error})") from None
    first = _SUMMARY_FIRST.match(text)
    if first is not None:
        try:
            summary, _ = json.JSONDecoder().raw_decode(text, first.end())
        except json.JSONDecodeError:
            summary = None  # cut by the head's end (or broken: the whole read below says which)
        if isinstance(summary, dict):
            return summary
    try:
        values = json.loads(_read_bounded(path, max_bytes))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ReplayFileError(f"{path}: not a replay file (not JSON: {error})") from None
    if not isinstance(values, dict) or not isinstance(values.get("summary"), dict):
        raise ReplayFileError(f"{path}: not a replay file (no summary)")
    summary = values["summary"]
    assert isinstance(summary, dict)
    return summary


def _modified(path: Path) -> float:
    """When the file was written: the finish time of a replay written before summaries kept one."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
