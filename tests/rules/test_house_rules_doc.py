"""The worked examples of docs/rules.md for RULINGS 26-28, played by the action ids the page quotes."""

from __future__ import annotations

import pytest

from uno_arena.rules import (
    Colour,
    Hand,
    NotIdenticalError,
    Phase,
    action_from_id,
    legal_actions,
    parse_card,
    play,
    play_card,
)
from uno_arena.rules.event import Caught, Drew, Played, Skipped

from .house import arrange, held
from .table import events_of

RED_3 = "red_3"


def ids(hand: Hand, *action_ids: int) -> None:
    for action_id in action_ids:
        play(hand, action_from_id(action_id))


def test_jump_in_example() -> None:
    hand = arrange("green_1 green_2 green_4", "red_5 blue_8 yellow_9", "blue_5 red_6 yellow_2",
                   "red_5 green_6 yellow_4", top=RED_3, jump_in=True)  # fmt: skip
    ids(hand, 10)
    assert (hand.phase, hand.to_move, [a.id for a in legal_actions(hand)]) == (Phase.JUMP_IN, 2, [125])
    with pytest.raises(NotIdenticalError):
        play(hand, play_card(parse_card("blue_5")))
    ids(hand, 125, 10)
    assert hand.events[-1] == Played(3, parse_card("red_5"), None, False, 2, jump_in=True)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)


def test_jump_in_on_a_draw_two_example() -> None:
    hand = arrange("green_1 green_2 green_4", "red_draw_two blue_8 yellow_9", "blue_5 red_6 yellow_2",
                   "red_draw_two green_6 yellow_4", top=RED_3, jump_in=True, stacking=True)  # fmt: skip
    ids(hand, 24, 125, 24)
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.STACK, 0, 4)
    assert len(hand.cards[2]) == 3


def test_seven_swap_example() -> None:
    def swapped(call: bool) -> Hand:
        hand = arrange("green_1 green_2 green_4", "red_7 blue_8", "blue_5 red_6 yellow_2", "green_6",
                       top=RED_3, seven_zero=True)  # fmt: skip
        ids(hand, 15 if call else 14, 134)
        assert held(hand)[1] == ["green_6"] and held(hand)[3] == ["blue_8"]
        return hand

    hand = swapped(call=False)
    ids(hand, 124)
    assert events_of(hand, Caught) == [Caught(2, 1)]
    assert [(e.seat, e.count) for e in events_of(hand, Drew)] == [(1, 2)]
    assert swapped(call=True).phase is Phase.TURN


def test_zero_pass_example() -> None:
    hand = arrange("green_1 green_2", "red_0 blue_8 yellow_9", "blue_5 red_6 yellow_2", "green_6",
                   top=RED_3, seven_zero=True)  # fmt: skip
    ids(hand, 0)
    assert held(hand) == [
        ["green_6"],
        ["green_1", "green_2"],
        ["blue_8", "yellow_9"],
        ["blue_5", "red_6", "yellow_2"],
    ]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


def test_three_sevens_example() -> None:
    hand = arrange("green_1 green_2", "red_7 blue_7 green_7 yellow_2", "blue_5 red_6", "green_6 yellow_4",
                   top=RED_3, multi_play=True)  # fmt: skip
    ids(hand, 14)
    assert [a.id for a in legal_actions(hand)] == [66, 67, 92, 93, 130]
    ids(hand, 66, 93)
    assert [a.id for a in legal_actions(hand)] == [130]
    ids(hand, 130)
    assert (hand.top, hand.colour, hand.phase, hand.to_move) == (
        parse_card("blue_7"),
        Colour.BLUE,
        Phase.TURN,
        2,
    )


def test_two_draw_twos_example() -> None:
    hand = arrange("green_1 green_2", "red_draw_two green_draw_two green_9 yellow_8", "blue_5 red_6",
                   "green_6 yellow_4", top=RED_3, multi_play=True)  # fmt: skip
    ids(hand, 24, 76, 130)
    assert [(e.seat, e.count) for e in events_of(hand, Drew)] == [(2, 4)]
    assert events_of(hand, Skipped) == [Skipped(2)]
    assert (hand.phase, hand.to_move, hand.colour) == (Phase.TURN, 3, Colour.GREEN)
