"""What the bot sees when it must decide: a typed view of the protocol's Observation."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from uno_arena.sdk._protocol import members
from uno_arena.sdk.actions import LegalActions, action_from
from uno_arena.sdk.cards import Card, Colour, card_from, cards_from, colour_of
from uno_arena.v1 import bot_pb2
from uno_arena.v1 import game_pb2 as pb


class Phase(enum.StrEnum):
    """What is being decided (`OVER` only in a finished hand's view)."""

    CHOOSE_COLOUR = "choose_colour"
    TURN = "turn"
    DRAWN = "drawn"
    CATCH = "catch"
    CHALLENGE = "challenge"
    OVER = "over"
    STACK = "stack"  # stacking house rule: a Draw Two hit you; stack a Draw Two or accept
    JUMP_IN = "jump_in"  # jump_in house rule: play a card identical to the top card out of turn, or pass
    LAY = "lay"  # multi_play house rule: lay another card of the top card's number or symbol, or done
    SWAP = "swap"  # seven_zero house rule: you played a 7; choose whom to swap hands with


PHASES: dict[int, Phase] = members(pb.Phase.DESCRIPTOR, Phase)  # number -> member


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything this seat may see at one decision (never another seat's cards).

    `phase` is what is being decided: "turn" (play or draw), "drawn" (play the
    drawn card or keep it), "challenge" (a Wild Draw Four hit you: challenge,
    accept, or with stacking play a Wild Draw Four), "stack" (stacking only: a
    Draw Two hit you: play a Draw Two or accept), "catch" (someone did not call
    UNO), "choose_colour" (a first-card Wild); with the other house rules,
    "jump_in" (play a card identical to the top card out of turn, or pass),
    "lay" (lay another card of the top card's number or symbol, or done) and
    "swap" (you played a 7: swap hands with a seat). `penalty` is what you draw
    if you accept (the stacked total with stacking), 0 when nothing is pending.
    """

    match_id: str
    seat: int
    players: int
    phase: Phase
    turn_seat: int
    dealer: int
    direction: int  # +1 clockwise (to seat+1), -1 counter-clockwise
    hand: tuple[Card, ...]
    top: Card
    colour: Colour | None  # the colour to match (the named one after a Wild)
    discards: tuple[Card, ...]  # since the last reshuffle, bottom first
    hand_sizes: tuple[int, ...]
    draw_pile_size: int
    drawn: Card | None  # the playable card just drawn, in phase "drawn"
    penalty: int  # cards pending for the next player (Draw Twos, Wild Draw Fours); see above
    shown: tuple[tuple[int, tuple[Card, ...]], ...]  # hands shown to you in challenges this hand
    turn: int
    scores: tuple[int, ...]
    target_score: int
    hand_number: int
    legal: LegalActions

    @property
    def next_seat(self) -> int:
        """Who plays after the seat whose turn it is."""
        return (self.turn_seat + self.direction) % self.players

    @property
    def opponents(self) -> tuple[int, ...]:
        return tuple(s for s in range(self.players) if s != self.seat)


def observation_from(match_id: str, request: bot_pb2.DecisionRequest) -> Observation:
    """Build the view from a protocol DecisionRequest."""
    o = request.observation
    return Observation(
        match_id=match_id,
        seat=int(o.seat),
        players=int(o.players),
        phase=PHASES.get(int(o.phase), Phase.TURN),
        turn_seat=int(o.turn_seat),
        dealer=int(o.dealer),
        direction=int(o.direction),
        hand=cards_from(o.cards),
        top=card_from(o.top),
        colour=colour_of(int(o.colour)),
        discards=cards_from(o.discards),
        hand_sizes=tuple(int(n) for n in o.hand_sizes),
        draw_pile_size=int(o.draw_pile_size),
        drawn=card_from(o.drawn) if o.HasField("drawn") else None,
        penalty=int(o.penalty),
        shown=tuple((int(s.seat), cards_from(s.cards)) for s in o.shown),
        turn=int(o.turn),
        scores=tuple(int(s) for s in o.scores),
        target_score=int(o.target_score),
        hand_number=int(o.hand_number),
        legal=LegalActions([action_from(a) for a in request.legal_actions]),
    )
