"""Ratings and standings against hand-checked small cases (pure logic)."""

from __future__ import annotations

import math
import random

import pytest

from uno_arena.leaderboard.ratings import Outcome, outcome, rate
from uno_arena.leaderboard.standings import WIN_UNITS, head_to_head, standings, wilson
from uno_arena.records.match import Faults, HandRecord, MatchRecord
from uno_arena.rules.config import MAX_PLAYERS
from uno_arena.v1 import game_pb2 as pb


def summary(match_id: str, bots: list[str], winners: list[int], totals: list[int], *,
            forfeited: tuple[int, ...] = (), faults: tuple[Faults, ...] = ()) -> MatchRecord:  # fmt: skip
    hand = HandRecord(winners[0] if winners else None, tuple(totals), pb.HAND_END_PLAYED_OUT)
    faults = faults or tuple(Faults() for _ in bots)
    return MatchRecord(match_id, "t", 0, tuple(bots), pb.MATCH_END_TARGET_REACHED, tuple(winners),
                       tuple(totals), forfeited, (hand,), faults, 0, 10)  # fmt: skip


def test_one_heads_up_win_by_hand() -> None:
    # Plackett-Luce, both at mu 25, sigma 25/3 (widened by tau 25/300 first), beta 25/6:
    # c^2 = 2 sigma^2 + 2 beta^2, p = 1/2; the winner gains sigma^2 / c * (1 - p), the loser
    # loses as much; sigma^2 shrinks by a factor 1 - (sigma / c) * (sigma^2 / c^2) * p (1 - p).
    variance, beta = (25 / 3) ** 2 + (25 / 300) ** 2, 25 / 6
    c = math.sqrt(2 * variance + 2 * beta**2)
    gain = variance / c * 0.5
    shrunk = math.sqrt(variance * (1 - (math.sqrt(variance) / c) * (variance / c**2) * 0.25))
    ratings = rate([Outcome("m1", ("a", "b"), (1, 2))])
    assert ratings["a"].mu == pytest.approx(25 + gain) and ratings["b"].mu == pytest.approx(25 - gain)
    assert ratings["a"].sigma == pytest.approx(shrunk) == ratings["b"].sigma
    assert ratings["a"].ordinal == pytest.approx(ratings["a"].mu - 3 * ratings["a"].sigma)


def test_a_tie_moves_nobody_apart() -> None:
    ratings = rate([Outcome("m1", ("a", "b"), (1, 1))])
    assert ratings["a"].mu == pytest.approx(ratings["b"].mu) == pytest.approx(25)


def test_the_table_does_not_depend_on_recording_order() -> None:
    rng = random.Random(3)
    bots = ["a", "b", "c", "d"]
    outcomes = []
    for i in range(40):
        table = rng.sample(bots, 3)
        outcomes.append(Outcome(f"t-m{i:05d}", tuple(table), tuple(rng.sample([1, 2, 3], 3))))
    shuffled = outcomes[:]
    rng.shuffle(shuffled)
    assert rate(outcomes) == rate(shuffled)


def test_ranks_winners_then_totals_then_forfeits() -> None:
    result = outcome(summary("m", ["a", "b", "c", "d"], [2], [10, 40, 500, 40], forfeited=(0,)))
    assert result.ranks == (3, 2, 1, 2)
    shared = outcome(summary("m", ["a", "b"], [0, 1], [500, 500]))
    assert shared.ranks == (1, 1)


def test_a_win_shared_by_any_number_of_seats_the_rules_allow_is_a_whole_number_of_units() -> None:
    assert all(WIN_UNITS % seats == 0 for seats in range(1, MAX_PLAYERS + 1))


def test_wilson_interval_by_hand() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(5, 10)  # p = 0.5, z = 1.96: 0.5 -+ 1.96 sqrt(0.025 + 0.0096) / 1.384
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    assert wilson(10, 10)[1] == pytest.approx(1.0)


def test_standings_tally_and_tie_break() -> None:
    matches = [
        summary("m1", ["a", "b"], [0], [500, 30], faults=(Faults(), Faults(timeout=2, invalid=1))),
        summary("m2", ["b", "a"], [1], [12, 510]),
        summary("m3", ["a", "c"], [0, 1], [500, 500]),
    ]
    rows = {row.bot: row for row in standings(matches)}
    assert rows["a"].rank == 1 and rows["a"].matches == 3 and rows["a"].wins == 2.5
    assert rows["a"].points_per_match == pytest.approx((500 + 510 + 500) / 3)
    assert rows["a"].hands_won == 3
    assert (rows["b"].timeouts, rows["b"].illegal, rows["b"].wins) == (2, 1, 0)
    assert rows["b"].rank == 3  # lost twice: below c, who only shared a win
    assert [r.rank for r in standings(list(reversed(matches)))] == [1, 2, 3]


def test_head_to_head_scores_finishing_ahead() -> None:
    matches = [
        summary("m1", ["a", "b"], [0], [500, 0]),
        summary("m2", ["a", "b"], [1], [0, 500]),
        summary("m3", ["b", "a"], [1], [0, 500]),
        summary("m4", ["a", "b", "c"], [2], [100, 50, 500]),
    ]
    table = head_to_head(matches)
    assert table["a"]["b"] == (0.75, 4)  # won m1, m3, finished ahead in m4
    assert table["b"]["a"] == (0.25, 4)
    assert table["c"]["a"] == (1.0, 1)
