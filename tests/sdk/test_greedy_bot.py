"""The greedy and random example bots on the house rules' decisions (RULINGS 25-28), with the test kit."""

from __future__ import annotations

import pytest

from uno_arena.sdk import ActionKind, Bot, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.sdk.testkit import match_info, position

HOUSE = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True}


def test_greedy_stacks_a_draw_two_rather_than_draw() -> None:
    seen = position("blue draw two, blue 3", "red draw two", phase="stack", rules_options=HOUSE)
    assert GreedyBot().decide(seen).text == "play blue_draw_two uno"


def test_greedy_jumps_in_when_it_can() -> None:
    seen = position("red 4, blue 3, green 9", "red 4", phase="jump_in", players=3, rules_options=HOUSE)
    assert GreedyBot().decide(seen).text == "play red_4"


def test_greedy_lays_every_card_it_can_then_is_done() -> None:
    seen = position("blue 5, green 5, red 2", "red 5", phase="lay", players=3, rules_options=HOUSE)
    assert GreedyBot().decide(seen).kind is ActionKind.PLAY
    done = position("red 2, blue 9", "green 5", discards="blue 5", phase="lay", laid=2, rules_options=HOUSE)
    assert GreedyBot().decide(done).kind is ActionKind.DONE


def test_greedy_swaps_with_the_smallest_hand() -> None:
    seen = position(
        "red 3, blue 3", "red 7", phase="swap", players=4, hand_sizes=[2, 5, 3, 6], rules_options=HOUSE
    )
    assert GreedyBot().decide(seen).seat == 2


def test_greedy_sheds_by_points_when_every_seven_and_zero_comes_with_the_uno_call() -> None:
    """seven_zero offers the UNO call with every 7 and 0: greedy still picks the card first."""
    seen = position("red 7, red 9, blue 3", "red 2", players=3, rules_options=HOUSE)
    assert GreedyBot().decide(seen).text == "play red_9"
    seven = position("red 7, blue 3, blue 8", "red 2", players=3, rules_options=HOUSE)
    assert GreedyBot().decide(seven).text == "play red_7 uno"


POSITIONS = {
    "stack": {"hand": "blue draw two, blue 3", "top": "red draw two", "phase": "stack"},
    "challenge": {
        "hand": "wild draw four, blue 3",
        "top": "wild draw four",
        "colour": "red",
        "phase": "challenge",
    },
    "jump_in": {"hand": "red 4, blue 3, green 9", "top": "red 4", "phase": "jump_in"},
    "lay": {"hand": "blue 5, green 5, red 2", "top": "red 5", "phase": "lay"},
    "swap": {"hand": "red 3, blue 3", "top": "red 7", "phase": "swap"},
    "turn": {"hand": "red 7, red 0, blue 7, blue 3", "top": "red 2"},
}


@pytest.mark.parametrize("bot", [RandomBot, GreedyBot, StrongBot])
@pytest.mark.parametrize("where", sorted(POSITIONS))
def test_every_example_bot_answers_every_house_rule_decision_legally(bot: type[Bot], where: str) -> None:
    seen: Observation = position(**POSITIONS[where], players=4, rules_options=HOUSE)  # type: ignore[arg-type]
    player = bot()
    player.on_match_start(match_info(seen, HOUSE))
    for _ in range(20):  # the random bot, many times
        assert player.decide(seen) in seen.legal
