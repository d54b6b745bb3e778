"""Actions and the legal-action list a bot chooses from."""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from uno_arena.sdk._protocol import members
from uno_arena.sdk.cards import Card, Colour, Kind, card_from, colour_of
from uno_arena.v1 import game_pb2 as pb


class ActionKind(enum.StrEnum):
    PLAY = "play"
    DRAW = "draw"
    KEEP = "keep"
    CHALLENGE = "challenge"
    ACCEPT = "accept"
    CATCH = "catch"
    PASS = "pass"
    CHOOSE_COLOUR = "choose_colour"
    DONE = "done"  # multi_play: lay no more cards with this play
    SWAP = "swap"  # seven_zero: swap hands with `Action.seat`


_KINDS: dict[int, ActionKind] = members(pb.ActionKind.DESCRIPTOR, ActionKind)  # number -> kind


@dataclass(frozen=True, slots=True)
class Action:
    """One legal action; answer a decision by returning one of these."""

    id: int
    kind: ActionKind
    card: Card | None
    colour: Colour | None  # the colour named (Wild plays, choose_colour)
    uno: bool  # UNO is called with this play
    text: str
    seat: int | None = None  # the seat a swap exchanges hands with (SWAP only)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Action({self.id}, {self.text!r})"


_BY_ID: dict[int, Action] = {}


def interned(action: Action) -> Action:
    """The one `Action` object of its id, shared by every path that builds views (see `cards.interned`)."""
    return _BY_ID.setdefault(action.id, action)


def action_from(message: pb.Action) -> Action:
    """The view of a protocol `Action` (cached per id: ids are stable, protocol v1)."""
    action = _BY_ID.get(message.id)
    if action is None:
        card = card_from(message.card) if message.HasField("card") else None
        kind, colour = _KINDS[message.kind], colour_of(message.colour)
        seat = message.seat if message.HasField("seat") else None
        action = interned(Action(message.id, kind, card, colour, message.uno, message.text, seat))
    return action


class LegalActions(Sequence[Action]):
    """The legal actions of one decision, sorted by id, with filters for common questions."""

    def __init__(self, actions: Sequence[Action]) -> None:
        self._actions = tuple(actions)

    @overload
    def __getitem__(self, index: int) -> Action: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Action]: ...
    def __getitem__(self, index: int | slice) -> Action | Sequence[Action]:
        return self._actions[index]

    def __len__(self) -> int:
        return len(self._actions)

    def __iter__(self) -> Iterator[Action]:
        return iter(self._actions)

    def __repr__(self) -> str:
        return f"LegalActions({[a.text for a in self._actions]})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LegalActions) and self._actions == other._actions

    def __hash__(self) -> int:
        return hash(self._actions)

    def plays(
        self, *, colour: Colour | None = None, kind: Kind | None = None, uno: bool | None = None
    ) -> list[Action]:
        """Plays, optionally only of a card colour, of a kind, or with/without an UNO call."""
        return [
            a
            for a in self._actions
            if a.kind is ActionKind.PLAY
            and a.card is not None
            and (colour is None or a.card.colour is colour)
            and (kind is None or a.card.kind is kind)
            and (uno is None or a.uno is uno)
        ]

    def _one(self, kind: ActionKind) -> Action | None:
        return next((a for a in self._actions if a.kind is kind), None)

    @property
    def draw(self) -> Action | None:
        return self._one(ActionKind.DRAW)

    @property
    def can_draw(self) -> bool:
        return self.draw is not None

    @property
    def keep(self) -> Action | None:
        return self._one(ActionKind.KEEP)

    @property
    def challenge(self) -> Action | None:
        return self._one(ActionKind.CHALLENGE)

    @property
    def accept(self) -> Action | None:
        return self._one(ActionKind.ACCEPT)

    @property
    def catch(self) -> Action | None:
        return self._one(ActionKind.CATCH)

    @property
    def pass_(self) -> Action | None:
        return self._one(ActionKind.PASS)

    @property
    def done(self) -> Action | None:
        """multi_play: lay no more cards (phase LAY)."""
        return self._one(ActionKind.DONE)

    def swaps(self) -> list[Action]:
        """seven_zero: the seats you may swap hands with (phase SWAP), by seat."""
        return [a for a in self._actions if a.kind is ActionKind.SWAP]

    def colour_choices(self) -> list[Action]:
        """Naming the colour of a first-card Wild."""
        return [a for a in self._actions if a.kind is ActionKind.CHOOSE_COLOUR]

    def by_id(self, action_id: int) -> Action:
        for action in self._actions:
            if action.id == action_id:
                return action
        raise KeyError(f"action id {action_id} is not legal here; legal ids: {[a.id for a in self._actions]}")

    def safe_default(self) -> Action:
        """What the server itself would apply for a missed decision: draw, keep, accept, pass,
        done; otherwise the first legal action (a first-card colour, a swap)."""
        for action in (self.draw, self.keep, self.accept, self.pass_, self.done):
            if action is not None:
                return action
        return self._actions[0]
