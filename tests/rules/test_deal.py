"""RULINGS 4: the deal."""

import random

import pytest

from uno_arena.rules import Phase, RulesConfig, new_hand
from uno_arena.rules.event import Dealt, FirstCard

from .table import deal, names


@pytest.mark.parametrize("players", [2, 4, 10])
def test_seven_cards_each_and_the_rest_is_the_draw_pile(players: int) -> None:
    hand = new_hand(RulesConfig(players=players), random.Random(1))
    dealt = [e for e in hand.events if isinstance(e, Dealt)]
    assert sorted(e.seat for e in dealt) == list(range(players))
    assert all(e.count == 7 for e in dealt)
    assert hand.card_count() == 108


def test_hand_size_option() -> None:
    hand = new_hand(RulesConfig(players=3, hand_size=5), random.Random(1))
    assert all(e.count == 5 for e in hand.events if isinstance(e, Dealt))


def test_deal_goes_round_from_the_dealers_left_and_turns_up_the_next_card() -> None:
    hand = deal("red_1 red_2", "blue_1 blue_2", "green_1 green_2", first="yellow_5", draw="red_9", dealer=1)
    assert names(hand.cards[0]) == ["red_1", "red_2"]
    assert names(hand.cards[2]) == ["green_1", "green_2"]
    assert str(hand.top) == "yellow_5"
    assert str(hand.draw_pile[-1]) == "red_9"
    assert [e.card for e in hand.events if isinstance(e, FirstCard)] == [hand.top]
    assert hand.phase is Phase.TURN
