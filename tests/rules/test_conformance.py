"""Random-play conformance: thousands of seeded matches, every step checked.

For 2 to 10 players and several option sets: 108 cards at every step; an
observation holds only what its seat may see; the legal actions are exactly
those the validating entry point accepts; every match terminates; replaying
(config, seed, actions) reproduces the event log.

The house rules (RULINGS 25-28) alone, in pairs and all together also get
`test_thousands_of_hands_per_house_rule_set`: at least `HANDS_PER_SET` hands
each, every action through the validating entry point, with cheaper checks.

Every case (seat count and option set) runs in the default test run on its first seeds
(`FAST_SEEDS`: every option and house rule at every seat count); the rest of the seeds,
never the same ones again, and the thousands of hands run behind the `slow` marker
(`pytest -m slow`, which CI runs too).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from uno_arena.rules import (
    ACTIONS,
    DONE,
    PASS,
    Action,
    DealerRule,
    FirstWildChooser,
    FirstWildDrawFour,
    HandEnd,
    IllegalActionError,
    InvalidActionError,
    Match,
    Observation,
    Phase,
    Rank,
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
    swap,
)
from uno_arena.rules.action import ActionKind
from uno_arena.rules.config import HOUSE_RULES
from uno_arena.rules.event import (
    Dealt,
    Drew,
    Event,
    HandShown,
    HandsPassed,
    HandStarted,
    Played,
    Received,
    Swapped,
)

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
BEFORE_ISSUE_16 = tuple(OPTION_SETS)  # the sets played before jump_in, seven_zero and multi_play
ALL_HOUSE_RULES = dict.fromkeys(HOUSE_RULES, True)
OPTION_SETS |= {
    "jump_in": {"jump_in": True},
    "seven_zero": {"seven_zero": True},
    "multi_play": {"multi_play": True},
    # the pairs whose rules meet: a Draw Two jumped in adds to a stack; Draw Twos laid together
    # stack; 7s and 0s laid together swap and pass once each; a 7 jumped in swaps; a window
    # follows the last card laid
    "jump_in_stacking": {"jump_in": True, "stacking": True},
    "multi_play_stacking": {"multi_play": True, "stacking": True},
    "seven_zero_multi_play": {"seven_zero": True, "multi_play": True},
    "jump_in_seven_zero": {"jump_in": True, "seven_zero": True},
    "jump_in_multi_play": {"jump_in": True, "multi_play": True},
    "all_house_rules": ALL_HOUSE_RULES,
    "all_house_rules_with_every_option": {**OPTION_SETS["stacking_with_every_option"], **ALL_HOUSE_RULES},
    "all_house_rules_short": {**OPTION_SETS["short"], **ALL_HOUSE_RULES},
}
# The share of the matches and hands below that is played: 1 unless `UNO_ARENA_CONFORMANCE_SHARE`
# says less (a quick look at a change: the same cases, fewer seeds).
SHARE = float(os.environ.get("UNO_ARENA_CONFORMANCE_SHARE", "1"))
MATCHES_PER_CASE = {
    name: max(1, round((60 if name in BEFORE_ISSUE_16 else 8) * SHARE)) for name in OPTION_SETS
}  # 9 seat counts x (7 option sets x 60 + 12 x 8) = 4,644 matches, every step checked
# The default run plays seed 1 (to 150 points) of every case; the `slow` run plays seed 0 (to the full
# target) and the rest.
FAST_SEEDS = {name: range(1, 2) for name in OPTION_SETS}
HOUSE_RULE_SETS = ["stacking", *(name for name in OPTION_SETS if name not in BEFORE_ISSUE_16)]
HANDS_PER_SET = round(2_000 * SHARE)  # per house rule and combination, this many hands more (cheaper checks)
FAST_HANDS_PER_SET = round(HANDS_PER_SET * 0.1)  # the default run's share of them
CHEAP_CHECK_EVERY = 5  # steps between the actor's observation checks in those
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
    else:
        check_house_rule_phase(hand.config, seen)
    if deep:
        shown_to_me = [
            (e.seat, e.cards) for e in hand.hand_events if isinstance(e, HandShown) and e.to == seat
        ]
        assert list(seen.shown) == shown_to_me
    assert seen.legal_actions == (tuple(legal_actions(match)) if seat == hand.to_move else ())


def check_house_rule_phase(config: RulesConfig, seen: Observation) -> None:
    """The decisions of the house rules (RULINGS 26-28) as the seat to move sees them."""
    top, legal = seen.top, list(seen.legal_actions)
    if seen.phase is Phase.JUMP_IN:  # an identical card or pass, never on a Wild, never the player's own
        assert config.jump_in and not top.is_wild and seen.turn_seat != seen.seat
        assert seen.discards.count(top) < (1 if top.rank is Rank.ZERO else 2)  # a copy may be out there
        assert legal[-1] is PASS and all(a.card is top for a in legal[:-1])
        assert bool(legal[:-1]) == (top in seen.cards)
        assert seen.penalty == 0 or (config.stacking and top.rank is Rank.DRAW_TWO)
    elif seen.phase is Phase.LAY:  # more of the top card's number or symbol, or done
        assert config.multi_play and not top.is_wild and seen.turn_seat == seen.seat
        assert legal[-1] is DONE and all(a.card is not None and a.card.rank is top.rank for a in legal[:-1])
    elif seen.phase is Phase.SWAP:  # a swap with every other seat
        assert config.seven_zero and top.rank is Rank.SEVEN and seen.turn_seat == seen.seat
        assert legal == [swap(other) for other in range(seen.players) if other != seen.seat]
    if legal and legal[-1] is DONE:
        assert seen.phase is Phase.LAY


def check_events_private(events: list[Event], seat: int) -> None:
    for event in events:
        visible = seen_by(event, seat)
        if isinstance(visible, Dealt | Drew | Received) and visible.seat != seat:
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
            try:  # what `pytest.raises` checks, at a quarter of its cost: this loop is the sweeps' hot spot
                play(match, action)
            except (IllegalActionError, InvalidActionError):
                continue
            pytest.fail(f"{action} is not in the legal list, and play() accepted it")
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


def play_checked_matches(players: int, options: str, seeds: range) -> None:
    if not seeds:
        return
    full = RulesConfig(players=players, **OPTION_SETS[options])
    quick = replace(full, target_score=min(full.target_score, 150))
    for seed in seeds:
        config = full if seed % 4 == 0 else quick  # a quarter of the matches go to the full target
        match = play_checked_match(config, seed)
        assert match.result is not None
        assert sum(match.result.totals) == sum(sum(h.points) for h in match.result.hands)
        if seed % 10 == 0 or seed == seeds[0]:
            again = replay_match(config, seed, match.actions)
            assert again.events == match.events
            assert again.result == match.result


@pytest.mark.parametrize("options", list(OPTION_SETS), ids=list(OPTION_SETS))
@pytest.mark.parametrize("players", range(2, 11))
def test_random_play_conformance(players: int, options: str) -> None:
    """A case's first quick seeds (the first one replayed)."""
    play_checked_matches(players, options, FAST_SEEDS[options])


