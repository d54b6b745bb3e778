"""RULINGS 24: every hand and every match terminates, and says how."""

import random
from collections.abc import Sequence

import pytest

from uno_arena.rules import (
    DRAW,
    KEEP,
    Action,
    HandEnd,
    MatchEnd,
    Observation,
    Phase,
    RulesConfig,
    Scoring,
    legal_actions,
    new_match,
    play,
    run_match,
)
from uno_arena.rules.event import MatchEnded
from uno_arena.rules.runner import Policy, random_policy

from .table import deal


def never_play(actions: Sequence[Action]) -> Action:
    """Draw and keep whenever allowed; otherwise the last (highest-id) action."""
    for preferred in (KEEP, DRAW):
        if preferred in actions:
            return preferred
    return actions[-1]


def always_draw(observation: Observation) -> Action:
    return never_play(observation.legal_actions)


def test_max_turns_per_hand_ends_the_hand_without_a_winner() -> None:
    hand = deal("red_1 red_2", "blue_1 blue_2", first="green_7", max_turns_per_hand=10)
    while hand.result is None:
        play(hand, KEEP if hand.phase is Phase.DRAWN else DRAW)
    assert hand.result.reason is HandEnd.MAX_TURNS
    assert hand.result.winner is None
    assert hand.result.points == (0, 0)
    assert hand.turns == 10


def test_a_full_round_without_play_or_anything_to_draw_ends_the_hand() -> None:
    hand = deal("red_1 red_2", "blue_1 blue_2", first="green_7")
    while hand.result is None:
        play(hand, KEEP if hand.phase is Phase.DRAWN else DRAW)
    assert hand.result.reason is HandEnd.NO_PROGRESS
    assert hand.result.points == (0, 0)
    assert not hand.draw_pile and len(hand.discards) == 1


def test_max_hands_per_match_ends_the_match_highest_total_wins() -> None:
    config = RulesConfig(players=2, max_hands_per_match=3)
    policies: list[Policy] = [random_policy(random.Random(1)), random_policy(random.Random(2))]
    result = run_match(config, 9, policies)
    assert result.reason is MatchEnd.MAX_HANDS
    assert len(result.hands) == 3
    assert all(result.totals[w] == max(result.totals) for w in result.winners)


@pytest.mark.parametrize("scoring", list(Scoring))
def test_scoreless_match_is_a_shared_win_reported_as_such(scoring: Scoring) -> None:
    config = RulesConfig(players=3, max_hands_per_match=2, max_turns_per_hand=5, scoring=scoring)
    result = run_match(config, 1, [always_draw] * 3)
    assert result.reason is MatchEnd.MAX_HANDS
    assert all(h.reason is not HandEnd.PLAYED_OUT for h in result.hands)
    assert result.winners == (0, 1, 2) and result.shared


def test_match_end_is_an_event() -> None:
    match = new_match(RulesConfig(players=2, max_hands_per_match=1, max_turns_per_hand=4), random.Random(0))
    while match.result is None:
        play(match, never_play(legal_actions(match)))
    assert match.events[-1] == MatchEnded(MatchEnd.MAX_HANDS, (0, 1), (0, 0))
