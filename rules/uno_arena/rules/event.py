"""The event log: everything that happens in a hand, public and private.

An event that carries private cards (a deal, a draw, a hand shown in a
challenge) says who may see them; `Event.seen_by(seat)` gives the version that
seat is allowed (RULINGS 29): the same event with the cards hidden, or nothing.

Each event writes its own `__init__`: one is built on nearly every decision, and a compiled module
keeps a dataclass-generated one interpreted (see `uno_arena.rules.value`).
"""

from __future__ import annotations

import enum
import typing
from dataclasses import dataclass, replace

from uno_arena.rules.card import Card, Colour
from uno_arena.rules.value import Value

Seat = int


class EventKind(enum.StrEnum):
    """What an event is: one member per event class, named as the protocol's `Event.kind` oneof
    names it (`Played` -> `played`); `event.kind` gives it, so code may test kinds or classes."""

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
    SWAPPED = "swapped"
    HANDS_PASSED = "hands_passed"
    RECEIVED = "received"
    RESHUFFLED = "reshuffled"
    HAND_ENDED = "hand_ended"
    HAND_STARTED = "hand_started"
    MATCH_ENDED = "match_ended"


class HandEnd(enum.StrEnum):
    """Why a hand ended (RULINGS 21, 24)."""

    PLAYED_OUT = "played_out"  # a player played their last card
    NO_PROGRESS = "no_progress"  # a full round without a play, nothing left to draw
    MAX_TURNS = "max_turns"  # max_turns_per_hand reached


class ShuffleReason(enum.StrEnum):
    """Why cards were shuffled (`Shuffled.reason`)."""

    DEAL = "deal"
    RESHUFFLE = "reshuffle"  # discards under the top card become the draw pile (RULINGS 16)
    FIRST_CARD = "first_card"  # a first Wild Draw Four put back (RULINGS 10, option reshuffle)


class DrawReason(enum.StrEnum):
    """Why a seat drew (`Drew.reason`)."""

    DRAW = "draw"  # it chose to draw (RULINGS 13)
    DRAW_TWO = "draw_two"  # hit by a Draw Two (stacked: the total)
    WILD_DRAW_FOUR = "wild_draw_four"  # hit by a Wild Draw Four (accepted, or the first card)
    CHALLENGE = "challenge"  # lost a challenge: the challenger (6) or the guilty player (4) (RULINGS 17)
    UNO_PENALTY = "uno_penalty"  # caught not calling UNO (RULINGS 19)


@dataclass(frozen=True, slots=True)
class DealerDrew(Value):
    """A card drawn face up to choose the dealer (RULINGS 3)."""

    seat: Seat
    card: Card
    round: int

    def __init__(self, seat: Seat, card: Card, round: int) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "round", round)

    @property
    def kind(self) -> EventKind:
        return EventKind.DEALER_DREW


@dataclass(frozen=True, slots=True)
class DealerChosen(Value):
    seat: Seat

    def __init__(self, seat: Seat) -> None:
        object.__setattr__(self, "seat", seat)

    @property
    def kind(self) -> EventKind:
        return EventKind.DEALER_CHOSEN


@dataclass(frozen=True, slots=True)
class Shuffled(Value):
    reason: ShuffleReason
    cards: int

    def __init__(self, reason: ShuffleReason, cards: int) -> None:
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "cards", cards)

    @property
    def kind(self) -> EventKind:
        return EventKind.SHUFFLED


@dataclass(frozen=True, slots=True)
class Dealt(Value):
    """Cards dealt to `seat`; `cards` is None for everyone else."""

    seat: Seat
    count: int
    cards: tuple[Card, ...] | None

    def __init__(self, seat: Seat, count: int, cards: tuple[Card, ...] | None) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "cards", cards)

    @property
    def kind(self) -> EventKind:
        return EventKind.DEALT


@dataclass(frozen=True, slots=True)
class FirstCard(Value):
    card: Card

    def __init__(self, card: Card) -> None:
        object.__setattr__(self, "card", card)

    @property
    def kind(self) -> EventKind:
        return EventKind.FIRST_CARD


@dataclass(frozen=True, slots=True)
class ColourChosen(Value):
    """The colour named for a first-card Wild (RULINGS 9, 10)."""

    seat: Seat
    colour: Colour

    def __init__(self, seat: Seat, colour: Colour) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "colour", colour)

    @property
    def kind(self) -> EventKind:
        return EventKind.COLOUR_CHOSEN


