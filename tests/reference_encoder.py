"""The reference encoders: the messages of a decision request built field by field with the generated
classes (`observation`, `decision_request`), and the hot path's bytes written without its cache
(`observation_bytes`, `decision_request_bytes`). No production code calls them: the tests hold the
match server's `codec.MatchEncoder` byte for byte equal to them, and the golden files pin their bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from uno_arena.rules import Action, Hand, Match, Observation, observe
from uno_arena.v1 import bot_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.codec import (
    _DEADLINE_MS,
    _REQUEST_ID,
    _REQUEST_MATCH_ID,
    PHASES,
    _discard_elements,
    _number,
    _observed,
    _request,
    _standing,
    _text,
    action_message,
    card,
    cards,
    colour_number,
)


def observation(value: Observation) -> pb.Observation:
    message = _observation_head(value)
    message.cards.extend(cards(value.cards))
    message.discards.extend(cards(value.discards))
    for seat, shown in value.shown:
        message.shown.add(seat=seat, cards=cards(shown))
    return message


def _observation_head(value: Observation) -> pb.Observation:
    """Every field but the card lists."""
    message = pb.Observation(
        seat=value.seat,
        players=value.players,
        phase=PHASES[value.phase],
        to_move=max(value.to_move, 0),
        turn_seat=value.turn_seat,
        dealer=value.dealer,
        direction=value.direction,
        top=card(value.top),
        colour=colour_number(value.colour),
        hand_sizes=list(value.hand_sizes),
        draw_pile_size=value.draw_pile_size,
        penalty=value.penalty,
        turn=value.turn,
        scores=list(value.scores),
        target_score=value.target_score,
        hand_number=value.hand_number,
    )
    if value.drawn is not None:
        message.drawn.CopyFrom(card(value.drawn))
    return message


def decision_request(
    match: Match,
    seat: int,
    legal: list[Action],
    match_id: str,
    request_id: str,
    deadline_ms: int,
    events: list[pb.Event],
) -> bot_pb2.DecisionRequest:
    """Everything `seat` needs to decide, in one message (`events`: those it has not had yet)."""
    return bot_pb2.DecisionRequest(
        match_id=match_id,
        request_id=request_id,
        observation=observation(observe(match, seat)),
        legal_actions=[action_message(a) for a in legal],
        deadline_ms=deadline_ms,
        events=events,
    )


def observation_bytes(hand: Hand, seat: int, scores: Sequence[int], hand_number: int) -> bytes:
    """`observation(observe_hand(hand, seat, scores, hand_number))` serialized, straight from the hand."""
    standing = _standing(scores, hand.config.target_score, hand_number)
    return b"".join(_observed(hand, seat, standing, _discard_elements(hand.discards, 0)))


def decision_request_bytes(
    match: Match,
    seat: int,
    legal: list[Action],
    match_id: str,
    request_id: str,
    deadline_ms: int,
    events: list[bytes],
) -> bytes:
    """`ServerMessage(decision_request=decision_request(...))` serialized, written directly.

    `events` are `event_element` encodings. `MatchEncoder.request` writes the same bytes while
    keeping what it can from one request to the next.
    """
    observed = observation_bytes(match.hand, seat, match.totals, match.hand_number)
    head = [
        _text(_REQUEST_MATCH_ID, match_id),
        _text(_REQUEST_ID, request_id),
        _number(_DEADLINE_MS, deadline_ms),
    ]
    return _request(head, [observed], legal, events)
