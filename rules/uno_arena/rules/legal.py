"""Legal actions: sorted by action id and complete for the seat to move."""

from __future__ import annotations

from uno_arena.rules.action import (
    ACCEPT,
    ACTIONS,
    CATCH,
    CHALLENGE,
    DONE,
    DRAW,
    KEEP,
    PASS,
    Action,
    ActionKind,
    choose_colour,
    swap,
)
from uno_arena.rules.card import COLOURS, FACES, Card, Rank
from uno_arena.rules.config import MAX_PLAYERS
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
_SWAPS = [swap(seat) for seat in range(MAX_PLAYERS)]


def legal_actions(hand: Hand) -> list[Action]:
    """Every action the seat to move may take, sorted by id; empty once the hand is over.

    A UNO call is offered only with a play that leaves exactly one card; a call
    made with any other play is ignored (RULINGS 20), see `validate.play`. With
    `seven_zero` every 7 and 0 play offers it: the swap or pass decides how many
    cards the player is left with (RULINGS 27).
    """
    phase = hand.phase
    if phase is Phase.TURN:
        return _turn_actions(hand)
    if phase is Phase.DRAWN:
        assert hand.drawn is not None
        return [*_plays_of(hand, hand.drawn), KEEP]
    if phase is Phase.CATCH:
        return list(_CATCH)
    if phase is Phase.CHALLENGE:
        if hand.config.stacking:
            return _same_rank_actions(hand, Rank.WILD_DRAW_FOUR, _CHALLENGE)
        return list(_CHALLENGE)
    if phase is Phase.STACK:
        return _same_rank_actions(hand, Rank.DRAW_TWO, [ACCEPT])
    if phase is Phase.CHOOSE_COLOUR:
        return list(_CHOOSE)
    if phase is Phase.JUMP_IN:
        top = hand.discards[-1]
        identical = top in hand.cards[hand.to_move]
        return [*_plays_of(hand, top), PASS] if identical else [PASS]
    if phase is Phase.LAY:
        return _same_rank_actions(hand, hand.discards[-1].rank, [DONE])
    if phase is Phase.SWAP:
        return [action for action in _SWAPS[: hand.players] if action.seat != hand.to_move]
    return []


def _plays_of(hand: Hand, card: Card) -> tuple[Action, ...]:
    """The plays of `card` by the seat to move, with the UNO-call variants where they count."""
    held = hand.cards[hand.to_move]
    seven_zero = hand.config.seven_zero and (card.rank is Rank.SEVEN or card.rank is Rank.ZERO)
    return _PLAYS[len(held) == 2 or seven_zero][card.index]


def _same_rank_actions(hand: Hand, rank: Rank, answers: list[Action]) -> list[Action]:
    """A held card of `rank` (any colour), or `answers`: stacking on a penalty (RULINGS 25) or
    laying one more card with a play (RULINGS 28)."""
    held = hand.cards[hand.to_move]
    actions: list[Action] = []
    for index in sorted({c.index for c in held if c.rank is rank}):
        actions += _plays_of(hand, FACES[index])
    return actions + answers  # every play id is below the ids of the other actions


def _turn_actions(hand: Hand) -> list[Action]:
    held = hand.cards[hand.to_move]
    plays = _PLAYS[len(held) == 2]
    colour, rank = hand.colour, hand.discards[-1].rank
    playable = {c.index for c in held if c.colour is None or c.colour is colour or c.rank is rank}
    actions: list[Action] = []
    if hand.config.seven_zero:
        for index in sorted(playable):
            actions += _plays_of(hand, FACES[index])
    else:
        for index in sorted(playable):
            actions += plays[index]
    actions.append(DRAW)
    return actions
