"""One bot's record over time, as pure functions of recorded matches: its rating after each of its
matches, its results against each opponent, its faults by kind, and its matches.

Ratings are rated in match-id order over every match given (`ratings.rating_steps`), the same order the
standings use, so the last point of a bot's history is its rating in the table over the same matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from uno_arena.leaderboard.ratings import Rating, outcome, rating_steps
from uno_arena.records.match import Faults, MatchRecord
from uno_arena.rules.statistics import wilson


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """The bot's rating just after one of its matches."""

    match_id: str
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return Rating(self.mu, self.sigma).ordinal


@dataclass(frozen=True, slots=True)
class OpponentResult:
    """How often the bot finished ahead of `opponent` at a table they shared (ties half), over `tables`,
    with the 95% Wilson interval of that share."""

    opponent: str
    tables: int
    score: float  # share of tables finished ahead, 0 to 1
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class PlayedMatch:
    """One of the bot's matches, as its page lists it."""

    record: MatchRecord
    seat: int
    place: int  # 1 is best; seats that tie share a place

    @property
    def won(self) -> bool:
        return self.seat in self.record.winners

    @property
    def forfeited(self) -> bool:
        return self.seat in self.record.forfeited


def played_by(records: Iterable[MatchRecord], bot: str) -> list[PlayedMatch]:
    """The bot's matches in match-id order (a bot sits at most once at a table)."""
    played = []
    for record in sorted(records, key=lambda r: r.match_id):
        if bot in record.bots:
            seat = record.bots.index(bot)
            played.append(PlayedMatch(record, seat, outcome(record).ranks[seat]))
    return played


def rating_history(records: Iterable[MatchRecord], bot: str) -> list[RatingPoint]:
    """The bot's rating after each of its matches, every match rated in match-id order."""
    return [RatingPoint(match.match_id, rated[bot].mu, rated[bot].sigma)
            for match, rated in rating_steps(outcome(r) for r in records) if bot in rated]  # fmt: skip


def opponents(played: Sequence[PlayedMatch]) -> list[OpponentResult]:
    """The bot's results against each bot it met, most often met first, then by name."""
    scores: dict[str, float] = {}
    tables: dict[str, int] = {}
    for match in played:
        ranks = outcome(match.record).ranks
        for seat, other in enumerate(match.record.bots):
            if seat != match.seat:
                mine, theirs = ranks[match.seat], ranks[seat]
                scores[other] = scores.get(other, 0.0) + (
                    1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
                )
                tables[other] = tables.get(other, 0) + 1
    results = [
        OpponentResult(other, n, scores[other] / n, *wilson(scores[other], n)) for other, n in tables.items()
    ]
    return sorted(results, key=lambda r: (-r.tables, r.opponent))


FAULT_KINDS: tuple[str, ...] = tuple(f.name for f in fields(Faults))


def faults_by_kind(played: Sequence[PlayedMatch]) -> dict[str, int]:
    """The bot's faults over its matches by kind (`Faults`' fields, in their order), and its forfeits."""
    totals = dict.fromkeys((*FAULT_KINDS, "forfeits"), 0)
    for match in played:
        faults = match.record.faults[match.seat] if match.seat < len(match.record.faults) else Faults()
        for kind in FAULT_KINDS:
            totals[kind] += getattr(faults, kind)
        totals["forfeits"] += 1 if match.forfeited else 0
    return totals
