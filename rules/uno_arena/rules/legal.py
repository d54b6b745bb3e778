"""Legal actions: sorted by action id and complete for the seat to move."""

from __future__ import annotations

from uno_arena.rules.action import (
    ACCEPT,
    ACTIONS,
    CATCH,
    CHALLENGE,
    DRAW,
    KEEP,
    PASS,
    Action,
    ActionKind,
    choose_colour,
)
from uno_arena.rules.card import COLOURS, FACES, Rank
from uno_arena.rules.hand import Hand, Phase


def _plays_by_card(uno_allowed: bool) -> tuple[tuple[Action, ...], ...]:
    """For each card face, its plays in id order; the UNO-call variants only if allowed."""
    table: list[list[Action]] = [[] for _ in FACES]
    for action in ACTIONS:
        if action.kind is ActionKind.PLAY and (uno_allowed or not action.uno):
            assert action.card is not None
            table[action.card.index].append(action)
    return tuple(tuple(plays) for plays in table)


_PLAYS = (_plays_by_card(False), _plays_by_card(True))
_CHOOSE = [choose_colour(c) for c in COLOURS]
_CATCH = [CATCH, PASS]
_CHALLENGE = [CHALLENGE, ACCEPT]


def legal_actions(hand: Hand) -> list[Action]:
    """Every action the seat to move may take, sorted by id; empty once the hand is over.

    A UNO call is offered only with a play that leaves exactly one card; a call
    made with any other play is ignored (RULINGS 20), see `validate.play`.
    """
    phase = hand.phase
    if phase is Phase.TURN:
        return _turn_actions(hand)
    if phase is Phase.DRAWN:
        assert hand.drawn is not None
        plays = _PLAYS[len(hand.cards[hand.to_move]) == 2][hand.drawn.index]
        return [*plays, KEEP]
    if phase is Phase.CATCH:
        return list(_CATCH)
    if phase is Phase.CHALLENGE:
        if hand.config.stacking:
            return _stacking_actions(hand, Rank.WILD_DRAW_FOUR, _CHALLENGE)
        return list(_CHALLENGE)
    if phase is Phase.STACK:
        return _stacking_actions(hand, Rank.DRAW_TWO, [ACCEPT])
    if phase is Phase.CHOOSE_COLOUR:
        return list(_CHOOSE)
    return []


def _stacking_actions(hand: Hand, rank: Rank, answers: list[Action]) -> list[Action]:
    """RULINGS 25: a card of the same rank stacked on the penalty (any colour), or `answers`."""
    held = hand.cards[hand.to_move]
    plays = _PLAYS[len(held) == 2]
    actions: list[Action] = []
    for index in sorted({c.index for c in held if c.rank is rank}):
        actions += plays[index]
    return actions + answers  # every play id is below the ids of challenge and accept


def _turn_actions(hand: Hand) -> list[Action]:
    held = hand.cards[hand.to_move]
    plays = _PLAYS[len(held) == 2]
    colour, rank = hand.colour, hand.discards[-1].rank
    playable = {c.index for c in held if c.colour is None or c.colour is colour or c.rank is rank}
    actions: list[Action] = []
    for index in sorted(playable):
        actions += plays[index]
    actions.append(DRAW)
    return actions
