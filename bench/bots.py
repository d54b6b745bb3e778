"""Example bots head to head in the local arena, and the arena's speed against the bare rules core.

Run: `python bench/bots.py [--matches N] [--processes P] [--speed-matches M]`; `--matches 100` is a
quick run (about a minute).

Strength: greedy vs random and strong vs greedy, matches to 500 at two seats, played by
`uno_arena.sdk.arena.play`: the bots get exactly the views and callbacks a connected bot gets, only the
network is left out. The seats alternate between matches; a shared win counts half. Win rates come with
95% Wilson score intervals. The strong bot's edge over greedy is about five points, so it takes about
2,000 matches for the interval to exclude 0.5; the matches are spread over one process per core (each
match depends only on its seed and index, so the split does not change the results).

Speed, in this process, one after the other, on the same matches (two seats, seeds seed.. seed+M-1):
- `arena_decisions_per_s`: two `RandomBot`s (uniform over the legal actions) in the arena;
- `engine_decisions_per_s`: the rules core alone, `rules.run_match` with `random_policy`, the same
  uniform choice, no views, no callbacks;
- `arena_overhead`: engine / arena (the target is at most 3).
A decision here is one action applied to the match, forced ones included (`len(result.actions)`):
the same unit in both, so the rates compare like for like even though the arena asks its bots only
when there is a choice.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from uno_arena.rules import RulesConfig, random_policy, run_match
from uno_arena.rules.statistics import wilson
from uno_arena.sdk.arena import BotFactory, play
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.sdk.examples.strong_bot import StrongBot

CHUNK = 50  # matches per task: even, so the seats alternate the same way however the run is split


def a_wins(make_a: BotFactory, make_b: BotFactory, seed: int, start: int, count: int) -> float:
    """A's wins (a shared win counts half) over matches start .. start+count-1 (seeds seed+index)."""
    result = play({"a": make_a, "b": make_b}, seats=2, matches=count, seed=seed + start, keep_matches=False)
    return result.stats("a").wins


def head_to_head(
    make_a: BotFactory, make_b: BotFactory, matches: int, seed: int, pool: Pool
) -> tuple[float, float, float]:
    """A's win rate over `matches` (seats alternated) and its 95% Wilson interval."""
    chunks = [(start, min(CHUNK, matches - start)) for start in range(0, matches, CHUNK)]
    wins = sum(pool.starmap(a_wins, [(make_a, make_b, seed, start, count) for start, count in chunks]))
    low, high = wilson(wins, matches)
    return wins / matches, low, high


def speed(matches: int, seed: int) -> tuple[float, float, int]:
    """(arena decisions/s, engine decisions/s, decisions of each) over the same matches, the two
    interleaved match by match so that a noisy machine slows both alike."""
    bots = {"random-a": functools.partial(RandomBot, 1), "random-b": functools.partial(RandomBot, 2)}
    config = RulesConfig(players=2)
    arena_seconds = engine_seconds = 0.0
    arena_decisions = engine_decisions = 0
    for index in range(matches):
        played = play(bots, seats=2, matches=1, seed=seed + index, keep_matches=False)
        arena_seconds += played.seconds
        arena_decisions += played.actions
        policies = [random_policy(random.Random(seat + 1)) for seat in range(2)]
        started = time.perf_counter()
        engine_decisions += len(run_match(config, seed + index, policies).actions)
        engine_seconds += time.perf_counter() - started
    return arena_decisions / arena_seconds, engine_decisions / engine_seconds, engine_decisions


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=2000, help="matches per pairing")
    parser.add_argument("--speed-matches", type=int, default=10, help="matches of the speed comparison")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    started = time.perf_counter()
    with Pool(args.processes) as pool:
        greedy = head_to_head(
            GreedyBot, functools.partial(RandomBot, args.seed), args.matches, args.seed, pool
        )
        print(f"greedy vs random: {greedy[0]:.3f} [{greedy[1]:.3f}, {greedy[2]:.3f}]", flush=True)
        strong = head_to_head(StrongBot, GreedyBot, args.matches, args.seed + 100_000, pool)
    print(f"strong vs greedy: {strong[0]:.3f} [{strong[1]:.3f}, {strong[2]:.3f}]", flush=True)
    print(f"{2 * args.matches} matches in {time.perf_counter() - started:.0f} s", flush=True)
    arena, engine, decisions = speed(args.speed_matches, args.seed)
    print(f"random play, {args.speed_matches} matches ({decisions} decisions): arena {arena:,.0f} "
          f"decisions/s, engine {engine:,.0f} decisions/s, overhead {engine / arena:.2f}x")  # fmt: skip
    print(
        f"RESULT matches={args.matches} greedy_vs_random={greedy[0]:.3f} "
        f"greedy_vs_random_low={greedy[1]:.3f} strong_vs_greedy={strong[0]:.3f} "
        f"strong_vs_greedy_low={strong[1]:.3f} arena_decisions_per_s={arena:.0f} "
        f"engine_decisions_per_s={engine:.0f} arena_overhead={engine / arena:.2f}"
    )


if __name__ == "__main__":
    main()
