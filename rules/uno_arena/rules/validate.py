"""The validating entry point: `play` checks an untrusted action, then applies it.

Every refusal is a small `IllegalActionError` subclass (a `ValueError`) that
says what was wrong, so a server can map it to a status and a bot author can
read it.
"""

from __future__ import annotations

from dataclasses import replace

from uno_arena.rules.action import Action, ActionKind, InvalidActionError, intern
from uno_arena.rules.event import Seat
from uno_arena.rules.hand import Hand, Phase, apply
from uno_arena.rules.legal import legal_actions, uno_counts


class IllegalActionError(ValueError):
    """A well-formed action that the rules do not allow now."""


class HandOverError(IllegalActionError):
    """The hand has ended; nothing more can be played."""


class NotYourTurnError(IllegalActionError):
    """The action came from a seat that is not the one to move."""


class WrongDecisionError(IllegalActionError):
    """The action answers a different decision than the one asked (e.g. draw during a challenge)."""


class CardNotHeldError(IllegalActionError):
    """The card played is not in the player's hand."""


class NotDrawnCardError(IllegalActionError):
    """After drawing, only the card just drawn may be played (RULINGS 13)."""


class CardDoesNotMatchError(IllegalActionError):
    """The card matches the top discard by neither colour, number nor symbol (RULINGS 11)."""


class CannotStackError(IllegalActionError):
    """With stacking, only a Draw Two goes on a Draw Two and a Wild Draw Four on a Wild Draw Four
    (RULINGS 25): they never mix, and nothing else is played on a pending penalty."""


class NotIdenticalError(IllegalActionError):
    """Only a card identical to the top card (same colour, same number or symbol) may jump in
    (RULINGS 26)."""


class NotSameRankError(IllegalActionError):
    """Cards laid together share their number or symbol (RULINGS 28)."""


class SwapSeatError(IllegalActionError):
    """A 7's swap names another seat at the table (RULINGS 27)."""


_DECISIONS: dict[Phase, frozenset[ActionKind]] = {
    Phase.TURN: frozenset({ActionKind.PLAY, ActionKind.DRAW}),
    Phase.DRAWN: frozenset({ActionKind.PLAY, ActionKind.KEEP}),
    Phase.CATCH: frozenset({ActionKind.CATCH, ActionKind.PASS}),
    Phase.CHALLENGE: frozenset({ActionKind.CHALLENGE, ActionKind.ACCEPT}),
    Phase.STACK: frozenset({ActionKind.PLAY, ActionKind.ACCEPT}),
    Phase.CHOOSE_COLOUR: frozenset({ActionKind.CHOOSE_COLOUR}),
    Phase.JUMP_IN: frozenset({ActionKind.PLAY, ActionKind.PASS}),
    Phase.LAY: frozenset({ActionKind.PLAY, ActionKind.DONE}),
    Phase.SWAP: frozenset({ActionKind.SWAP}),
    Phase.OVER: frozenset(),
}


_PLAYING = (Phase.TURN, Phase.DRAWN, Phase.STACK, Phase.CHALLENGE, Phase.JUMP_IN, Phase.LAY)
"""Where a card may be played."""


def canonical(hand: Hand, action: Action) -> Action:
    """The action as the rules read it: a UNO call with a play that cannot leave one card is dropped
    (RULINGS 20). It is kept wherever it can count (`legal.uno_counts`): with a 7 or 0 under
    `seven_zero` (the swap or pass decides, RULINGS 27), and under `multi_play` with a play that the
    cards laid after it can bring down to one (UNO is judged after the whole play, RULINGS 28).

    Raises `InvalidActionError` for an action outside the action space.
    """
    action = intern(action)
    card = action.card
    if action.uno and card is not None and hand.phase in _PLAYING and not uno_counts(hand, card):
        return intern(replace(action, uno=False))
    return action


def play(hand: Hand, action: Action, seat: Seat | None = None) -> Action:
    """Check `action` (by `seat`, if given) against the rules and apply it; return it canonical.

    Raises `InvalidActionError` (malformed) or an `IllegalActionError` subclass;
    the hand is unchanged when it raises.
    """
    if hand.phase is Phase.OVER:
        raise HandOverError("the hand is over")
    if seat is not None and seat != hand.to_move:
        raise NotYourTurnError(f"seat {seat} acted, but seat {hand.to_move} is to move")
    action = canonical(hand, action)
    if action not in legal_actions(hand):
        raise _why_illegal(hand, action)
    apply(hand, action)
    return action


def _why_illegal(hand: Hand, action: Action) -> IllegalActionError:
    expected = _DECISIONS[hand.phase]
    if hand.phase is Phase.CHALLENGE and hand.config.stacking:
        expected = expected | {ActionKind.PLAY}
    if action.kind not in expected:
        names = ", ".join(sorted(k.value for k in expected))
        return WrongDecisionError(f"{action} does not answer {hand.phase.value}: expected {names}")
    if hand.phase is Phase.SWAP:
        return SwapSeatError(
            f"{action}: swap with another of seats 0-{hand.players - 1}, not seat {action.seat}"
        )
    card = action.card
    if card is None or card not in hand.cards[hand.to_move]:
        return CardNotHeldError(f"{action}: {card} is not in the hand")
    if hand.phase is Phase.JUMP_IN:
        return NotIdenticalError(f"{action}: only a card identical to {hand.top} may jump in (or pass)")
    if hand.phase is Phase.LAY:
        return NotSameRankError(f"{action}: cards laid together share the top card's "
                                f"{hand.top.rank.value} (or done)")  # fmt: skip
    if hand.phase is Phase.DRAWN and card != hand.drawn:
        return NotDrawnCardError(f"{action}: only the drawn card {hand.drawn} may be played")
    if hand.phase is Phase.STACK:
        return CannotStackError(f"{action}: only a Draw Two may be stacked on the Draw Two "
                                f"(or accept: draw {hand.penalty})")  # fmt: skip
    if hand.phase is Phase.CHALLENGE:
        return CannotStackError(f"{action}: only a Wild Draw Four may be stacked on the Wild Draw Four "
                                f"(or challenge it, or accept: draw {hand.penalty})")  # fmt: skip
    return CardDoesNotMatchError(f"{action}: {card} does not match {hand.top} with colour {hand.colour}")


__all__ = [
    "CannotStackError",
    "CardDoesNotMatchError",
    "CardNotHeldError",
    "HandOverError",
    "IllegalActionError",
    "InvalidActionError",
    "NotDrawnCardError",
    "NotIdenticalError",
    "NotSameRankError",
    "NotYourTurnError",
    "SwapSeatError",
    "WrongDecisionError",
    "canonical",
    "play",
]