@dataclass(frozen=True, slots=True)
class Played(Value):
    """`seat` played `card`, naming `colour` for a Wild, calling UNO if `uno`.

    `jump_in` marks a card played out of turn on an identical one (RULINGS 26). With
    `multi_play` the cards laid together are consecutive `Played` events of one seat.
    """

    seat: Seat
    card: Card
    colour: Colour | None
    uno: bool
    cards_left: int
    jump_in: bool = False

    def __init__(
        self, seat: Seat, card: Card, colour: Colour | None, uno: bool, cards_left: int, jump_in: bool = False
    ) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "colour", colour)
        object.__setattr__(self, "uno", uno)
        object.__setattr__(self, "cards_left", cards_left)
        object.__setattr__(self, "jump_in", jump_in)

    @property
    def kind(self) -> EventKind:
        return EventKind.PLAYED


@dataclass(frozen=True, slots=True)
class Drew(Value):
    """`seat` drew `count` cards; `cards` is None for everyone else; `reason` says why."""

    seat: Seat
    count: int
    cards: tuple[Card, ...] | None
    reason: DrawReason

    def __init__(self, seat: Seat, count: int, cards: tuple[Card, ...] | None, reason: DrawReason) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "reason", reason)

    @property
    def kind(self) -> EventKind:
        return EventKind.DREW


@dataclass(frozen=True, slots=True)
class Kept(Value):
    """`seat` ended its turn after drawing (RULINGS 13), keeping what it drew.

    Logged whether or not the drawn card could have been played, so the other
    seats learn only that the drawer drew and did not play (RULINGS 29); every
    `Drew` with reason "draw" is followed by the drawer's `Played` or `Kept`.
    """

    seat: Seat

    def __init__(self, seat: Seat) -> None:
        object.__setattr__(self, "seat", seat)

    @property
    def kind(self) -> EventKind:
        return EventKind.KEPT


@dataclass(frozen=True, slots=True)
class Skipped(Value):
    seat: Seat

    def __init__(self, seat: Seat) -> None:
        object.__setattr__(self, "seat", seat)

    @property
    def kind(self) -> EventKind:
        return EventKind.SKIPPED


@dataclass(frozen=True, slots=True)
class DirectionChanged(Value):
    direction: int  # +1 clockwise (to the left), -1 counter-clockwise

    def __init__(self, direction: int) -> None:
        object.__setattr__(self, "direction", direction)

    @property
    def kind(self) -> EventKind:
        return EventKind.DIRECTION_CHANGED


@dataclass(frozen=True, slots=True)
class Caught(Value):
    """`catcher` caught `seat` not calling UNO; `seat` draws the penalty."""

    catcher: Seat
    seat: Seat

    def __init__(self, catcher: Seat, seat: Seat) -> None:
        object.__setattr__(self, "catcher", catcher)
        object.__setattr__(self, "seat", seat)

    @property
    def kind(self) -> EventKind:
        return EventKind.CAUGHT


@dataclass(frozen=True, slots=True)
class CatchPassed(Value):
    seat: Seat

    def __init__(self, seat: Seat) -> None:
        object.__setattr__(self, "seat", seat)

    @property
    def kind(self) -> EventKind:
        return EventKind.CATCH_PASSED


@dataclass(frozen=True, slots=True)
class Accepted(Value):
    """`seat` accepted a Wild Draw Four."""

    seat: Seat

    def __init__(self, seat: Seat) -> None:
        object.__setattr__(self, "seat", seat)

    @property
    def kind(self) -> EventKind:
        return EventKind.ACCEPTED


@dataclass(frozen=True, slots=True)
class Challenged(Value):
    """`challenger` challenged `seat`'s Wild Draw Four; `guilty` is the outcome."""

    challenger: Seat
    seat: Seat
    guilty: bool

    def __init__(self, challenger: Seat, seat: Seat, guilty: bool) -> None:
        object.__setattr__(self, "challenger", challenger)
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "guilty", guilty)

    @property
    def kind(self) -> EventKind:
        return EventKind.CHALLENGED


@dataclass(frozen=True, slots=True)
class HandShown(Value):
    """`seat`'s hand shown to `to` only (RULINGS 17); `cards` is None for others."""

    seat: Seat
    to: Seat
    cards: tuple[Card, ...] | None

    def __init__(self, seat: Seat, to: Seat, cards: tuple[Card, ...] | None) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "cards", cards)

    @property
    def kind(self) -> EventKind:
        return EventKind.HAND_SHOWN


