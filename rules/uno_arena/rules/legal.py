"""Legal actions: sorted by action id and complete for the seat to move; and which decisions a host
may settle without asking (`one_choice_is_public`)."""

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
from uno_arena.rules.hand import Hand, Phase, may_lay_more


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

    A UNO call is offered only with a play that can leave exactly one card (`uno_counts`); a
    call made with any other play is ignored (RULINGS 20), see `validate.play`. With
    `seven_zero` every 7 and 0 play offers it: the swap or pass decides how many
    cards the player is left with (RULINGS 27). With `multi_play` a play offers it when the
    whole play can leave one card: UNO is judged after the whole play (RULINGS 28).

    After a draw (phase DRAWN) the drawn card's plays come before KEEP when it plays; when it
    does not, KEEP is the only action, but the seat is asked all the same (RULINGS 29).
    """
    phase = hand.phase
    if phase is Phase.TURN:
        return _turn_actions(hand)
    if phase is Phase.DRAWN:
        drawn = hand.drawn
        assert drawn is not None
        return [*_plays_of(hand, drawn), KEEP] if hand.playable(drawn) else [KEEP]
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
    return _PLAYS[uno_counts(hand, card)][card.index]


def uno_counts(hand: Hand, card: Card) -> bool:
    """Whether a UNO call made with a play of `card` by the seat to move, now, can count: the play
    leaves one card (RULINGS 19, 20); with `seven_zero` a 7 or 0 (the swap or pass decides what is
    left, RULINGS 27); with `multi_play`, a play that can still be followed by enough cards of its
    number or symbol to leave one (UNO is judged after the whole play, RULINGS 28)."""
    held = hand.cards[hand.to_move]
    if len(held) == 2:
        return True
    rank = card.rank
    if hand.config.seven_zero and (rank is Rank.SEVEN or rank is Rank.ZERO):
        return True
    if len(held) > 2 and may_lay_more(hand, card):
        alike = sum(1 for c in held if c.rank is rank)  # this card and the others it may be laid with
        return alike >= len(held) - 1
    return False


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
    if hand.config.seven_zero or hand.config.multi_play:  # the UNO call depends on the card
        for index in sorted(playable):
            actions += _plays_of(hand, FACES[index])
    else:
        for index in sorted(playable):
            actions += plays[index]
    actions.append(DRAW)
    return actions


_PUBLIC_CHOICES = (Phase.CHOOSE_COLOUR, Phase.CATCH, Phase.SWAP)
"""Phases whose legal actions follow from public information alone, as CHALLENGE's do without stacking."""


def choices_are_public(hand: Hand) -> bool:
    """Whether the legal actions of the seat to move follow from public information alone (the table,
    not the seat's cards): naming a first Wild's colour, a catch window, a challenge without stacking,
    a 7's swap. Everywhere else they depend on what the seat holds: a turn with nothing to play, a drawn
    card that does not play, a stack, lay or jump-in window with nothing to add have one legal action,
    but only the seat knows it (RULINGS 29)."""
    phase = hand.phase
    return phase in _PUBLIC_CHOICES or (phase is Phase.CHALLENGE and not hand.config.stacking)
