"""RULINGS 3: choosing the dealer."""

import random

from uno_arena.rules import DealerRule, RulesConfig, new_match, parse_cards
from uno_arena.rules.dealer import draw_for_dealer
from uno_arena.rules.event import DealerChosen, DealerDrew, Event


def choose(players: int, order: str) -> tuple[int, list[Event]]:
    events: list[Event] = []
    return draw_for_dealer(players, random.Random(0), events, parse_cards(order)), events


def test_highest_number_deals() -> None:
    dealer, _ = choose(3, "red_3 blue_9 green_5")
    assert dealer == 1


def test_action_and_wild_cards_count_zero() -> None:
    dealer, _ = choose(3, "wild_draw_four red_skip yellow_1")
    assert dealer == 2


def test_tied_highest_draw_again_among_themselves() -> None:
    # seats 0 and 2 tie on 8; seat 1 is out; then 0 draws 2, 2 draws 6.
    dealer, events = choose(3, "red_8 blue_1 green_8 red_2 blue_6")
    assert dealer == 2
    second_round = [e for e in events if isinstance(e, DealerDrew) and e.round == 1]
    assert [e.seat for e in second_round] == [0, 2]
    assert isinstance(events[-1], DealerChosen)


def test_dealer_is_drawn_for_every_hand_by_default() -> None:
    match = new_match(RulesConfig(players=4), random.Random(5))
    assert match.config.dealer is DealerRule.DRAW_EACH_HAND
    assert any(isinstance(e, DealerDrew) for e in match.hand.hand_events)


def test_rotate_left_passes_the_deal_without_drawing() -> None:
    from uno_arena.rules import DRAW, apply, legal_actions

    config = RulesConfig(players=3, dealer=DealerRule.ROTATE_LEFT, target_score=10_000)
    match = new_match(config, random.Random(3))
    first_dealer = match.hand.dealer
    rng = random.Random(1)
    while match.hand_number == 1:
        actions = legal_actions(match)
        apply(match, rng.choice([a for a in actions if a is not DRAW] or actions))
    assert match.hand.dealer == (first_dealer + 1) % 3
    assert not any(isinstance(e, DealerDrew) for e in match.hand.hand_events)
