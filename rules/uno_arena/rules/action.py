"""Actions: every decision a seat can face, as one finite, numbered action space.

Each distinct action is interned in `ACTIONS` with a stable `id` (its index), so
legal actions sort by id, travel over the wire as integers, and compare by
identity on the hot path. Build actions with the constructors below.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from uno_arena.rules.card import COLOURS, FACES, Card, Colour
from uno_arena.rules.config import MAX_PLAYERS


class ActionKind(enum.StrEnum):
    """What kind of decision an action answers."""

    PLAY = "play"  # play a card from the hand (or the card just drawn)
    DRAW = "draw"  # draw instead of playing (RULINGS 13)
    KEEP = "keep"  # keep the card just drawn; the turn ends
    CHALLENGE = "challenge"  # challenge a Wild Draw Four (RULINGS 17)
    ACCEPT = "accept"  # accept a Wild Draw Four: draw four, lose the turn
    CATCH = "catch"  # catch a player who did not call UNO (RULINGS 19)
    PASS = "pass"  # let an uncalled UNO go
    CHOOSE_COLOUR = "choose_colour"  # name the colour of a first-card Wild (RULINGS 9, 10)
    DONE = "done"  # multi_play: lay no more cards with this play (RULINGS 28)
    SWAP = "swap"  # seven_zero: swap hands with `seat` after playing a 7 (RULINGS 27)


@dataclass(frozen=True, slots=True)
class Action:
    """One decision. `card`, `colour`, `uno` and `seat` are set only where the kind uses them.

    `colour` is the colour named with a Wild; `uno` is the UNO call made with a
    play (RULINGS 19); `seat` is the seat a swap exchanges hands with (RULINGS 27).
    """

    kind: ActionKind
    card: Card | None = None
    colour: Colour | None = None
    uno: bool = False
    seat: int | None = None

    def __reduce__(self) -> tuple[object, tuple[int]]:
        """Copies and unpickled actions are the interned ones."""
        return action_from_id, (self.id,)

    @property
    def id(self) -> int:
        """Position in `ACTIONS`; stable across versions of protocol v1."""
        return _IDS[self]

    @property
    def text(self) -> str:
        """For people: `play red_7 uno`, `play wild as blue`, `draw`, `swap with seat 2`."""
        return str(self)

    def __str__(self) -> str:
        if self.kind is ActionKind.PLAY:
            assert self.card is not None
            text = f"play {self.card}"
            if self.colour is not None:
                text += f" as {self.colour.value}"
            return text + (" uno" if self.uno else "")
        if self.kind is ActionKind.CHOOSE_COLOUR:
            assert self.colour is not None
            return f"choose {self.colour.value}"
        if self.kind is ActionKind.SWAP:
            return f"swap with seat {self.seat}"
        return self.kind.value

    def __repr__(self) -> str:
        """Short, `Action(12, 'play red_5')`: observations and test failures list many actions."""
        number = _IDS.get(self)
        if number is None:  # not in the action space: every field, to say what is wrong with it
            fields = f"kind={self.kind!r}, card={self.card!r}, colour={self.colour!r}, uno={self.uno!r}"
            return f"Action({fields}, seat={self.seat!r})"
        return f"Action({number}, {str(self)!r})"


def _all_actions() -> tuple[Action, ...]:
    plays: list[Action] = []
    for face in FACES:
        colours: tuple[Colour | None, ...] = COLOURS if face.is_wild else (None,)
        for colour in colours:
            plays += [Action(ActionKind.PLAY, face, colour, uno) for uno in (False, True)]
    simple = [
        Action(k)
        for k in (
            ActionKind.DRAW,
            ActionKind.KEEP,
            ActionKind.CHALLENGE,
            ActionKind.ACCEPT,
            ActionKind.CATCH,
            ActionKind.PASS,
        )
    ]
    chooses = [Action(ActionKind.CHOOSE_COLOUR, colour=c) for c in COLOURS]
    # the house rules' decisions, appended so that the ids above never change (protocol v1)
    done = [Action(ActionKind.DONE)]
    swaps = [Action(ActionKind.SWAP, seat=seat) for seat in range(MAX_PLAYERS)]
    return tuple(plays + simple + chooses + done + swaps)


ACTIONS: tuple[Action, ...] = _all_actions()
"""The whole action space, in id order: plays (card order, colour, uno), then the rest, then
the house rules' `done` and `swap` (seat 0..9)."""

_IDS: dict[Action, int] = {a: i for i, a in enumerate(ACTIONS)}
_INTERNED: dict[Action, Action] = {a: a for a in ACTIONS}


class InvalidActionError(ValueError):
    """An action that is malformed in itself: no such action in the action space."""


def intern(action: Action) -> Action:
    """The canonical instance of an action; raises `InvalidActionError` if malformed."""
    try:
        return _INTERNED[action]
    except KeyError:
        raise InvalidActionError(f"not a well-formed action: {action!r}") from None


def action_from_id(action_id: int) -> Action:
    """The action with this id; raises `InvalidActionError` if out of range."""
    if not 0 <= action_id < len(ACTIONS):
        raise InvalidActionError(f"action id {action_id} out of range 0..{len(ACTIONS) - 1}")
    return ACTIONS[action_id]


def play(card: Card, colour: Colour | None = None, uno: bool = False) -> Action:
    """Play `card` (naming `colour` if it is a Wild), calling UNO if `uno`."""
    return intern(Action(ActionKind.PLAY, card, colour, uno))


def choose_colour(colour: Colour) -> Action:
    return intern(Action(ActionKind.CHOOSE_COLOUR, colour=colour))


def swap(seat: int) -> Action:
    """Swap hands with `seat` (seven_zero, after playing a 7)."""
    return intern(Action(ActionKind.SWAP, seat=seat))


DRAW = intern(Action(ActionKind.DRAW))
KEEP = intern(Action(ActionKind.KEEP))
CHALLENGE = intern(Action(ActionKind.CHALLENGE))
ACCEPT = intern(Action(ActionKind.ACCEPT))
CATCH = intern(Action(ActionKind.CATCH))
PASS = intern(Action(ActionKind.PASS))
DONE = intern(Action(ActionKind.DONE))
