"""The observation vector: the environments' fast one (read from the match) is the SDK's, made from the
seat's `Observation`, to the bit; and neither holds anything of what the seat may not see."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.env.helpers import HOUSE_RULES
from uno_arena.env.rewards import Reward
from uno_arena.env.table import SeatBuffers, Table
from uno_arena.rules import ACTIONS, Match, RulesConfig, apply, legal_actions, new_match, observe, seen_by
from uno_arena.rules.event import Dealt, Drew, HandShown, Received
from uno_arena.sdk.encoder import Encoder, action_mask, observation_bounds
from uno_arena.sdk.encoding import ACTION_COUNT, FIELDS, OBSERVATION_SIZE

ROOT = Path(__file__).resolve().parents[2]
# random play draws often: the turn and hand limits keep matches (and the tests) short, and end some so
CONFIGS: list[dict[str, Any]] = [
    {"players": 2},
    {"players": 3, **HOUSE_RULES},
    {"players": 4, "draw_until_playable": True, "scoring": "penalty_points", "stacking": True},
    {"players": 6, "jump_in": True, "seven_zero": True, "first_wild_chooser": "first_player"},
    {"players": 10, **HOUSE_RULES, "dealer": "rotate_left", "first_wild_draw_four": "reshuffle"},
]
SHORT_HANDS = {"target_score": 150, "max_turns_per_hand": 300, "max_hands_per_match": 4}


def vector_of(match: Match, seat: int, rules: RulesConfig) -> np.ndarray[Any, np.dtype[np.float32]]:
    """What the environments compute, from a fresh start (nothing kept from earlier steps)."""
    return np.frombuffer(SeatBuffers(rules).fill(match, seat), np.float32)


def random_matches(options: dict[str, Any], matches: int) -> list[tuple[Match, RulesConfig]]:
    """Random matches, the state after some of their actions (about 12 a match, the last one always):
    (match, rules) snapshots."""
    rules = RulesConfig(**{**SHORT_HANDS, **options})
    snapshots = []
    for seed in range(matches):
        match, chance = new_match(rules, random.Random(seed)), random.Random(seed)
        while match.result is None:
            legal = legal_actions(match)
            apply(match, legal[chance.randrange(len(legal))])
            if chance.random() < 0.004 or match.result is not None:
                snapshots.append((match.clone(), rules))
    return snapshots


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: f"{o['players']}p")
def test_the_environments_vector_is_the_observations_to_the_bit(options: dict[str, Any]) -> None:
    """Followed step by step, as the environments do, for every seat at every decision of whole matches."""
    rules = RulesConfig(**{**SHORT_HANDS, **options})
    encoder = Encoder(rules)
    table = Table(rules, Reward.HAND)
    chance = random.Random(1)
    checked = 0
    for seed in range(2):
        table.deal(seed)
        while True:
            match = table.match
            for seat in range(rules.players):
                expected = encoder.encode(observe(match, seat))
                assert np.array_equal(np.frombuffer(table.vector(seat), np.float32), expected), (seed, seat)
                checked += 1
            mover = table.to_move
            if mover < 0:
                break
            assert np.array_equal(
                np.frombuffer(table.mask_bits(mover), np.int8), action_mask(observe(match, mover))
            )
            legal = table.legal_ids()
            table.act(legal[chance.randrange(len(legal))])
    assert checked > 1000


def hide_from(match: Match, seat: int, rng: random.Random) -> Match:
    """A copy of `match` that `seat` cannot tell from it: the other seats' cards and the draw pile dealt
    anew among them (each hand keeping its size, a drawn card still the drawer's), the hands shown to
    the others emptied, whether a Wild Draw Four was played legally turned, the random generator
    reseeded, and every event of the log reduced to what `seat` saw of it (the others' cards in deals,
    draws, swaps and challenges gone)."""
    twin = match.clone()
    hand = twin.hand
    others = [other for other in range(hand.players) if other != seat]
    hidden = [card for other in others for card in hand.cards[other]] + hand.draw_pile
    rng.shuffle(hidden)
    for other in others:
        size = len(hand.cards[other])
        hand.cards[other], hidden = hidden[:size], hidden[size:]
    hand.draw_pile[:] = hidden
    if hand.drawn is not None and hand.to_move != seat and hand.cards[hand.to_move]:
        hand.drawn = hand.cards[hand.to_move][-1]
    hand.shown[:] = [(to, whose, cards if to == seat else ()) for to, whose, cards in hand.shown]
    hand.wild_draw_four_guilty = not hand.wild_draw_four_guilty
    twin.rng.seed(rng.random())
    twin.events[:] = [seen_by(event, seat) for event in twin.events]
    return twin


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: f"{o['players']}p")
def test_no_seat_sees_what_the_others_hold(options: dict[str, Any]) -> None:
    """Redeal what a seat cannot see and strip the log of it: its vector does not change, whether made
    by the environments (from the match) or by the SDK (from its Observation). Another seat's does."""
    rng = random.Random(7)
    changed_others = 0
    for match, rules in random_matches(options, 3):
        encoder = Encoder(rules)
        for seat in range(rules.players):
            twin = hide_from(match, seat, rng)
            before = vector_of(match, seat, rules)
            assert np.array_equal(vector_of(twin, seat, rules), before)
            assert np.array_equal(encoder.encode(observe(twin, seat)), before)
            other = (seat + 1) % rules.players
            if sorted(twin.hand.cards[other]) != sorted(match.hand.cards[other]):
                changed_others += not np.array_equal(
                    vector_of(twin, other, rules), vector_of(match, other, rules)
                )
    assert changed_others > 10  # the check can fail: a seat's own cards are in its vector


def test_hide_from_strips_every_card_the_seat_did_not_see() -> None:
    match, _ = random_matches({"players": 4, **HOUSE_RULES}, 1)[-1]
    twin = hide_from(match, 0, random.Random(1))
    for event in twin.events:
        if isinstance(event, Dealt | Drew | Received):
            assert event.cards is None or event.seat == 0
        if isinstance(event, HandShown):
            assert event.cards is None or event.to == 0


def test_the_layout() -> None:
    assert ACTION_COUNT == len(ACTIONS) == 141
    assert [f.offset for f in FIELDS] == [0, *np.cumsum([f.size for f in FIELDS])[:-1]]
    assert OBSERVATION_SIZE == sum(f.size for f in FIELDS) == 851
    assert len({f.name for f in FIELDS}) == len(FIELDS)
    low, high = observation_bounds(RulesConfig(target_score=50))
    assert low.shape == high.shape == (OBSERVATION_SIZE,) and (low < high).all()


def test_every_observation_is_within_its_bounds() -> None:
    for match, rules in random_matches({"players": 5, **HOUSE_RULES, "target_score": 30}, 2):
        low, high = observation_bounds(rules)
        for seat in range(rules.players):
            vector = vector_of(match, seat, rules)
            assert (vector >= low).all() and (vector <= high).all()


def test_docs_rl_lists_every_field_in_order() -> None:
    text = (ROOT / "docs" / "rl.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (\d+)-(\d+) \|", text, re.MULTILINE)
    assert [(name, int(first), int(last)) for name, first, last in rows] == [
        (f.name, f.offset, f.offset + f.size - 1) for f in FIELDS
    ]
