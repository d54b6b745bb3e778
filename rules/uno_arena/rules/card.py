"""Cards and the 108-card deck (RULINGS 1).

There are 54 distinct card faces; every `Card` value is one of the interned
instances in `FACES`, so cards compare by identity on the hot path and sort by
`Card.index`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Colour(enum.StrEnum):
    """A suit colour; also the colour named for a Wild."""

    RED = "red"
    YELLOW = "yellow"
    GREEN = "green"
    BLUE = "blue"


COLOURS: tuple[Colour, ...] = tuple(Colour)


class Kind(enum.StrEnum):
    """What a card does, numbers taken together: the question a bot asks more often than its rank."""

    NUMBER = "number"
    SKIP = "skip"
    REVERSE = "reverse"
    DRAW_TWO = "draw_two"
    WILD = "wild"
    WILD_DRAW_FOUR = "wild_draw_four"


class Rank(enum.StrEnum):
    """What a card shows: a number, an action symbol or a wild kind."""

    ZERO = "0"
    ONE = "1"
    TWO = "2"
    THREE = "3"
    FOUR = "4"
    FIVE = "5"
    SIX = "6"
    SEVEN = "7"
    EIGHT = "8"
    NINE = "9"
    SKIP = "skip"
    REVERSE = "reverse"
    DRAW_TWO = "draw_two"
    WILD = "wild"
    WILD_DRAW_FOUR = "wild_draw_four"

    @property
    def is_number(self) -> bool:
        return self.value.isdigit()

    @property
    def is_wild(self) -> bool:
        return self in (Rank.WILD, Rank.WILD_DRAW_FOUR)

    @property
    def points(self) -> int:
        """Scoring value (RULINGS 22)."""
        if self.is_number:
            return int(self.value)
        return 50 if self.is_wild else 20

    @property
    def dealer_value(self) -> int:
        """Value when drawing for dealer: action and wild cards count zero (RULINGS 3)."""
        return int(self.value) if self.is_number else 0

    @property
    def kind(self) -> Kind:
        return Kind.NUMBER if self.is_number else Kind(self.value)

    @property
    def number(self) -> int | None:
        """The number of a number card, None for the others."""
        return int(self.value) if self.is_number else None


NUMBER_RANKS: tuple[Rank, ...] = tuple(r for r in Rank if r.is_number)
COLOURED_RANKS: tuple[Rank, ...] = tuple(r for r in Rank if not r.is_wild)


@dataclass(frozen=True, slots=True, eq=False)
class Card:
    """One card face. Wilds have no colour; the named colour lives in the hand state.

    Instances are interned (see `card`), so equality is identity.
    """

    colour: Colour | None
    rank: Rank
    index: int

    @property
    def is_wild(self) -> bool:
        return self.colour is None

    @property
    def points(self) -> int:
        """Scoring value (RULINGS 22): face value, 20 for Skip, Reverse and Draw Two, 50 for Wilds."""
        return self.rank.points

    @property
    def kind(self) -> Kind:
        return self.rank.kind

    @property
    def number(self) -> int | None:
        """The number of a number card, None for the others."""
        return self.rank.number

    def __str__(self) -> str:
        if self.colour is None:
            return self.rank.value
        return f"{self.colour.value}_{self.rank.value}"

    def __repr__(self) -> str:
        return f"Card({self})"

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __hash__(self) -> int:
        """Consistent with identity (faces are interned); stated because a compiled class defining
        `__lt__` would otherwise lose the `__hash__` it inherits."""
        return self.index

    def __reduce__(self) -> tuple[object, tuple[int]]:
        """Copies and unpickled cards are the interned faces, so identity still holds."""
        return _face, (self.index,)


def _face(index: int) -> Card:
    return FACES[index]


def _faces() -> tuple[Card, ...]:
    coloured: list[tuple[Colour | None, Rank]] = [(c, r) for c in COLOURS for r in COLOURED_RANKS]
    wild: list[tuple[Colour | None, Rank]] = [(None, Rank.WILD), (None, Rank.WILD_DRAW_FOUR)]
    return tuple(Card(c, r, i) for i, (c, r) in enumerate(coloured + wild))


FACES: tuple[Card, ...] = _faces()
"""The 54 distinct faces, in sort order: colours in `Colour` order, then Wild, Wild Draw Four."""

_BY_NAME: dict[str, Card] = {str(face): face for face in FACES}
_BY_PARTS: dict[tuple[Colour | None, Rank], Card] = {(f.colour, f.rank): f for f in FACES}


class UnknownCardError(ValueError):
    """A card name or colour/rank pair that is not one of the 54 faces."""


def card(colour: Colour | None, rank: Rank) -> Card:
    """The interned face for a colour and rank (colour None for wilds)."""
    try:
        return _BY_PARTS[(colour, rank)]
    except KeyError:
        raise UnknownCardError(f"no card {colour!r} {rank!r}") from None


def parse_card(name: str) -> Card:
    """Parse a name such as ``red_7``, ``blue_draw_two``, ``wild`` or ``wild_draw_four``."""
    try:
        return _BY_NAME[name.strip().lower()]
    except KeyError:
        raise UnknownCardError(f"unknown card name {name!r}") from None


def parse_cards(names: str) -> list[Card]:
    """Parse whitespace-separated card names, e.g. ``"red_7 wild blue_skip"``."""
    return [parse_card(n) for n in names.split()]


def _copies(face: Card) -> int:
    if face.is_wild:
        return 4
    return 1 if face.rank is Rank.ZERO else 2


_DECK: tuple[Card, ...] = tuple(face for face in FACES for _ in range(_copies(face)))


def standard_deck() -> list[Card]:
    """The 108-card deck, in face order (RULINGS 1)."""
    return list(_DECK)


DECK_SIZE = 108


def points(cards: list[Card] | tuple[Card, ...]) -> int:
    """Total scoring value of some cards."""
    return sum(c.rank.points for c in cards)
