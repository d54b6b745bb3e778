"""The one Wilson interval: inside [0, 1] and holding the observed rate, even at 0 and 1 exactly."""

from __future__ import annotations

from uno_arena.rules.statistics import wilson


def test_the_interval_holds_the_rate_for_every_count_up_to_200() -> None:
    for n in range(1, 201):
        for wins in (0, n // 3, n / 2, n - 1, n):
            low, high = wilson(wins, n)
            assert 0.0 <= low <= wins / n <= high <= 1.0, (wins, n, low, high)


def test_all_wins_reach_one_exactly() -> None:
    assert [wilson(n, n)[1] for n in (7, 10, 3000)] == [1.0, 1.0, 1.0]
    assert [wilson(0, n)[0] for n in (7, 10, 3000)] == [0.0, 0.0, 0.0]
