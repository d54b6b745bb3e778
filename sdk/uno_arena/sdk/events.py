"""Events and results as plain, typed values."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.json_format import MessageToDict

from uno_arena.sdk._protocol import ProtocolMismatch, members
from uno_arena.sdk.cards import Card, card_from
from uno_arena.v1 import bot_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import names


class EventKind(enum.StrEnum):
    """What an `Event` is: the protocol's `Event.kind` oneof, one member per message."""

    HAND_STARTED = "hand_started"
    DEALER_DREW = "dealer_drew"
    DEALER_CHOSEN = "dealer_chosen"
    SHUFFLED = "shuffled"
    DEALT = "dealt"
    FIRST_CARD = "first_card"
    COLOUR_CHOSEN = "colour_chosen"
    PLAYED = "played"
    DREW = "drew"
    KEPT = "kept"
    SKIPPED = "skipped"
    DIRECTION_CHANGED = "direction_changed"
    CAUGHT = "caught"
    CATCH_PASSED = "catch_passed"
    ACCEPTED = "accepted"
    CHALLENGED = "challenged"
    HAND_SHOWN = "hand_shown"
    RESHUFFLED = "reshuffled"
    HAND_ENDED = "hand_ended"
    MATCH_ENDED = "match_ended"


class HandEnd(enum.StrEnum):
    """Why a hand ended."""

    PLAYED_OUT = "played_out"
    NO_PROGRESS = "no_progress"
    MAX_TURNS = "max_turns"


class MatchEnd(enum.StrEnum):
    """Why a match ended."""

    TARGET_REACHED = "target_reached"
    MAX_HANDS = "max_hands"
    FORFEIT = "forfeit"
    ABORTED = "aborted"


class ShuffleReason(enum.StrEnum):
    """Why cards were shuffled (`EventKind.SHUFFLED`'s `reason`)."""

    DEAL = "deal"
    RESHUFFLE = "reshuffle"
    FIRST_CARD = "first_card"


class FaultKind(enum.StrEnum):
    """What the server recorded against a seat (`Fault.kind`)."""

    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    INVALID = "invalid"
    DISCONNECTED = "disconnected"
    BOT_ERROR = "bot_error"


def _event_kinds() -> dict[str, EventKind]:
    """The oneof's field names -> members, checked both ways at import."""
    fields = {f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields}
    ours = {kind.value for kind in EventKind}
    if fields != ours:
        raise ProtocolMismatch(f"Event.kind and the SDK's EventKind differ: {sorted(fields ^ ours)}")
    return {kind.value: kind for kind in EventKind}


EVENT_KINDS: dict[str, EventKind] = _event_kinds()
HAND_ENDS: dict[int, HandEnd] = members(pb.HandEnd.DESCRIPTOR, HandEnd)
MATCH_ENDS: dict[int, MatchEnd] = members(pb.MatchEnd.DESCRIPTOR, MatchEnd)
SHUFFLE_REASONS: dict[int, ShuffleReason] = members(pb.ShuffleReason.DESCRIPTOR, ShuffleReason)
FAULT_KINDS: dict[int, FaultKind] = members(pb.FaultKind.DESCRIPTOR, FaultKind)


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened. `kind` is e.g. "played", "drew", "caught", "challenged".

    `seat` is the seat it concerns (if any), `card` the card played or turned
    up, `cards` the cards you may see (your own draws, a hand shown to you),
    and `fields` every field of the protocol event (see game.proto).
    """

    kind: str
    seat: int | None
    card: Card | None
    cards: tuple[Card, ...]
    fields: dict[str, Any] = field(default_factory=dict)


def event_from(message: pb.Event) -> Event:
    kind = str(message.WhichOneof("kind"))
    inner = getattr(message, kind)
    declared = inner.DESCRIPTOR.fields_by_name
    seat = int(inner.seat) if "seat" in declared else None
    card = card_from(inner.card) if "card" in declared and inner.HasField("card") else None
    listed = "cards" in declared and declared["cards"].message_type is not None  # Shuffled.cards is a count
    cards = tuple(card_from(c) for c in inner.cards) if listed else ()
    values = MessageToDict(inner, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return Event(kind, seat, card, cards, values)


@dataclass(frozen=True, slots=True)
class HandResult:
    match_id: str
    reason: str  # "played_out", "no_progress" or "max_turns"
    winner: int | None
    points: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MatchResult:
    match_id: str
    reason: str  # "target_reached", "max_hands", "forfeit" or "aborted"
    winners: tuple[int, ...]
    totals: tuple[int, ...]
    bots: tuple[str, ...]
    forfeited: tuple[int, ...]


# number -> "played_out", ... / "target_reached", ...: the protocol's names
_HAND_ENDS: dict[int, str] = names(pb.HandEnd.DESCRIPTOR)
_MATCH_ENDS: dict[int, str] = names(pb.MatchEnd.DESCRIPTOR)


def hand_result_from(message: bot_pb2.HandResult) -> HandResult:
    hand = message.hand
    winner = hand.winner if hand.HasField("winner") else None
    return HandResult(message.match_id, _HAND_ENDS.get(hand.reason, "unknown"), winner, tuple(hand.points),
                      tuple(message.totals))  # fmt: skip


def match_result_from(message: pb.MatchResult) -> MatchResult:
    return MatchResult(message.match_id, _MATCH_ENDS.get(message.reason, "unknown"), tuple(message.winners),
                       tuple(message.totals), tuple(message.bots), tuple(message.forfeited))  # fmt: skip


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """A match this bot was seated in."""

    match_id: str
    seat: int
    bots: tuple[str, ...]
    rules: dict[str, Any]
    decision_timeout: float  # seconds per decision


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault the server recorded against this bot in one match.

    `applied` is the id of the action the server applied instead (see `Observation.legal`),
    `strikes` this seat's faults in the match so far (a `BOT_ERROR` adds none by default), and
    `forfeited` is True when this fault made the seat forfeit the match.
    """

    match_id: str
    seat: int
    kind: FaultKind
    detail: str
    applied: int | None
    strikes: int
    forfeited: bool


def fault_from(message: pb.Fault) -> Fault:
    applied = int(message.applied.id) if message.HasField("applied") else None
    return Fault(message.match_id, int(message.seat), FAULT_KINDS.get(message.kind, FaultKind.INVALID),
                 message.detail, applied, int(message.strikes), message.forfeited)  # fmt: skip
