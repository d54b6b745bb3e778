"""Standings and head-to-head tables as pure functions of recorded matches.

Ranking rule: by conservative rating (mu - 3 sigma), then match wins, then
points per match, then name - so ties are broken the same way every time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from uno_arena.leaderboard.ratings import Rating, outcome, rate
from uno_arena.records.match import MatchRecord
from uno_arena.rules.statistics import wilson


@dataclass(frozen=True, slots=True)
class Standing:
    """One bot's row; the field order is the column order of `uno-arena leaderboard --csv`."""

    rank: int
    bot: str
    ordinal: float  # mu - 3 sigma: what ranks
    mu: float
    sigma: float
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
    bot_errors: int = 0  # the bot reported its own code failed (BotError); last, so older tables read back


def standings(records: Iterable[MatchRecord]) -> list[Standing]:
    matches = list(records)
    ratings = rate(outcome(m) for m in matches)
    tallies: dict[str, dict[str, float]] = {}
    for match in matches:
        _tally(match, tallies)
    rows = [_row(bot, ratings[bot], tally) for bot, tally in tallies.items()]
    rows.sort(key=lambda r: (-r.ordinal, -r.wins, -r.points_per_match, r.bot))
    return [replace(r, rank=i + 1) for i, r in enumerate(rows)]


_COUNTS = ("matches", "wins", "points", "hands", "timeout", "illegal", "disconnected", "bot_error",
           "forfeits")  # fmt: skip


def _tally(match: MatchRecord, tallies: dict[str, dict[str, float]]) -> None:
    winners = match.winners
    for seat, bot in enumerate(match.bots):
        tally = tallies.setdefault(bot, dict.fromkeys(_COUNTS, 0.0))
        faults = match.faults[seat]
        tally["matches"] += 1
        tally["wins"] += 1 / len(winners) if seat in winners else 0
        tally["points"] += match.totals[seat]
        tally["hands"] += sum(1 for hand in match.hands if hand.winner == seat)
        tally["timeout"] += faults.timeout
        tally["illegal"] += faults.illegal + faults.invalid
        tally["disconnected"] += faults.disconnected
        tally["bot_error"] += faults.bot_error
        tally["forfeits"] += 1 if seat in match.forfeited else 0


def _row(bot: str, rating: Rating, tally: Mapping[str, float]) -> Standing:
    played = int(tally["matches"])
    low, high = wilson(tally["wins"], played)
    return Standing(
        rank=0,
        bot=bot,
        ordinal=rating.ordinal,
        mu=rating.mu,
        sigma=rating.sigma,
        matches=played,
        wins=tally["wins"],
        win_rate=tally["wins"] / played,
        win_low=low,
        win_high=high,
        points_per_match=tally["points"] / played,
        hands_won=int(tally["hands"]),
        timeouts=int(tally["timeout"]),
        illegal=int(tally["illegal"]),
        disconnects=int(tally["disconnected"]),
        forfeits=int(tally["forfeits"]),
        bot_errors=int(tally["bot_error"]),
    )


def head_to_head(records: Iterable[MatchRecord]) -> dict[str, dict[str, tuple[float, int]]]:
    """For bots A and B: (how often A finished ahead of B when both sat at a table, ties half; tables).

    At a two-seat table that is A's win rate against B.
    """
    scores: dict[str, dict[str, float]] = {}
    met: dict[str, dict[str, int]] = {}
    for match in records:
        result = outcome(match)
        for seat, bot in enumerate(result.bots):
            for other_seat, other in enumerate(result.bots):
                if other_seat != seat:
                    mine, theirs = result.ranks[seat], result.ranks[other_seat]
                    score = 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
                    scores.setdefault(bot, {})[other] = scores.get(bot, {}).get(other, 0.0) + score
                    met.setdefault(bot, {})[other] = met.get(bot, {}).get(other, 0) + 1
    return {bot: {other: (scores[bot][other] / n, n) for other, n in row.items()} for bot, row in met.items()}
