"""RULINGS 21-23: the end of a hand, scoring, the match to a target."""

import random

import pytest

from uno_arena.rules import (
    HandEnd,
    MatchEnd,
    RulesConfig,
    Scoring,
    legal_actions,
    new_match,
    parse_card,
    parse_cards,
    play,
    play_card,
    run_match,
)
from uno_arena.rules.card import points
from uno_arena.rules.event import Drew
from uno_arena.rules.runner import random_policy

from .table import deal, events_of


@pytest.mark.parametrize(
    ("cards", "value"),
    [("red_0 blue_9", 9), ("red_skip green_reverse yellow_draw_two", 60), ("wild wild_draw_four", 100)],
)
def test_card_values(cards: str, value: int) -> None:
    assert points(parse_cards(cards)) == value


def test_winner_scores_every_card_left_in_the_other_hands() -> None:
    hand = deal("red_1 red_2", "blue_9 wild", "green_skip yellow_5", first="red_7", dealer=2)
    play(hand, play_card(parse_card("red_1"), uno=True))
    play(hand, legal_actions(hand)[-1])  # seat 1 draws
    while hand.to_move != 0:
        play(hand, legal_actions(hand)[-1])
    play(hand, play_card(parse_card("red_2")))
    assert hand.result is not None
    assert hand.result.reason is HandEnd.PLAYED_OUT and hand.result.winner == 0
    expected = sum(points(hand.cards[s]) for s in (1, 2))
    assert hand.result.points == (expected, 0, 0)


@pytest.mark.parametrize(("last", "drawn"), [("red_draw_two", 2), ("wild_draw_four", 4)])
def test_going_out_on_a_draw_card_next_player_draws_first_and_it_counts(last: str, drawn: int) -> None:
    hand = deal(
        f"{last} red_1",
        "blue_1 blue_2",
        first="red_7",
        dealer=1,
        draw="wild wild wild wild_draw_four wild_draw_four",
    )
    play(hand, play_card(parse_card("red_1"), uno=True))
    play(hand, legal_actions(hand)[-1])  # seat 1 draws a wild (playable): keep it
    play(hand, legal_actions(hand)[-1])
    card = parse_card(last)
    play(hand, play_card(card, None if card.colour else parse_card("red_1").colour))
    assert events_of(hand, Drew)[-1].count == drawn
    assert hand.result is not None
    assert hand.result.points[0] == points(hand.cards[1]) == 3 + 50 * (drawn + 1)


def test_penalty_points_each_adds_their_own_hand() -> None:
    hand = deal(
        "red_1 red_2",
        "blue_9 wild",
        "green_skip yellow_5",
        first="red_7",
        dealer=2,
        scoring=Scoring.PENALTY_POINTS,
    )
    play(hand, play_card(parse_card("red_1"), uno=True))
    while hand.to_move != 0:
        play(hand, legal_actions(hand)[-1])
    play(hand, play_card(parse_card("red_2")))
    assert hand.result is not None
    assert hand.result.points == (0, points(hand.cards[1]), points(hand.cards[2]))


def test_match_is_played_to_the_target_by_default_500() -> None:
    config = RulesConfig(players=2)
    assert config.target_score == 500
    result = run_match(config, 11, [random_policy(random.Random(1)), random_policy(random.Random(2))])
    assert result.reason is MatchEnd.TARGET_REACHED
    assert max(result.totals) >= 500
    assert result.winners == (result.totals.index(max(result.totals)),)
    assert [sum(p) for p in zip(*(h.points for h in result.hands), strict=True)] == list(result.totals)


def test_penalty_points_match_fewest_points_wins() -> None:
    config = RulesConfig(players=3, scoring=Scoring.PENALTY_POINTS, target_score=200)
    policies = [random_policy(random.Random(s)) for s in range(3)]
    result = run_match(config, 4, policies)
    assert max(result.totals) >= 200
    assert all(result.totals[w] == min(result.totals) for w in result.winners)


def test_match_result_is_a_value_with_every_hand() -> None:
    match = new_match(RulesConfig(players=2, target_score=50), random.Random(2))
    rng = random.Random(3)
    while match.result is None:
        actions = legal_actions(match)
        play(match, rng.choice([a for a in actions if a.card] or actions))
    assert len(match.result.hands) == match.hand_number
    assert match.result.actions == tuple(match.actions)
