"""Typed views of cards, for bot authors: colour, kind, number."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from uno_arena.sdk._protocol import ProtocolMismatch, covers, members
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import names


class Colour(enum.StrEnum):
    RED = "red"
    YELLOW = "yellow"
    GREEN = "green"
    BLUE = "blue"


class Kind(enum.StrEnum):
    """What a card does."""

    NUMBER = "number"
    SKIP = "skip"
    REVERSE = "reverse"
    DRAW_TWO = "draw_two"
    WILD = "wild"
    WILD_DRAW_FOUR = "wild_draw_four"


@dataclass(frozen=True, slots=True)
class Card:
    """A card face. `colour` is None for Wilds; `number` is set only for number cards."""

    colour: Colour | None
    kind: Kind
    number: int | None
    index: int  # 0..53, the face's place in the protocol's face order

    @property
    def is_wild(self) -> bool:
        return self.colour is None

    @property
    def points(self) -> int:
        """Scoring value: face value, 20 for Skip/Reverse/Draw Two, 50 for Wilds."""
        if self.number is not None:
            return self.number
        return 50 if self.is_wild else 20

    def __str__(self) -> str:
        label = str(self.number) if self.number is not None else self.kind.value
        return label if self.colour is None else f"{self.colour.value}_{label}"

    def __repr__(self) -> str:  # short: observations and test failures list many cards
        return f"Card({self})"


# number -> view, built once from the protocol's enums (the only place the numbers are written)
COLOURS: dict[int, Colour] = members(pb.Colour.DESCRIPTOR, Colour)


def _face(rank: str) -> tuple[Kind, int | None]:
    """What a `Rank` value's name means: RANK_7 -> "7" is a number card, RANK_SKIP -> "skip" a Skip."""
    if rank.isdigit():
        return Kind.NUMBER, int(rank)
    if rank not in {kind.value for kind in Kind}:
        raise ProtocolMismatch(f"the protocol's Rank has {rank!r}, not in the SDK's Kind")
    return Kind(rank), None


_RANKS: dict[int, tuple[Kind, int | None]] = {n: _face(name) for n, name in names(pb.Rank.DESCRIPTOR).items()}
covers(pb.Rank.DESCRIPTOR, Kind, (kind for kind, _ in _RANKS.values()))
_BY_INDEX: dict[int, Card] = {}


def interned(card: Card) -> Card:
    """The one `Card` object of its face: every path that builds views (the wire's, the rules
    core's) shares it, so views compare cheaply and equal views hold the same objects."""
    return _BY_INDEX.setdefault(card.index, card)


def colour_of(number: int) -> Colour | None:
    """A protocol `Colour` number as a `Colour` (None for unspecified)."""
    return COLOURS.get(number)


def cards_from(messages: Iterable[pb.Card]) -> tuple[Card, ...]:
    """The views of many cards (a hand, a discard pile of a hundred): one lookup a card once each
    face has been seen, no call (this runs at every decision a bot makes)."""
    by_index = _BY_INDEX
    try:
        return tuple([by_index[message.index] for message in messages])
    except KeyError:  # a face not seen yet
        return tuple([card_from(message) for message in messages])


def card_from(message: pb.Card) -> Card:
    """The view of a protocol `Card` message (cached per face)."""
    card = _BY_INDEX.get(message.index)
    if card is None:
        kind, number = _RANKS[message.rank]
        card = interned(Card(colour_of(message.colour), kind, number, message.index))
    return card