@dataclass(frozen=True, slots=True)
class Swapped(Value):
    """Seven-0: `seat`, who played a 7, swapped hands with `other` (RULINGS 27)."""

    seat: Seat
    other: Seat

    def __init__(self, seat: Seat, other: Seat) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "other", other)

    @property
    def kind(self) -> EventKind:
        return EventKind.SWAPPED


@dataclass(frozen=True, slots=True)
class HandsPassed(Value):
    """Seven-0: a 0 made every hand pass one seat in `direction` (RULINGS 27)."""

    direction: int

    def __init__(self, direction: int) -> None:
        object.__setattr__(self, "direction", direction)

    @property
    def kind(self) -> EventKind:
        return EventKind.HANDS_PASSED


@dataclass(frozen=True, slots=True)
class Received(Value):
    """After a swap or a pass, `seat` holds the `count` cards `giver` held; `cards` (sorted,
    so they say nothing of when `giver` got them) is None for everyone but `seat`."""

    seat: Seat
    giver: Seat
    count: int
    cards: tuple[Card, ...] | None

    def __init__(self, seat: Seat, giver: Seat, count: int, cards: tuple[Card, ...] | None) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "giver", giver)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "cards", cards)

    @property
    def kind(self) -> EventKind:
        return EventKind.RECEIVED


@dataclass(frozen=True, slots=True)
class Reshuffled(Value):
    """The discards under the top card became the new draw pile (RULINGS 16)."""

    cards: int

    def __init__(self, cards: int) -> None:
        object.__setattr__(self, "cards", cards)

    @property
    def kind(self) -> EventKind:
        return EventKind.RESHUFFLED


@dataclass(frozen=True, slots=True)
class HandEnded(Value):
    """End of a hand: `winner` is None when it ended without one (RULINGS 24).

    `points[seat]` is what that seat scores from this hand.
    """

    reason: HandEnd
    winner: Seat | None
    points: tuple[int, ...]

    def __init__(self, reason: HandEnd, winner: Seat | None, points: tuple[int, ...]) -> None:
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "winner", winner)
        object.__setattr__(self, "points", points)

    @property
    def kind(self) -> EventKind:
        return EventKind.HAND_ENDED


class MatchEnd(enum.StrEnum):
    """Why a match ended."""

    TARGET_REACHED = "target_reached"
    MAX_HANDS = "max_hands"  # max_hands_per_match reached (RULINGS 24)
    # the match server's, never the rules core's: a seat forfeited (its faults), or the match was aborted
    FORFEIT = "forfeit"
    ABORTED = "aborted"


@dataclass(frozen=True, slots=True)
class HandStarted(Value):
    """Match-level event before each hand's own events; `number` counts from 1."""

    number: int

    def __init__(self, number: int) -> None:
        object.__setattr__(self, "number", number)

    @property
    def kind(self) -> EventKind:
        return EventKind.HAND_STARTED


@dataclass(frozen=True, slots=True)
class MatchEnded(Value):
    reason: MatchEnd
    winners: tuple[Seat, ...]
    totals: tuple[int, ...]

    def __init__(self, reason: MatchEnd, winners: tuple[Seat, ...], totals: tuple[int, ...]) -> None:
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "winners", winners)
        object.__setattr__(self, "totals", totals)

    @property
    def kind(self) -> EventKind:
        return EventKind.MATCH_ENDED


Event = (
    DealerDrew
    | DealerChosen
    | Shuffled
    | Dealt
    | FirstCard
    | ColourChosen
    | Played
    | Drew
    | Kept
    | Skipped
    | DirectionChanged
    | Caught
    | CatchPassed
    | Accepted
    | Challenged
    | HandShown
    | Swapped
    | HandsPassed
    | Received
    | Reshuffled
    | HandEnded
    | HandStarted
    | MatchEnded
)


def _snake(name: str) -> str:
    """`HandShown` -> `hand_shown`: an event class's kind (and the protocol's oneof field for it)."""
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(name)).lower()


EVENT_CLASSES: dict[EventKind, type] = {
    EventKind(_snake(kind.__name__)): kind for kind in typing.get_args(Event)
}
"""Each kind's class; a class whose name is no `EventKind` fails here, at import."""


def seen_by(event: Event, seat: Seat) -> Event:
    """The version of `event` that `seat` may see: private cards of others hidden."""
    if isinstance(event, (Dealt, Drew, Received)):
        return event if event.seat == seat or event.cards is None else replace(event, cards=None)
    if isinstance(event, HandShown):
        return event if event.to == seat or event.cards is None else replace(event, cards=None)
    return event


def public(event: Event) -> Event:
    """The version of `event` a spectator may see."""
    return seen_by(event, -1)
