"""The validating entry point refuses illegal actions with specific errors and changes nothing."""

from dataclasses import replace

import pytest

from uno_arena.rules import (
    ACCEPT,
    CATCH,
    DRAW,
    Action,
    ActionKind,
    CardDoesNotMatchError,
    CardNotHeldError,
    Colour,
    HandOverError,
    IllegalActionError,
    InvalidActionError,
    NotYourTurnError,
    WrongDecisionError,
    action_from_id,
    parse_card,
    play,
    play_card,
)

from .table import deal


def fresh() -> object:
    return deal("red_1 blue_2", "green_3 green_4", first="red_9", dealer=1)


@pytest.mark.parametrize(
    ("action", "error"),
    [
        (play_card(parse_card("yellow_5")), CardNotHeldError),
        (play_card(parse_card("blue_2")), CardDoesNotMatchError),
        (ACCEPT, WrongDecisionError),
        (CATCH, WrongDecisionError),
    ],
)
def test_illegal_actions_raise_specific_errors(action: Action, error: type[IllegalActionError]) -> None:
    hand = fresh()
    before = (list(hand.events), [list(c) for c in hand.cards])  # type: ignore[attr-defined]
    with pytest.raises(error):
        play(hand, action)  # type: ignore[arg-type]
    assert (list(hand.events), [list(c) for c in hand.cards]) == before  # type: ignore[attr-defined]
    assert issubclass(error, ValueError)


def test_malformed_actions_are_invalid() -> None:
    hand = fresh()
    with pytest.raises(InvalidActionError):
        play(hand, Action(ActionKind.PLAY, parse_card("wild"), None))  # type: ignore[arg-type]
    with pytest.raises(InvalidActionError):
        play(hand, replace(play_card(parse_card("red_1")), colour=Colour.BLUE))  # type: ignore[arg-type]
    with pytest.raises(InvalidActionError):
        action_from_id(10_000)


def test_wrong_seat_is_refused() -> None:
    hand = fresh()
    with pytest.raises(NotYourTurnError):
        play(hand, DRAW, seat=1)  # type: ignore[arg-type]
    play(hand, DRAW, seat=0)  # type: ignore[arg-type]


def test_nothing_after_the_end() -> None:
    hand = deal("red_1", "blue_2", first="red_9", dealer=1)
    play(hand, play_card(parse_card("red_1")))
    with pytest.raises(HandOverError):
        play(hand, DRAW)
