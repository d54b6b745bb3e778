"""OpenSkill ratings (Plackett-Luce) as pure functions of match outcomes.

Rating updates are sequential, so the order of matches matters. To make a
table depend only on *which* results exist, never on the order workers
happened to record them, outcomes are always rated in match-id order (ids
are deterministic: tournament id and match index).
"""

from __future__ import annotations

from collections.abc import Iterable
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
    current: dict[str, PlackettLuceRating] = {}
    for match in sorted(outcomes, key=lambda o: o.match_id):
        teams = [[current.get(bot) or _MODEL.rating(name=bot)] for bot in match.bots]
        rated = _MODEL.rate(teams, ranks=list(match.ranks))
        for bot, (new,) in zip(match.bots, rated, strict=True):
            current[bot] = new
    return {bot: Rating(r.mu, r.sigma) for bot, r in current.items()}
