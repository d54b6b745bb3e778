"""`LegalActions`: the legal actions of one decision, with the questions a bot asks of them, and
`safe_default`, the one policy that answers a decision nobody made (the server for a faulty seat,
the SDK for a bot that failed).

Not compiled (setup.py): a compiled class cannot derive from `Sequence`, and nothing on the match
server's hot path builds one; `Observation.legal` does, for bots.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from uno_arena.rules.action import ACCEPT, DONE, DRAW, KEEP, PASS, Action, ActionKind
from uno_arena.rules.card import Colour, Kind, Rank

SAFE_DEFAULTS: tuple[Action, ...] = (DRAW, KEEP, ACCEPT, PASS, DONE)
"""What a missed decision gets, the first of these that is legal; else the first legal action."""


def safe_default(legal: Sequence[Action]) -> Action:
    """The safe choice for a seat that did not decide: draw, keep, accept, pass, done; otherwise the
    first legal action (a first-card colour, a swap). `legal` must not be empty."""
    for action in SAFE_DEFAULTS:
        if action in legal:
            return action
    return legal[0]


class LegalActions(Sequence[Action]):
    """The legal actions of one decision, sorted by id, with filters for common questions.

    Equal to another `LegalActions` or a tuple holding the same actions.
    """

    __slots__ = ("_actions",)

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

    def __contains__(self, action: object) -> bool:
        return action in self._actions

    def __repr__(self) -> str:
        return f"LegalActions({[str(a) for a in self._actions]})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LegalActions):
            return self._actions == other._actions
        return isinstance(other, tuple) and self._actions == other

    def __hash__(self) -> int:
        return hash(self._actions)

    def plays(
        self,
        *,
        colour: Colour | None = None,
        kind: Kind | None = None,
        rank: Rank | None = None,
        uno: bool | None = None,
    ) -> list[Action]:
        """Plays, optionally only of a card colour, a kind or a rank, or with/without an UNO call."""
        return [
            a
            for a in self._actions
            if a.card is not None
            and a.kind is ActionKind.PLAY
            and (colour is None or a.card.colour is colour)
            and (kind is None or a.card.kind is kind)
            and (rank is None or a.card.rank is rank)
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
        """What the server itself applies for a missed decision (`safe_default`)."""
        return safe_default(self._actions)
