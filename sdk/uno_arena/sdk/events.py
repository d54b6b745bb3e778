"""Events and results as plain, typed values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.json_format import MessageToDict

from uno_arena.sdk.cards import Card, card_from
from uno_arena.v1 import bot_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import names


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
