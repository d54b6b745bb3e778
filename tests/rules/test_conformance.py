"""Random-play conformance: thousands of seeded matches, every step checked.

For 2 to 10 players and several option sets: 108 cards at every step; an
observation holds only what its seat may see; the legal actions are exactly
those the validating entry point accepts; every match terminates; replaying
(config, seed, actions) reproduces the event log.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from uno_arena.rules import (
    ACTIONS,
    Action,
    DealerRule,
    FirstWildChooser,
    FirstWildDrawFour,
    IllegalActionError,
    InvalidActionError,
    Match,
    Phase,
    RulesConfig,
    Scoring,
    apply,
    canonical,
    legal_actions,
    new_match,
    observe,
    play,
    replay_match,
    seen_by,
)
from uno_arena.rules.event import Dealt, Drew, Event, HandShown

OPTION_SETS: dict[str, dict[str, Any]] = {
    "official": {},
    "house_options": {
        "dealer": DealerRule.ROTATE_LEFT,
        "first_wild_chooser": FirstWildChooser.FIRST_PLAYER,
        "first_wild_draw_four": FirstWildDrawFour.RESHUFFLE,
        "uno_penalty": 4,
    },
    "penalty_points": {"scoring": Scoring.PENALTY_POINTS, "draw_until_playable": True},
    "short": {"hand_size": 3, "max_turns_per_hand": 60, "max_hands_per_match": 5, "target_score": 150},
    "stacking": {"stacking": True},
    "stacking_with_every_option": {  # stacking with every non-default official option at once
        "stacking": True,
        "dealer": DealerRule.ROTATE_LEFT,
        "first_wild_chooser": FirstWildChooser.FIRST_PLAYER,
        "first_wild_draw_four": FirstWildDrawFour.RESHUFFLE,
        "uno_penalty": 4,
        "scoring": Scoring.PENALTY_POINTS,
        "draw_until_playable": True,
    },
}
OPTION_SETS["stacking_short"] = {**OPTION_SETS["short"], "stacking": True}
MATCHES_PER_CASE = 60  # 9 seat counts x 7 option sets x 60 = 3,780 matches
DEEP_CHECK_EVERY = 37  # steps between the expensive checks (every action tried, every seat observed)


def choose(rng: random.Random, actions: list[Action], eagerness: float) -> Action:
    """Uniform over legal actions, or (with probability `eagerness`) over the plays only."""
    plays = [a for a in actions if a.card is not None]
    if plays and rng.random() < eagerness:
        return rng.choice(plays)
    return rng.choice(actions)


def check_observation(match: Match, seat: int, deep: bool = False) -> None:
    hand = match.hand
    seen = observe(match, seat)
    assert seen.cards == tuple(sorted(hand.cards[seat]))
    assert seen.hand_sizes == tuple(map(len, hand.cards))
    assert seen.discards == tuple(hand.discards)
    assert seen.draw_pile_size == len(hand.draw_pile)
    if seen.drawn is not None:
        assert seat == hand.to_move and seen.drawn in hand.cards[seat]
    assert seen.penalty == hand.penalty  # public: the cards pending for the next player
    if hand.phase in (Phase.STACK, Phase.CHALLENGE):
        assert hand.penalty > 0 and (hand.phase is Phase.CHALLENGE or hand.config.stacking)
    if seat != hand.to_move:  # only the drawer learns that its drawn card plays (RULINGS 29)
        assert seen.phase is not Phase.DRAWN and seen.drawn is None
    if deep:
        shown_to_me = [
            (e.seat, e.cards) for e in hand.hand_events if isinstance(e, HandShown) and e.to == seat
        ]
        assert list(seen.shown) == shown_to_me
    assert seen.legal_actions == (tuple(legal_actions(match)) if seat == hand.to_move else ())


def check_events_private(events: list[Event], seat: int) -> None:
    for event in events:
        visible = seen_by(event, seat)
        if isinstance(visible, Dealt | Drew) and visible.seat != seat:
            assert visible.cards is None
        if isinstance(visible, HandShown) and visible.to != seat:
            assert visible.cards is None


def check_legal_set(match: Match) -> None:
    """Every action outside the legal list is refused unchanged; every one inside is accepted."""
    legal = legal_actions(match)
    assert legal == sorted(legal, key=lambda a: a.id) and len(set(legal)) == len(legal)
    before = len(match.events)
    for action in ACTIONS:
        if action in legal:
            trial = match.clone()
            play(trial, action)
        elif canonical(match.hand, action) not in legal:
            with pytest.raises((IllegalActionError, InvalidActionError)):
                play(match, action)
    assert len(match.events) == before


def play_checked_match(config: RulesConfig, seed: int) -> Match:
    rng = random.Random(seed * 7919 + 1)
    # uniform random play (eagerness 0) makes hands of ~1,000 decisions: keep it to short matches
    eagerness = rng.choice([0.0, 0.5, 1.0] if config.max_hands_per_match <= 5 else [0.6, 0.8, 0.95, 1.0])
    match = new_match(config, random.Random(seed))
    steps = checked = 0
    while match.result is None:
        steps += 1
        assert steps < 500_000, "match did not terminate"
        assert match.hand.card_count() == 108
        actor = match.hand.to_move
        check_observation(match, actor)
        if steps % DEEP_CHECK_EVERY == 0:
            check_legal_set(match)
            for seat in range(config.players):
                check_observation(match, seat, deep=True)
                check_events_private(match.events[checked:], seat)
            checked = len(match.events)
        action = choose(rng, legal_actions(match), eagerness)
        if steps % 2:
            play(match, action, actor)
        else:
            apply(match, action)
    assert match.hand.card_count() == 108
    return match


@pytest.mark.parametrize("options", list(OPTION_SETS), ids=list(OPTION_SETS))
@pytest.mark.parametrize("players", range(2, 11))
def test_random_play_conformance(players: int, options: str) -> None:
    full = RulesConfig(players=players, **OPTION_SETS[options])
    quick = replace(full, target_score=min(full.target_score, 150))
    for seed in range(MATCHES_PER_CASE):
        config = full if seed % 4 == 0 else quick  # a quarter of the matches go to the full target
        match = play_checked_match(config, seed)
        assert match.result is not None
        assert sum(match.result.totals) == sum(sum(h.points) for h in match.result.hands)
        if seed % 10 == 0:
            again = replay_match(config, seed, match.actions)
            assert again.events == match.events
            assert again.result == match.result
