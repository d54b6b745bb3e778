"""A bot's history (rating over time, results per opponent, faults by kind) against hand-checked cases
(its chart: tests/web/test_charts.py)."""

from __future__ import annotations

import random

import pytest

from tests.leaderboard.test_ratings import summary
from uno_arena.leaderboard.history import faults_by_kind, opponents, played_by, rating_history
from uno_arena.leaderboard.ratings import Rating, initial, outcome, rate
from uno_arena.records.match import Faults


def test_the_last_point_of_each_bots_history_is_its_rating_and_order_of_recording_does_not_matter() -> None:
    rng = random.Random(3)
    bots = ["a", "b", "c", "d"]
    records = []
    for i in range(30):
        table = rng.sample(bots, rng.choice([2, 3]))
        records.append(summary(f"t-m{i:05d}", table, [0], [500] + [rng.randint(0, 400) for _ in table[1:]]))
    rated = rate(outcome(r) for r in records)
    shuffled = rng.sample(records, len(records))
    for bot in bots:
        points = rating_history(shuffled, bot)
        assert [p.match_id for p in points] == sorted(r.match_id for r in records if bot in r.bots)
        assert Rating(points[-1].mu, points[-1].sigma) == rated[bot]
        assert points == rating_history(records, bot)
        assert all(p.ordinal == pytest.approx(p.mu - 3 * p.sigma) for p in points)


def test_a_winner_rises_and_grows_surer() -> None:
    records = [summary(f"t-m{i:05d}", ["a", "b"], [0], [500, 100]) for i in range(3)]
    mus = [p.mu for p in rating_history(records, "a")]
    sigmas = [p.sigma for p in rating_history(records, "a")]
    assert initial().mu < mus[0] < mus[1] < mus[2] and initial().sigma > sigmas[0] > sigmas[1] > sigmas[2]
    assert rating_history(records, "nobody") == []


def test_results_per_opponent_count_tables_ties_half_and_have_intervals() -> None:
    records = [
        summary("t-m00000", ["a", "b"], [0], [500, 100]),  # a ahead of b
        summary("t-m00001", ["b", "a"], [0], [500, 100]),  # b ahead of a
        summary("t-m00002", ["a", "b", "c"], [0], [500, 100, 100]),  # a ahead of both; b and c tie
        summary("t-m00003", ["c", "a"], [0], [500, 100]),  # c ahead of a
        summary("t-m00004", ["b", "c"], [0], [500, 100]),  # a not there
    ]
    played = played_by(records, "a")
    assert [(m.record.match_id, m.seat, m.place, m.won) for m in played] == [
        ("t-m00000", 0, 1, True), ("t-m00001", 1, 2, False), ("t-m00002", 0, 1, True),
        ("t-m00003", 1, 2, False)]  # fmt: skip
    results = opponents(played)
    assert [(r.opponent, r.tables, r.score) for r in results] == [("b", 3, 2 / 3), ("c", 2, 0.5)]
    assert all(r.low <= r.score <= r.high for r in results) and results[0].high < 1
    b_vs_c = opponents(played_by(records, "b"))
    assert [(r.opponent, r.tables, r.score) for r in b_vs_c] == [("a", 3, 1 / 3), ("c", 2, 0.75)]  # tie half


def test_faults_by_kind_and_forfeits_count_only_the_bots_own_seat() -> None:
    records = [
        summary("t-m00000", ["a", "b"], [1], [0, 500], forfeited=(0,),
                faults=(Faults(timeout=3, invalid=1), Faults(illegal=2))),
        summary("t-m00001", ["b", "a"], [0], [500, 10],
                faults=(Faults(), Faults(bot_error=1, disconnected=1))),
    ]  # fmt: skip
    expected = {"timeout": 3, "illegal": 0, "invalid": 1, "disconnected": 1, "bot_error": 1, "forfeits": 1}
    assert faults_by_kind(played_by(records, "a")) == expected
    assert faults_by_kind(played_by(records, "b"))["illegal"] == 2
    assert played_by(records, "a")[0].forfeited and not played_by(records, "b")[0].forfeited
