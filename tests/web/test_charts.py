"""A bot's rating chart on its page (pure logic: the SVG the server draws)."""

from __future__ import annotations

import re

from tests.leaderboard.test_ratings import summary
from uno_arena.leaderboard.history import rating_history
from uno_arena.leaderboard.ratings import Rating, initial
from uno_arena.web import charts


def test_the_chart_has_a_dot_per_match_inside_its_plot_and_names_its_series() -> None:
    records = [summary(f"t-m{i:05d}", ["a", "b"], [i % 2], [500, 100] if i % 2 == 0 else [100, 500])
               for i in range(7)]  # fmt: skip
    points = rating_history(records, "a")
    svg = str(charts.rating_chart(points, initial()))
    dots = re.findall(r'<circle class="point" data-match="([^"]+)" cx="([\d.]+)" cy="([\d.]+)"', svg)
    assert [d[0] for d in dots] == [p.match_id for p in points]
    xs = [float(d[1]) for d in dots]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    assert all(charts.TOP <= float(d[2]) <= charts.HEIGHT - charts.BOTTOM for d in dots)
    for words in (
        "matches played",
        ">rating<",
        "mu ± sigma",
        "ordinal: mu - 3 sigma",
        "mu (a dot per match)",
    ):
        assert words in svg, words
    assert 'class="ordinal"' in svg and 'class="band"' in svg


def test_the_chart_numbers_a_later_window_of_matches_from_where_it_starts() -> None:
    records = [summary(f"t-m{i:05d}", ["a", "b"], [0], [500, 100]) for i in range(5)]
    points = rating_history(records, "a")
    svg = str(charts.rating_chart(points[2:], Rating(points[1].mu, points[1].sigma), first_number=3))
    assert svg.count('<circle class="point" data-match') == 3 and "match 3: t-m00002" in svg
    assert re.search(r'text-anchor="middle">2</text>', svg) and re.search(r'text-anchor="end">5</text>', svg)