@pytest.mark.slow
@pytest.mark.parametrize("options", list(OPTION_SETS), ids=list(OPTION_SETS))
@pytest.mark.parametrize("players", range(2, 11))
def test_random_play_conformance_every_seed(players: int, options: str) -> None:
    """The rest of each case's seeds: 4,644 matches with the default run's."""
    fast = FAST_SEEDS[options]
    play_checked_matches(players, options, range(0, fast.start))  # seed 0: to the full target
    play_checked_matches(players, options, range(fast.stop, MATCHES_PER_CASE[options]))


def house_rule_moments(events: list[Event], actions: list[Action]) -> Counter[str]:
    """How often each house rule changed the course of a match: evidence that it was played."""
    moments: Counter[str] = Counter()
    previous: Event | None = None
    pending: Played | None = None  # the last Draw Two or Wild Draw Four played, its penalty not yet drawn
    for event in events:
        if isinstance(event, Played):
            moments["jump_in"] += event.jump_in
            if isinstance(previous, Played) and previous.seat == event.seat and not event.jump_in:
                moments["multi_play"] += previous.card.rank is event.card.rank
            if event.card.rank in (Rank.DRAW_TWO, Rank.WILD_DRAW_FOUR):
                moments["stacking"] += pending is not None and pending.seat != event.seat
                pending = event
        elif isinstance(event, Swapped | HandsPassed):
            moments["seven_zero"] += 1
        elif (isinstance(event, Drew) and event.reason != "uno_penalty") or isinstance(event, HandStarted):
            pending = None
        previous = event
    moments["done"] = sum(a.kind is ActionKind.DONE for a in actions)
    return moments


@pytest.mark.parametrize("options", HOUSE_RULE_SETS, ids=HOUSE_RULE_SETS)
def test_hundreds_of_hands_per_house_rule_set(options: str) -> None:
    """The default run's tenth of the thousands below: each house rule of the set seen at work."""
    play_house_rule_hands(options, FAST_HANDS_PER_SET)


@pytest.mark.slow
@pytest.mark.parametrize("options", HOUSE_RULE_SETS, ids=HOUSE_RULE_SETS)
def test_thousands_of_hands_per_house_rule_set(options: str) -> None:
    """At least `HANDS_PER_SET` hands, 2 to 10 players in turn, every action through `play` (with
    the seat that acts): 108 cards at every step, the actor's observation checked every few
    steps, every match ended, private cards hidden from another seat; and each house rule of
    the set seen at work hundreds of times (none that is off)."""
    play_house_rule_hands(options, HANDS_PER_SET)


def play_house_rule_hands(options: str, at_least: int) -> None:
    hands = seed = 0
    ended: Counter[HandEnd] = Counter()
    moments: Counter[str] = Counter()
    while hands < at_least:
        seed += 1
        config = RulesConfig(players=2 + seed % 9, **OPTION_SETS[options])
        config = replace(config, target_score=min(config.target_score, 150))
        rng = random.Random(seed * 7919 + 3)
        eagerness = rng.choice([0.6, 0.8, 0.95, 1.0])
        match = new_match(config, random.Random(seed))
        steps = 0
        while match.result is None:
            steps += 1
            assert steps < 500_000, f"seed {seed}: the match did not end"
            assert match.hand.card_count() == 108
            actor = match.hand.to_move
            if steps % CHEAP_CHECK_EVERY == 0:
                check_observation(match, actor)
            play(match, choose(rng, legal_actions(match), eagerness), actor)
        assert match.hand.card_count() == 108
        check_events_private(match.events, seed % config.players)
        hands += sum(isinstance(e, HandStarted) for e in match.events)
        ended.update(h.reason for h in match.result.hands)
        moments += house_rule_moments(match.events, match.actions)
    if "max_turns_per_hand" not in OPTION_SETS[options]:
        assert ended[HandEnd.PLAYED_OUT] >= 0.9 * hands, ended  # random play still ends hands
    for rule in HOUSE_RULES:
        assert (moments[rule] >= at_least / 10) == bool(OPTION_SETS[options].get(rule)), (rule, moments)
    assert (moments["done"] > 0) == bool(OPTION_SETS[options].get("multi_play"))
