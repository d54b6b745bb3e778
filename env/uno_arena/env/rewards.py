"""The two reward modes, as pure functions of a hand's or a match's result (docs/rl.md, "Rewards").

Both are zero-sum over the table: what one seat gains the others lose, so self-play and learning against
bots reward the same thing, beating the table.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from uno_arena.rules import RulesConfig, Scoring


class Reward(enum.StrEnum):
    """When rewards come: at the end of each hand, or only at the end of the match."""

    HAND = "hand"
    MATCH = "match"


def reward_mode(value: str | Reward) -> Reward:
    """`value` as a `Reward`; anything else raises a `ValueError` that names the choices."""
    try:
        return Reward(value)
    except ValueError:
        raise ValueError(f"reward: {value!r} is not one of {', '.join(r.value for r in Reward)}") from None


def hand_rewards(points: Sequence[int], rules: RulesConfig) -> list[float]:
    """Each seat's reward for a hand that scored `points` (by seat): its score change less the mean of
    the other seats', over the target score.

    With winner_takes scoring the winner of a hand worth P points gets P / target and every other seat
    -P / ((players - 1) * target); with penalty_points (the lowest total wins) the sign is turned, so more
    reward is always better. A hand that ends without a winner scores nothing.
    """
    players, total = len(points), sum(points)
    scale = (-1.0 if rules.scoring is Scoring.PENALTY_POINTS else 1.0) / rules.target_score
    return [scale * (p - (total - p) / (players - 1)) for p in points]


def match_rewards(winners: Sequence[int], players: int) -> list[float]:
    """Each seat's reward for a match won by `winners`: (share - 1 / players) * players / (players - 1),
    where a seat's share of the win is 1 / len(winners) if it is among them, else 0.

    A lone winner gets +1 and every other seat -1 / (players - 1); two seats sharing a heads-up match get 0.
    """
    share = 1 / len(winners)
    scale = players / (players - 1)
    return [((share if seat in winners else 0.0) - 1 / players) * scale for seat in range(players)]
