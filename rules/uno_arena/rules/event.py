"""The event log: everything that happens in a hand, public and private.

An event that carries private cards (a deal, a draw, a hand shown in a
challenge) says who may see them; `Event.seen_by(seat)` gives the version that
seat is allowed (RULINGS 29): the same event with the cards hidden, or nothing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from uno_arena.rules.card import Card, Colour

Seat = int


class HandEnd(enum.StrEnum):
    """Why a hand ended (RULINGS 21, 24)."""

    PLAYED_OUT = "played_out"  # a player played their last card
    NO_PROGRESS = "no_progress"  # a full round without a play, nothing left to draw
    MAX_TURNS = "max_turns"  # max_turns_per_hand reached


class ShuffleReason(enum.StrEnum):
    DEAL = "deal"
    RESHUFFLE = "reshuffle"  # discards under the top card become the draw pile (RULINGS 16)
    FIRST_CARD = "first_card"  # a first Wild Draw Four put back (RULINGS 10, option reshuffle)


@dataclass(frozen=True, slots=True)
class DealerDrew:
    """A card drawn face up to choose the dealer (RULINGS 3)."""

    seat: Seat
    card: Card
    round: int


@dataclass(frozen=True, slots=True)
class DealerChosen:
    seat: Seat


@dataclass(frozen=True, slots=True)
class Shuffled:
    reason: ShuffleReason
    cards: int


@dataclass(frozen=True, slots=True)
class Dealt:
    """Cards dealt to `seat`; `cards` is None for everyone else."""

    seat: Seat
    count: int
    cards: tuple[Card, ...] | None


@dataclass(frozen=True, slots=True)
class FirstCard:
    card: Card


@dataclass(frozen=True, slots=True)
class ColourChosen:
    """The colour named for a first-card Wild (RULINGS 9, 10)."""

    seat: Seat
    colour: Colour


@dataclass(frozen=True, slots=True)
class Played:
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


@dataclass(frozen=True, slots=True)
class Drew:
    """`seat` drew `count` cards; `cards` is None for everyone else.

    `reason` says why: "draw" (chose to), "draw_two", "wild_draw_four",
    "challenge" (lost or was caught by a challenge), "uno_penalty".
    """

    seat: Seat
    count: int
    cards: tuple[Card, ...] | None
    reason: str


@dataclass(frozen=True, slots=True)
class Kept:
    """`seat` ended its turn after drawing (RULINGS 13), keeping what it drew.

    Logged whether or not the drawn card could have been played, so the other
    seats learn only that the drawer drew and did not play (RULINGS 29); every
    `Drew` with reason "draw" is followed by the drawer's `Played` or `Kept`.
    """

    seat: Seat


@dataclass(frozen=True, slots=True)
class Skipped:
    seat: Seat


@dataclass(frozen=True, slots=True)
class DirectionChanged:
    direction: int  # +1 clockwise (to the left), -1 counter-clockwise


@dataclass(frozen=True, slots=True)
class Caught:
    """`catcher` caught `seat` not calling UNO; `seat` draws the penalty."""

    catcher: Seat
    seat: Seat


@dataclass(frozen=True, slots=True)
class CatchPassed:
    seat: Seat


@dataclass(frozen=True, slots=True)
class Accepted:
    """`seat` accepted a Wild Draw Four."""

    seat: Seat


@dataclass(frozen=True, slots=True)
class Challenged:
    """`challenger` challenged `seat`'s Wild Draw Four; `guilty` is the outcome."""

    challenger: Seat
    seat: Seat
    guilty: bool


@dataclass(frozen=True, slots=True)
class HandShown:
    """`seat`'s hand shown to `to` only (RULINGS 17); `cards` is None for others."""

    seat: Seat
    to: Seat
    cards: tuple[Card, ...] | None


@dataclass(frozen=True, slots=True)
class Swapped:
    """Seven-0: `seat`, who played a 7, swapped hands with `other` (RULINGS 27)."""

    seat: Seat
    other: Seat


@dataclass(frozen=True, slots=True)
class HandsPassed:
    """Seven-0: a 0 made every hand pass one seat in `direction` (RULINGS 27)."""

    direction: int


@dataclass(frozen=True, slots=True)
class Received:
    """After a swap or a pass, `seat` holds the `count` cards `giver` held; `cards` (sorted,
    so they say nothing of when `giver` got them) is None for everyone but `seat`."""

    seat: Seat
    giver: Seat
    count: int
    cards: tuple[Card, ...] | None


@dataclass(frozen=True, slots=True)
class Reshuffled:
    """The discards under the top card became the new draw pile (RULINGS 16)."""

    cards: int


@dataclass(frozen=True, slots=True)
class HandEnded:
    """End of a hand: `winner` is None when it ended without one (RULINGS 24).

    `points[seat]` is what that seat scores from this hand.
    """

    reason: HandEnd
    winner: Seat | None
    points: tuple[int, ...]


class MatchEnd(enum.StrEnum):
    """Why a match ended."""

    TARGET_REACHED = "target_reached"
    MAX_HANDS = "max_hands"  # max_hands_per_match reached (RULINGS 24)


@dataclass(frozen=True, slots=True)
class HandStarted:
    """Match-level event before each hand's own events; `number` counts from 1."""

    number: int


@dataclass(frozen=True, slots=True)
class MatchEnded:
    reason: MatchEnd
    winners: tuple[Seat, ...]
    totals: tuple[int, ...]


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
