"""OpenSkill ratings (Plackett-Luce) as pure functions of match outcomes.

Rating updates are sequential, so the order of matches matters. To make a
table depend only on *which* results exist, never on the order workers
happened to record them, outcomes are always rated in match-id order (ids
are deterministic: tournament id and match index), the index compared as a
number (`order_key`), so a tournament's 100,000th match comes after its 99,999th.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
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
    current: dict[str, Rating] = {}
    for match in sorted(outcomes, key=lambda o: order_key(o.match_id)):
        rated = step(current, match)
        current.update(rated)
        yield match, rated


def step(current: Mapping[str, Rating], match: Outcome) -> dict[str, Rating]:
    """The ratings of the match's bots after it, from `current` (a bot not in it starts at the defaults).

    Only mu and sigma carry over from one match to the next, so the stored leaderboard can rate a
    match from ratings read back from Redis and get exactly what `rating_steps` gets.
    """
    teams = [[_model_rating(current.get(bot))] for bot in match.bots]
    rated = _MODEL.rate(teams, ranks=list(match.ranks))
    return {bot: Rating(new.mu, new.sigma) for bot, (new,) in zip(match.bots, rated, strict=True)}


def _model_rating(rating: Rating | None) -> PlackettLuceRating:
    return _MODEL.rating() if rating is None else _MODEL.rating(mu=rating.mu, sigma=rating.sigma)


INDEX_DIGITS = 12  # match indices are padded to this many digits in `order_key`


def order_key(match_id: str) -> str:
    """What match ids are sorted by: the id with its index padded to `INDEX_DIGITS` digits.

    Ids pad the index to 5 digits (`Keys.match_id`), so they sort as written up to index 99,999; the
    key keeps that order and goes on past it. It is plain ASCII, so Redis sorts it the same way
    (the stored leaderboard keeps recent keys in a sorted set, by `ZRANGEBYLEX`).
    """
    tournament_id, mark, index = match_id.rpartition("-m")
    if not mark or not index.isascii() or not index.isdigit():
        return match_id
    return f"{tournament_id}-m{index.zfill(INDEX_DIGITS)}"


def initial() -> Rating:
    """A bot's rating before its first match: the model's defaults."""
    start = _MODEL.rating()
    return Rating(start.mu, start.sigma)
