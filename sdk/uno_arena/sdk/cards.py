"""Typed views of cards, for bot authors: colour, kind, number."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


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


_COLOURS = {1: Colour.RED, 2: Colour.YELLOW, 3: Colour.GREEN, 4: Colour.BLUE}
_KINDS = {11: Kind.SKIP, 12: Kind.REVERSE, 13: Kind.DRAW_TWO, 14: Kind.WILD, 15: Kind.WILD_DRAW_FOUR}
_BY_INDEX: dict[int, Card] = {}


def colour_of(number: int) -> Colour | None:
    """A protocol `Colour` number as a `Colour` (None for unspecified)."""
    return _COLOURS.get(number)


def card_from(message: Any) -> Card:
    """The view of a protocol `Card` message (cached per face)."""
    card = _BY_INDEX.get(message.index)
    if card is None:
        rank = int(message.rank)
        number = rank - 1 if 1 <= rank <= 10 else None
        kind = Kind.NUMBER if number is not None else _KINDS[rank]
        card = _BY_INDEX[message.index] = Card(
            colour_of(int(message.colour)), kind, number, int(message.index)
        )
    return card
