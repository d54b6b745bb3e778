"""The schedule's balance properties, over many sizes (pure logic, no Redis)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from uno_arena.rules import RulesConfig
from uno_arena.workers.schedule import MAX_FULL_TABLES, first_dealer, schedule

SIZES: list[object] = [(n, k) for n in range(2, 17) for k in range(2, min(n, 10) + 1)]
# larger ones that need more than one cyclic base table, or the fixed-bot design: seconds each, so `slow`
SIZES += [pytest.param(n, k, marks=pytest.mark.slow) for n, k in [(20, 8), (23, 10), (29, 8)]]


def _play(bots: int, seats: int, cycles: int, seed: int = 11) -> list:
    names = [f"bot{i}" for i in range(bots)]
    return schedule(names, seats, cycles, seed, RulesConfig(players=seats))


def _spread(counts: Counter) -> int:
    return max(counts.values()) - min(counts.values())


@pytest.mark.parametrize(("bots", "seats"), SIZES)
def test_every_pair_meets_equally_often_within_one(bots: int, seats: int) -> None:
    matches = _play(bots, seats, cycles=1)
    pairs = Counter({p: 0 for p in itertools.combinations(sorted(f"bot{i}" for i in range(bots)), 2)})
    for match in matches:
        pairs.update(itertools.combinations(sorted(match.bots), 2))
    assert min(pairs.values()) >= 1
    assert _spread(pairs) <= 1
    appearances = Counter(b for m in matches for b in m.bots)
    assert len(appearances) == bots and _spread(appearances) == 0


@pytest.mark.parametrize(("bots", "seats"), SIZES)
def test_seats_and_first_deals_are_balanced(bots: int, seats: int) -> None:
    matches = _play(bots, seats, cycles=2)
    for name in {b for m in matches for b in m.bots}:
        positions = Counter({s: 0 for s in range(seats)})
        positions.update(m.bots.index(name) for m in matches if name in m.bots)
        assert _spread(positions) <= 1, (name, positions)
    dealt = Counter({f"bot{i}": 0 for i in range(bots)})
    dealt.update(m.bots[m.dealer] for m in matches)
    assert _spread(dealt) <= 1


def test_small_sizes_play_every_combination_once_per_cycle() -> None:
    matches = _play(6, 3, cycles=3)
    assert len(matches) == 3 * math.comb(6, 3) <= 3 * MAX_FULL_TABLES
    for cycle in range(3):
        tables = [frozenset(m.bots) for m in matches if m.cycle == cycle]
        assert len(set(tables)) == len(tables) == math.comb(6, 3)


def test_heads_up_is_every_pair() -> None:
    matches = _play(8, 2, cycles=2)
    assert len(matches) == 2 * 28
    assert {frozenset(m.bots) for m in matches} == {frozenset(p) for p in itertools.combinations(
        [f"bot{i}" for i in range(8)], 2)}  # fmt: skip


def test_deterministic_from_the_seed_and_seeds_differ() -> None:
    assert _play(7, 3, 2, seed=5) == _play(7, 3, 2, seed=5)
    assert _play(7, 3, 2, seed=5) != _play(7, 3, 2, seed=6)
    seeds = [m.seed for m in _play(7, 3, 2, seed=5)]
    assert len(set(seeds)) == len(seeds)


def test_the_recorded_dealer_is_who_the_rules_draw() -> None:
    for match in _play(5, 3, 1):
        assert first_dealer(RulesConfig(players=3), 3, match.seed) == match.dealer


def test_large_designs_keep_every_bot_equally_busy() -> None:
    matches = _play(24, 6, 1)
    assert len(matches) < math.comb(24, 6)
    appearances = Counter(b for m in matches for b in m.bots)
    assert len(appearances) == 24 and _spread(appearances) == 0
