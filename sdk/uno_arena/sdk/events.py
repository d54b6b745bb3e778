"""Events and results as plain, typed values: SDK enums and `Card`s only, never protobuf names."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias, cast

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from uno_arena.sdk._protocol import ProtocolMismatch, members
from uno_arena.sdk.cards import COLOURS, Card, Colour, card_from, cards_from
from uno_arena.v1 import bot_pb2
from uno_arena.v1 import game_pb2 as pb


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
    SWAPPED = "swapped"  # seven_zero: `seat` swapped hands with `fields["other"]`
    HANDS_PASSED = "hands_passed"  # seven_zero: every hand moved one seat in `fields["direction"]`
    RECEIVED = "received"  # seven_zero: `seat` now holds the `count` cards `fields["giver"]` held


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


class DrawReason(enum.StrEnum):
    """Why a seat drew (`EventKind.DREW`'s `reason`; a string in the protocol, listed in game.proto)."""

    DRAW = "draw"  # it chose to draw
    DRAW_TWO = "draw_two"  # hit by a Draw Two
    WILD_DRAW_FOUR = "wild_draw_four"  # hit by a Wild Draw Four (accepted, or the first card)
    CHALLENGE = "challenge"  # lost a challenge, as the challenger (6) or the guilty player (4); stacked: more
    UNO_PENALTY = "uno_penalty"  # caught not calling UNO


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
DRAW_REASONS: dict[str, DrawReason] = {reason.value: reason for reason in DrawReason}

Reason: TypeAlias = DrawReason | ShuffleReason | HandEnd | MatchEnd
"""An event's `reason`: which enum depends on the kind (drew, shuffled, hand_ended, match_ended)."""


def _no_fields() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened, as this seat may see it. docs/bots.md lists every kind with its fields.

    `fields` holds every field of the protocol event by its game.proto name, as SDK values
    (enums, `Card`s, tuples; None where unset). The common ones are also attributes:
    `seat` the seat it concerns (the player, drawer, caught or challenged seat), `card` the card
    played or turned up, `cards` the cards you may see (your deal and draws, a hand shown to
    you), `colour` the colour named, `count` cards dealt, drawn or shuffled, `reason` why.
    """

    kind: EventKind
    seat: int | None = None
    card: Card | None = None
    cards: tuple[Card, ...] = ()
    colour: Colour | None = None
    count: int | None = None
    reason: Reason | None = None
    fields: Mapping[str, Any] = field(default_factory=_no_fields)


def event_with(kind: EventKind, fields: dict[str, Any]) -> Event:
    """The view of an event from all its fields (already SDK values); both decoders end here,
    so the wire and the in-process views cannot drift apart."""
    cards = fields.get("cards")
    count = fields.get("count")
    if not isinstance(cards, tuple):  # no cards, or a count (Shuffled.cards, Reshuffled.cards)
        count, cards = cards if count is None else count, ()
    return Event(kind, fields.get("seat"), fields.get("card"), cards, fields.get("colour"), count,
                 fields.get("reason"), MappingProxyType(fields))  # fmt: skip


def _strict(table: Mapping[Any, Any], what: str) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        try:
            return table[value]
        except KeyError:
            raise ProtocolMismatch(f"the server sent {what} {value!r}, unknown to this SDK") from None

    return convert


# enum type -> its decoder; Colour's zero value means "none named"
_ENUM_DECODERS: dict[str, Callable[[Any], Any]] = {
    pb.Colour.DESCRIPTOR.full_name: COLOURS.get,
    pb.ShuffleReason.DESCRIPTOR.full_name: _strict(SHUFFLE_REASONS, "ShuffleReason"),
    pb.HandEnd.DESCRIPTOR.full_name: _strict(HAND_ENDS, "HandEnd"),
    pb.MatchEnd.DESCRIPTOR.full_name: _strict(MATCH_ENDS, "MatchEnd"),
}
_STRING_DECODERS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("drew", "reason"): _strict(DRAW_REASONS, "draw reason"),
}

_Decoder: TypeAlias = Callable[[Any], Any]


def _field_decoder(kind: str, descriptor: FieldDescriptor) -> _Decoder:
    """How one field of an event message becomes its SDK value (built once per field at import)."""
    name = descriptor.name
    if descriptor.message_type is not None and descriptor.message_type is not pb.Card.DESCRIPTOR:
        raise ProtocolMismatch(f"{kind}.{name} is a {descriptor.message_type.name}: the SDK knows only Card")
    repeated = descriptor.is_repeated
    if descriptor.message_type is not None:
        if repeated:
            return lambda m: cards_from(getattr(m, name))
        return lambda m: card_from(getattr(m, name)) if m.HasField(name) else None
    if descriptor.enum_type is not None:
        if descriptor.enum_type.full_name not in _ENUM_DECODERS:
            raise ProtocolMismatch(f"{kind}.{name}: the SDK has no view of {descriptor.enum_type.name}")
        decode = _ENUM_DECODERS[descriptor.enum_type.full_name]
        return lambda m: decode(getattr(m, name))
    if (kind, name) in _STRING_DECODERS:
        convert = _STRING_DECODERS[(kind, name)]
        return lambda m: convert(getattr(m, name))
    if repeated:
        return lambda m: tuple(getattr(m, name))
    if descriptor.has_presence:  # proto3 `optional` (HandEnded.winner): unset is None
        return lambda m: getattr(m, name) if m.HasField(name) else None
    return lambda m: getattr(m, name)


def _layouts() -> dict[str, tuple[EventKind, tuple[tuple[str, _Decoder], ...]]]:
    layouts = {}
    for oneof in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields:
        message = oneof.message_type
        assert message is not None  # every member of the oneof is a message
        decoders = tuple(
            (f.name, _field_decoder(oneof.name, cast(FieldDescriptor, f))) for f in message.fields
        )
        layouts[oneof.name] = (EVENT_KINDS[oneof.name], decoders)
    return layouts


_LAYOUTS = _layouts()


def event_from(message: pb.Event) -> Event:
    """The view of a protocol `Event`."""
    name = message.WhichOneof("kind")
    if name is None:
        raise ProtocolMismatch("the server sent an event of a kind unknown to this SDK")
    kind, decoders = _LAYOUTS[name]
    inner: Message = getattr(message, name)
    return event_with(kind, {field_name: decode(inner) for field_name, decode in decoders})


@dataclass(frozen=True, slots=True)
class HandResult:
    match_id: str
    reason: HandEnd
    winner: int | None
    points: tuple[int, ...]  # what each seat scored from this hand
    totals: tuple[int, ...]  # match totals after it


@dataclass(frozen=True, slots=True)
class MatchResult:
    match_id: str
    reason: MatchEnd
    winners: tuple[int, ...]  # several when tied
    totals: tuple[int, ...]
    bots: tuple[str, ...]
    forfeited: tuple[int, ...]


_hand_end = _strict(HAND_ENDS, "HandEnd")
_match_end = _strict(MATCH_ENDS, "MatchEnd")


def hand_result_from(message: bot_pb2.HandResult) -> HandResult:
    hand = message.hand
    winner = hand.winner if hand.HasField("winner") else None
    return HandResult(message.match_id, _hand_end(hand.reason), winner, tuple(hand.points),
                      tuple(message.totals))  # fmt: skip


def match_result_from(message: pb.MatchResult) -> MatchResult:
    return MatchResult(message.match_id, _match_end(message.reason), tuple(message.winners),
                       tuple(message.totals), tuple(message.bots), tuple(message.forfeited))  # fmt: skip


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """A match this bot was seated in."""

    match_id: str
    seat: int
    bots: tuple[str, ...]
    rules: dict[str, Any]
    decision_timeout: float  # seconds per decision
    max_strikes: int = 3  # faults in this match that make this seat forfeit (bot errors add none by default)


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault the server recorded against this bot in one match.

    `applied` is the id of the action the server applied instead (see `Observation.legal`),
    `strikes` this seat's faults in the match so far (a `BOT_ERROR` adds none by default), and
    `forfeited` is True when this fault made the seat forfeit the match. `action_index` and
    `event_index` place it in the match (its action among the match's actions, the events logged
    before it); None from a server older than them, and for replies to stray messages.
    """

    match_id: str
    seat: int
    kind: FaultKind
    detail: str
    applied: int | None
    strikes: int
    forfeited: bool
    action_index: int | None = None
    event_index: int | None = None


def fault_from(message: pb.Fault) -> Fault:
    applied = int(message.applied.id) if message.HasField("applied") else None
    action_index = int(message.action_index) if message.HasField("action_index") else None
    event_index = int(message.event_index) if message.HasField("event_index") else None
    return Fault(message.match_id, int(message.seat), FAULT_KINDS.get(message.kind, FaultKind.INVALID),
                 message.detail, applied, int(message.strikes), message.forfeited, action_index,
                 event_index)  # fmt: skip
