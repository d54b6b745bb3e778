"""Standings and head-to-head tables as pure functions of recorded match summaries.

Ranking rule: by conservative rating (mu - 3 sigma), then match wins, then
points per match, then name - so ties are broken the same way every time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from uno_arena.leaderboard.ratings import Rating, outcome, rate


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    bot: str
    mu: float
    sigma: float
    ordinal: float
    matches: int
    wins: float  # a shared win counts 1/winners
    win_rate: float
    win_low: float  # 95% Wilson interval of the win rate
    win_high: float
    points_per_match: float
    hands_won: int
    timeouts: int
    illegal: int  # illegal and invalid actions
    disconnects: int
    forfeits: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def wilson(wins: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (0, 1 when there is no data)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def standings(summaries: Iterable[Mapping[str, Any]]) -> list[Standing]:
    matches = list(summaries)
    ratings = rate(outcome(m) for m in matches)
    tallies: dict[str, dict[str, float]] = {}
    for match in matches:
        _tally(match, tallies)
    rows = [_row(bot, ratings[bot], tally) for bot, tally in tallies.items()]
    rows.sort(key=lambda r: (-r.ordinal, -r.wins, -r.points_per_match, r.bot))
    return [Standing(**{**asdict(r), "rank": i + 1}) for i, r in enumerate(rows)]


_COUNTS = ("matches", "wins", "points", "hands", "timeout", "illegal", "disconnected", "forfeits")


def _tally(match: Mapping[str, Any], tallies: dict[str, dict[str, float]]) -> None:
    winners = match["winners"]
    for seat, bot in enumerate(match["bots"]):
        tally = tallies.setdefault(bot, dict.fromkeys(_COUNTS, 0.0))
        faults = match["faults"][seat]
        tally["matches"] += 1
        tally["wins"] += 1 / len(winners) if seat in winners else 0
        tally["points"] += match["totals"][seat]
        tally["hands"] += sum(1 for hand in match["hands"] if hand["winner"] == seat)
        tally["timeout"] += faults.get("timeout", 0)
        tally["illegal"] += faults.get("illegal", 0) + faults.get("invalid", 0)
        tally["disconnected"] += faults.get("disconnected", 0)
        tally["forfeits"] += 1 if seat in match.get("forfeited", ()) else 0


def _row(bot: str, rating: Rating, tally: Mapping[str, float]) -> Standing:
    played = int(tally["matches"])
    low, high = wilson(tally["wins"], played)
    return Standing(0, bot, rating.mu, rating.sigma, rating.ordinal, played, tally["wins"],
                    tally["wins"] / played, low, high, tally["points"] / played, int(tally["hands"]),
                    int(tally["timeout"]), int(tally["illegal"]), int(tally["disconnected"]),
                    int(tally["forfeits"]))  # fmt: skip


def head_to_head(summaries: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, tuple[float, int]]]:
    """For bots A and B: (how often A finished ahead of B when both sat at a table, ties half; tables).

    At a two-seat table that is A's win rate against B.
    """
    scores: dict[str, dict[str, float]] = {}
    met: dict[str, dict[str, int]] = {}
    for match in summaries:
        result = outcome(match)
        for seat, bot in enumerate(result.bots):
            for other_seat, other in enumerate(result.bots):
                if other_seat != seat:
                    mine, theirs = result.ranks[seat], result.ranks[other_seat]
                    score = 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
                    scores.setdefault(bot, {})[other] = scores.get(bot, {}).get(other, 0.0) + score
                    met.setdefault(bot, {})[other] = met.get(bot, {}).get(other, 0) + 1
    return {bot: {other: (scores[bot][other] / n, n) for other, n in row.items()} for bot, row in met.items()}
