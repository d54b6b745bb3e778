"""Standings and head-to-head tables as pure functions of recorded matches.

Everything but the ratings is a sum of integers per match (`tally`, `pair_scores`), so a table does
not depend on the order the matches are given in, to the last bit; ratings are rated in match-id order.

Ranking rule: by conservative rating (mu - 3 sigma), then match wins, then
points per match, then name - so ties are broken the same way every time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from uno_arena.leaderboard.ratings import Outcome, Rating, outcome, rate
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


# A win shared by k seats is WIN_UNITS // k units: every count is an integer for every k up to the
# rules' MAX_PLAYERS (a test holds it to them). Stored in Redis: a change rescales the kept tables.
WIN_UNITS = 2520

# What `tally` counts per bot, each an integer (wins in WIN_UNITS), so sums do not depend on their order:
# the stored leaderboard adds them up as results arrive, in any order, and gets what `standings` gets.
COUNTS = ("matches", "wins", "points", "hands", "timeout", "illegal", "disconnected", "bot_error",
          "forfeits")  # fmt: skip


def standings(records: Iterable[MatchRecord]) -> list[Standing]:
    matches = list(records)
    ratings = rate(outcome(m) for m in matches)
    tallies: dict[str, dict[str, int]] = {}
    for match in matches:
        for bot, counts in tally(match).items():
            totals = tallies.setdefault(bot, dict.fromkeys(COUNTS, 0))
            for name, count in counts.items():
                totals[name] += count
    return ranked(row(bot, ratings[bot], counts) for bot, counts in tallies.items())


def ranked(rows: Iterable[Standing]) -> list[Standing]:
    """The rows in rank order with their ranks: the ranking rule of the module's docstring."""
    ordered = sorted(rows, key=lambda r: (-r.ordinal, -r.wins, -r.points_per_match, r.bot))
    return [replace(r, rank=i + 1) for i, r in enumerate(ordered)]


def tally(match: MatchRecord) -> dict[str, dict[str, int]]:
    """What one match adds to each of its bots' `COUNTS`."""
    winners = match.winners
    counts = {}
    for seat, bot in enumerate(match.bots):
        faults = match.faults[seat]
        counts[bot] = {
            "matches": 1,
            "wins": WIN_UNITS // len(winners) if seat in winners else 0,
            "points": match.totals[seat],
            "hands": sum(1 for hand in match.hands if hand.winner == seat),
            "timeout": faults.timeout,
            "illegal": faults.illegal + faults.invalid,
            "disconnected": faults.disconnected,
            "bot_error": faults.bot_error,
            "forfeits": 1 if seat in match.forfeited else 0,
        }
    return counts


def row(bot: str, rating: Rating, counts: Mapping[str, int]) -> Standing:
    """A bot's row (rank 0 until `ranked`) from its rating and its summed `COUNTS`."""
    played = counts["matches"]
    wins = counts["wins"] / WIN_UNITS
    low, high = wilson(wins, played)
    return Standing(
        rank=0,
        bot=bot,
        ordinal=rating.ordinal,
        mu=rating.mu,
        sigma=rating.sigma,
        matches=played,
        wins=wins,
        win_rate=wins / played,
        win_low=low,
        win_high=high,
        points_per_match=counts["points"] / played,
        hands_won=counts["hands"],
        timeouts=counts["timeout"],
        illegal=counts["illegal"],
        disconnects=counts["disconnected"],
        forfeits=counts["forfeits"],
        bot_errors=counts["bot_error"],
    )


def pair_scores(result: Outcome) -> Iterator[tuple[str, str, int]]:
    """For each ordered pair of bots at the table: (bot, other, half-points bot scored against other):
    2 for finishing ahead, 1 for a tie, 0 behind. Integers, so sums do not depend on their order."""
    for seat, bot in enumerate(result.bots):
        for other_seat, other in enumerate(result.bots):
            if other_seat != seat:
                mine, theirs = result.ranks[seat], result.ranks[other_seat]
                yield bot, other, 2 if mine < theirs else 1 if mine == theirs else 0


def head_to_head(records: Iterable[MatchRecord]) -> dict[str, dict[str, tuple[float, int]]]:
    """For bots A and B: (how often A finished ahead of B when both sat at a table, ties half; tables).

    At a two-seat table that is A's win rate against B.
    """
    halves: dict[str, dict[str, int]] = {}
    met: dict[str, dict[str, int]] = {}
    for match in records:
        for bot, other, half_points in pair_scores(outcome(match)):
            halves.setdefault(bot, {})[other] = halves.get(bot, {}).get(other, 0) + half_points
            met.setdefault(bot, {})[other] = met.get(bot, {}).get(other, 0) + 1
    return {bot: {other: pairing(halves[bot][other], n) for other, n in tables.items()}
            for bot, tables in met.items()}  # fmt: skip


def pairing(half_points: int, tables: int) -> tuple[float, int]:
    """(share of `tables` finished ahead, ties half; tables) from summed `pair_scores`."""
    return half_points / 2 / tables, tables
