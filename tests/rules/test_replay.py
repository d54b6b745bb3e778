"""(config, seed, actions) replays a hand or a match exactly; explicit decks too."""

import random

import pytest

from uno_arena.rules import (
    DRAW,
    IllegalActionError,
    RulesConfig,
    legal_actions,
    new_hand,
    new_match,
    play,
    replay_hand,
    replay_match,
)


def random_match(config: RulesConfig, seed: int) -> object:
    match = new_match(config, random.Random(seed))
    rng = random.Random(seed + 1)
    while match.result is None:
        play(match, rng.choice(legal_actions(match)))
    return match


@pytest.mark.parametrize("players", [2, 5])
def test_a_match_replays_event_for_event(players: int) -> None:
    config = RulesConfig(players=players, target_score=200)
    match = random_match(config, 21)
    again = replay_match(config, 21, match.actions)  # type: ignore[attr-defined]
    assert again.events == match.events  # type: ignore[attr-defined]
    assert again.result == match.result  # type: ignore[attr-defined]


def test_a_hand_replays_from_seed_and_actions() -> None:
    config = RulesConfig(players=3)
    hand = new_hand(config, random.Random(4))
    rng = random.Random(5)
    for _ in range(40):
        if hand.result is None:
            play(hand, rng.choice(legal_actions(hand)))
    again = replay_hand(config, 4, hand.actions)
    assert again.events == hand.events


def test_different_seeds_deal_differently() -> None:
    config = RulesConfig(players=2)
    assert new_hand(config, random.Random(1)).cards != new_hand(config, random.Random(2)).cards


def test_a_tampered_log_is_refused() -> None:
    config = RulesConfig(players=2, target_score=100)
    match = random_match(config, 3)
    actions = list(match.actions)  # type: ignore[attr-defined]
    index = next(i for i, a in enumerate(actions) if a is not DRAW and a.card is not None)
    actions.insert(index, actions[index])  # the same card twice in a row
    with pytest.raises(IllegalActionError):
        replay_match(config, 3, actions)
