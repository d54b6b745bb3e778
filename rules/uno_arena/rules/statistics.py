"""Small statistics shared by the SDK's arena, the leaderboard and the benchmarks (standard library only).

Here, in the rules core, because every layer that counts wins may import it, and it must be written once.
"""

from __future__ import annotations

import math

Z_95 = 1.959964  # the standard normal quantile of a two-sided 95% interval


def wilson(wins: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (0, 1 when there is no data).

    Wilson rather than the normal approximation: it stays inside [0, 1] and is honest for a few matches
    or a win rate near 0 or 1. `wins` may be fractional (a shared win counts 1/winners).
    """
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # The interval holds p; rounding could put a bound a hair past it at p = 0 or 1.
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))
