"""OpenSkill ratings (Plackett-Luce) as pure functions of match outcomes.

Rating updates are sequential, so the order of matches matters. To make a
table depend only on *which* results exist, never on the order workers
happened to record them, outcomes are always rated in match-id order (ids
are deterministic: tournament id and match index).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

from uno_arena.records.match import MatchRecord

_MODEL = PlackettLuce()


@dataclass(frozen=True, slots=True)
class Outcome:
    """One match: its bots by seat and each seat's finishing rank (1 is best; equal ranks tie)."""

    match_id: str
    bots: tuple[str, ...]
    ranks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """The conservative rating, mu - 3 sigma: what the table is sorted by."""
        return self.mu - 3 * self.sigma


def outcome(record: MatchRecord) -> Outcome:
    """Ranks from a recorded match: winners first, then by final total; forfeited seats last."""
    bots, totals = record.bots, record.totals
    winners, forfeited = set(record.winners), set(record.forfeited)

    def key(seat: int) -> tuple[int, int]:
        tier = 0 if seat in winners else 2 if seat in forfeited else 1
        return (tier, -totals[seat])

    keys = [key(seat) for seat in range(len(bots))]
    ordered = sorted(set(keys))
    return Outcome(record.match_id, bots, tuple(ordered.index(k) + 1 for k in keys))


def rate(outcomes: Iterable[Outcome]) -> dict[str, Rating]:
    """Every bot's rating after all outcomes, rated in match-id order from the model's defaults."""
    current: dict[str, Rating] = {}
    for _, rated in rating_steps(outcomes):
        current.update(rated)
    return current


def rating_steps(outcomes: Iterable[Outcome]) -> Iterator[tuple[Outcome, dict[str, Rating]]]:
    """Each outcome in match-id order with its bots' ratings after it: a bot's rating over time is the
    steps it took part in, and the last step of each bot is what `rate` gives."""
    current: dict[str, PlackettLuceRating] = {}
    for match in sorted(outcomes, key=lambda o: o.match_id):
        teams = [[current.get(bot) or _MODEL.rating(name=bot)] for bot in match.bots]
        rated = _MODEL.rate(teams, ranks=list(match.ranks))
        for bot, (new,) in zip(match.bots, rated, strict=True):
            current[bot] = new
        yield match, {bot: Rating(current[bot].mu, current[bot].sigma) for bot in match.bots}


def initial() -> Rating:
    """A bot's rating before its first match: the model's defaults."""
    start = _MODEL.rating()
    return Rating(start.mu, start.sigma)
