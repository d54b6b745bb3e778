"""A bot's rating over its matches as an inline SVG, drawn on the server: no script, no library, and
readable without colour (mu is a solid line with a dot per match, mu - 3 sigma a dashed line, the
sigma band a hatched area bounded by dotted lines, each named in the legend and on the axes).

At most `MAX_POINTS` matches are drawn, the latest ones; the page says when earlier ones are left out.
The SVG scales with the page, its text too: site.css keeps it at least `MIN_WIDTH` px wide (in a box
that scrolls sideways on a narrower screen), so the 11 px axis labels stay at least 10 px tall.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

from uno_arena.leaderboard.history import RatingPoint
from uno_arena.leaderboard.ratings import Rating

MAX_POINTS = 500  # the SVG stays small (a few hundred elements) however many matches a bot played
WIDTH, HEIGHT = 640, 260
MIN_WIDTH = 600  # px: site.css's min-width of svg.rating-chart (11 * 600 / 640 > 10 px text)
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 56  # margins: the y ticks left, the x label and legend below


def rating_chart(points: Sequence[RatingPoint], start: Rating, first_number: int = 1) -> Markup:
    """The chart of `points` (the bot's matches numbered from `first_number`), starting from `start`
    (the rating before the first point drawn)."""
    numbers = range(first_number - 1, first_number + len(points))
    mus = [start.mu, *(p.mu for p in points)]
    sigmas = [start.sigma, *(p.sigma for p in points)]
    ordinals = [m - 3 * s for m, s in zip(mus, sigmas, strict=True)]
    low = min(min(ordinals), min(m - s for m, s in zip(mus, sigmas, strict=True)))
    high = max(m + s for m, s in zip(mus, sigmas, strict=True))
    low, high = _nice_floor(low), _nice_ceil(high)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    span = max(1, len(points))

    def x(i: int) -> float:
        return LEFT + plot_w * i / span

    def y(value: float) -> float:
        return TOP + plot_h * (high - value) / (high - low)

    def path(values: Sequence[float]) -> str:
        return " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))

    upper = [m + s for m, s in zip(mus, sigmas, strict=True)]
    lower = [m - s for m, s in zip(mus, sigmas, strict=True)]
    band = path(upper) + " " + " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in reversed(list(enumerate(lower))))
    parts = [
        f'<svg class="rating-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="rating-chart-title" xmlns="http://www.w3.org/2000/svg">',
        '<title id="rating-chart-title">Rating after each match: mu, mu ± sigma, and mu - 3 sigma</title>',
        '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" class="hatch"/></pattern></defs>',
    ]
    for tick in _ticks(low, high):
        at = f"{y(tick):.1f}"
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{at}" y2="{at}"/>')
        parts.append(
            f'<text class="tick" x="{LEFT - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>'
        )
    parts += [
        f'<polygon class="band" points="{band}"/>',
        f'<polyline class="band-edge" points="{path(upper)}"/>',
        f'<polyline class="band-edge" points="{path(lower)}"/>',
        f'<polyline class="ordinal" points="{path(ordinals)}"/>',
        f'<polyline class="mu" points="{path(mus)}"/>',
    ]
    for i, point in enumerate(points, start=1):
        label = escape(f"match {numbers[i]}: {point.match_id}: mu {point.mu:.2f}, sigma {point.sigma:.2f}, "
                       f"ordinal {point.ordinal:.2f}")  # fmt: skip
        parts.append(f'<circle class="point" data-match="{escape(point.match_id)}" cx="{x(i):.1f}" '
                     f'cy="{y(point.mu):.1f}" r="3"><title>{label}</title></circle>')  # fmt: skip
    bottom = TOP + plot_h
    parts += [
        f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{bottom}" y2="{bottom}"/>',
        f'<line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/>',
        f'<text class="tick" x="{LEFT}" y="{bottom + 14}" text-anchor="middle">{numbers[0]}</text>',
        f'<text class="tick" x="{WIDTH - RIGHT}" y="{bottom + 14}" text-anchor="end">{numbers[-1]}</text>',
        f'<text class="label" x="{LEFT + plot_w / 2:.0f}" y="{bottom + 16}" text-anchor="middle">'
        "matches played</text>",
        f'<text class="label" x="12" y="{TOP + plot_h / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {TOP + plot_h / 2:.0f})">rating</text>',
        _legend(bottom + 38),
        "</svg>",
    ]
    return Markup("".join(parts))


def _legend(top: float) -> str:
    items = [('<line class="mu" x1="0" x2="24" y1="0" y2="0"/><circle class="point" cx="12" cy="0" r="3"/>',
              "mu (a dot per match)"),
             ('<rect class="band" x="0" y="-5" width="24" height="10"/>', "mu ± sigma"),
             ('<line class="ordinal" x1="0" x2="24" y1="0" y2="0"/>',
              "ordinal: mu - 3 sigma (ranks)")]  # fmt: skip
    out, left = [], LEFT
    for glyph, name in items:
        label = f'<text class="legend" x="30" y="4">{name}</text>'
        out.append(f'<g transform="translate({left} {top})">{glyph}{label}</g>')
        left += 40 + 7 * len(name)
    return "".join(out)


def _ticks(low: float, high: float) -> list[float]:
    step = _step(high - low)
    first = _nice_ceil(low, step)
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _step(span: float) -> float:
    for step in (1, 2, 5, 10, 20, 50):
        if span / step <= 6:
            return step
    return 100


def _nice_floor(value: float, step: float = 5) -> float:
    return step * (value // step)


def _nice_ceil(value: float, step: float = 5) -> float:
    return -step * ((-value) // step)
