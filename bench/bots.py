"""Example bots head to head: greedy vs random, strong vs greedy, matches to 500.

Run: `python bench/bots.py [--matches N] [--processes P]`.

The bots see exactly what they would over gRPC: each decision is encoded as
the server encodes it (`server.wire`) and decoded by the SDK, and events reach
`on_events` before each decision, in order. Only the network is left out, so
thousands of matches take minutes. Seats alternate between matches; a shared
win counts half. Win rates come with 95% Wilson score intervals. The strong
bot's edge over greedy is about five points, so it takes about 2,000 matches for
the interval to exclude 0.5; the matches are spread over one process per core.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from uno_arena.leaderboard.standings import wilson
from uno_arena.rules import RulesConfig, legal_actions, new_match, play, seen_by
from uno_arena.rules.action import action_from_id
from uno_arena.sdk import Bot, MatchInfo
from uno_arena.sdk.events import event_from
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.sdk.observation import observation_from
from uno_arena.server import wire


def play_match(bots: list[Bot], seed: int, match_id: str) -> tuple[float, float]:
    """Points (1 win, 0.5 shared, 0 loss) of seat 0 and seat 1 in one match to 500."""
    config = RulesConfig(players=2)
    match = new_match(config, random.Random(seed))
    for seat, bot in enumerate(bots):
        bot.on_match_start(MatchInfo(match_id, seat, ("a", "b"), config.to_dict(), 1.0))
    sent = [0, 0]
    while match.result is None:
        seat = match.hand.to_move
        legal = legal_actions(match)
        if len(legal) == 1:  # the server applies these itself
            play(match, legal[0])
            continue
        events = [wire.event(seen_by(e, seat)) for e in match.events[sent[seat] :]]
        sent[seat] = len(match.events)
        request = wire.decision_request(
            match, seat, legal, match_id, f"{match_id}#{len(match.actions)}", 1000, events
        )
        bots[seat].on_events(match_id, [event_from(e) for e in events])
        chosen = bots[seat].decide(observation_from(match_id, request))
        play(match, action_from_id(chosen.id))  # type: ignore[union-attr]
    winners = match.result.winners
    share = 1 / len(winners)
    return (share if 0 in winners else 0.0, share if 1 in winners else 0.0)


def a_points(make_a: type[Bot], make_b: type[Bot], seed: int, indices: range) -> float:
    """A's points over the matches `indices`: A sits first in even matches, second in odd ones."""
    points = 0.0
    for index in indices:
        a, b = make_a(), make_b()
        if index % 2 == 0:
            points += play_match([a, b], seed + index, f"h2h-{index}")[0]
        else:
            points += play_match([b, a], seed + index, f"h2h-{index}")[1]
    return points


def head_to_head(
    make_a: type[Bot], make_b: type[Bot], matches: int, seed: int, pool: Pool
) -> tuple[float, float, float]:
    """A's win rate over `matches` (seats alternated) and its 95% Wilson interval.

    Each match depends only on its index and seed, so the split over processes
    does not change the result.
    """
    chunks = [range(start, min(start + 50, matches)) for start in range(0, matches, 50)]
    points = sum(pool.starmap(a_points, [(make_a, make_b, seed, chunk) for chunk in chunks]))
    rate = points / matches
    low, high = wilson(points, matches)
    return rate, low, high


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=2000, help="matches per pairing")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    started = time.perf_counter()
    with Pool(args.processes) as pool:
        greedy = head_to_head(GreedyBot, RandomBot, args.matches, args.seed, pool)
        print(f"greedy vs random: {greedy[0]:.3f} [{greedy[1]:.3f}, {greedy[2]:.3f}]", flush=True)
        strong = head_to_head(StrongBot, GreedyBot, args.matches, args.seed + 100_000, pool)
    print(f"strong vs greedy: {strong[0]:.3f} [{strong[1]:.3f}, {strong[2]:.3f}]")
    print(f"{2 * args.matches} matches in {time.perf_counter() - started:.0f} s")
    print(
        f"RESULT matches={args.matches} greedy_vs_random={greedy[0]:.3f} "
        f"greedy_vs_random_low={greedy[1]:.3f} strong_vs_greedy={strong[0]:.3f} "
        f"strong_vs_greedy_low={strong[1]:.3f}"
    )


if __name__ == "__main__":
    main()
