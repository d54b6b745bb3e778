"""Leaderboard cost per recorded match at 1,000 and at 100,000 recorded matches.

Run: `python bench/leaderboard.py [--bots 32] [--measure 300] [--redis-url URL]` (needs a Redis; keys
go under a fresh prefix and are deleted afterwards; about 2 minutes on 2 cores).

A synthetic tournament of heads-up and 4-seat matches between `--bots` bots is written straight into
Redis as recording leaves it (each match's summary, the results list; pipelined). At each size (1,000,
then 100,000 recorded matches) the table is first brought up to date, then the next `--measure`
matches arrive as 4 parallel workers would record them (each within a few places of its index, so
some arrive after later ones and are rated by undoing and redoing steps): each is written, then
`board.refresh` (the tournament's table and the overall one, what a match job does) is timed.

Printed: the median and mean time of one refresh at each size, growth_ratio (median at 100k over
median at 1k); for contrast the full recomputation (what each job did before: `compute` over every
record, tournament and overall); and the Redis commands and round trips one refresh sends (counted
client-side, a MULTI/EXEC's commands included, a script's own calls not).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from uno_arena.leaderboard import board  # noqa: E402
from uno_arena.records.match import Faults, HandRecord, MatchRecord, match_key, match_records  # noqa: E402
from uno_arena.records.tournament import Keys  # noqa: E402
from uno_arena.v1 import game_pb2 as pb  # noqa: E402
from uno_arena.workers.queue import delete_prefix  # noqa: E402

TOURNAMENT = "bench"
SENT: Counter[str] = Counter()  # commands by name, and "round trips"


class CountingConnection(redis.Connection):
    """Counts what this process sends: commands by name, and writes to the socket (round trips)."""

    def send_command(self, *args: Any, **kwargs: Any) -> None:
        SENT[_name(args[0])] += 1
        super().send_command(*args, **kwargs)

    def pack_commands(self, commands: Any) -> list[bytes | memoryview]:
        commands = list(commands)
        for command in commands:
            SENT[_name(command[0])] += 1
        return super().pack_commands(commands)  # type: ignore[no-untyped-call]

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        SENT["round trips"] += 1
        super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]


def _name(command: Any) -> str:
    return (command.decode() if isinstance(command, bytes) else str(command)).split(" ")[0].upper()


def synthetic(index: int, bots: list[str], rng: random.Random) -> MatchRecord:
    seats = rng.sample(bots, 2 if rng.random() < 0.7 else 4)
    totals = tuple(rng.randrange(0, 600) for _ in seats)
    winner = max(range(len(seats)), key=lambda s: totals[s])
    hands = tuple(HandRecord(rng.randrange(len(seats)), totals, pb.HAND_END_PLAYED_OUT) for _ in range(3))
    match_id = Keys("", TOURNAMENT).match_id(index)
    return MatchRecord(match_id, TOURNAMENT, index, tuple(seats), pb.MATCH_END_TARGET_REACHED, (winner,),
                       totals, (), hands, tuple(Faults(timeout=rng.choice((0, 0, 0, 1))) for _ in seats),
                       rng.randrange(1 << 30), 800)  # fmt: skip


def write(client: redis.Redis, prefix: str, matches: list[MatchRecord]) -> None:
    """Pipelined, in batches: what recording leaves behind that the leaderboard reads."""
    keys = Keys(prefix, TOURNAMENT)
    for first in range(0, len(matches), 2000):
        with client.pipeline(transaction=False) as pipe:
            for match in matches[first : first + 2000]:
                pipe.hset(match_key(prefix, match.match_id), "summary", match.to_json())
                pipe.rpush(keys.results, match.match_id)
            pipe.execute()


def as_workers_finish(first: int, count: int, rng: random.Random) -> list[int]:
    """Indices `first`.. in the order 4 parallel workers would record them."""
    return sorted(range(first, first + count), key=lambda i: i + rng.uniform(0, 4))


def measure(client: redis.Redis, prefix: str, indices: list[int], bots: list[str],
            rng: random.Random) -> tuple[list[float], Counter[str]]:  # fmt: skip
    """Each match written, then its refresh timed; what the refreshes sent."""
    times = []
    sent: Counter[str] = Counter()
    for index in indices:
        write(client, prefix, [synthetic(index, bots, rng)])
        before = Counter(SENT)
        start = time.perf_counter()
        board.refresh(client, prefix, TOURNAMENT)
        times.append(time.perf_counter() - start)
        sent.update({name: SENT[name] - before[name] for name in SENT})
    return times, +sent


def full_recomputation_s(client: redis.Redis, prefix: str) -> float:
    """What a job spent before: read and compute the tournament's table and the overall one."""
    start = time.perf_counter()
    board.compute(match_records(client, prefix, TOURNAMENT))
    board.compute(match_records(client, prefix, None))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bots", type=int, default=32)
    parser.add_argument("--measure", type=int, default=300, help="refreshes timed at each size")
    parser.add_argument("--sizes", default="1000,100000", help="recorded matches before each measurement")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    client = redis.Redis.from_url(args.redis_url, connection_class=CountingConnection)
    prefix = f"uno-arena-bench-leaderboard-{uuid.uuid4().hex[:8]}"
    rng = random.Random(18)
    bots = [f"bot{i:03d}" for i in range(args.bots)]
    client.zadd(Keys(prefix, TOURNAMENT).index, {TOURNAMENT: time.time()})
    figures: dict[str, float] = {}
    recorded = 0
    try:
        for size in sizes:
            start = time.perf_counter()
            write(client, prefix, [synthetic(i, bots, rng) for i in range(recorded, size)])
            written = time.perf_counter() - start
            start = time.perf_counter()
            board.rebuild(client, prefix, TOURNAMENT)
            board.rebuild(client, prefix, board.ALL)
            rebuilt = time.perf_counter() - start
            full = full_recomputation_s(client, prefix)
            times, sent = measure(client, prefix, as_workers_finish(size, args.measure, rng), bots, rng)
            recorded = size + args.measure
            label = f"{size // 1000}k"
            figures[f"update_ms_{label}"] = statistics.median(times) * 1000
            figures[f"update_mean_ms_{label}"] = statistics.fmean(times) * 1000
            figures[f"full_ms_{label}"] = full * 1000
            figures[f"commands_per_match_{label}"] = sum(
                v for k, v in sent.items() if k != "round trips"
            ) / len(times)
            figures[f"round_trips_per_match_{label}"] = sent["round trips"] / len(times)
            print(
                f"{size} recorded matches (written in {written:.1f} s, tables rebuilt in {rebuilt:.2f} s): "
                f"refresh median {figures[f'update_ms_{label}']:.2f} ms, mean "
                f"{figures[f'update_mean_ms_{label}']:.2f} ms, max {max(times) * 1000:.1f} ms over "
                f"{len(times)}; full recomputation {full * 1000:.0f} ms",
                flush=True,
            )
            each = ", ".join(f"{k} {v / len(times):.1f}" for k, v in sent.most_common())
            print(f"  sent per refresh: {each}", flush=True)
    finally:
        delete_prefix(client, prefix)
    first, last = (f"{s // 1000}k" for s in (sizes[0], sizes[-1]))
    figures["growth_ratio"] = figures[f"update_ms_{last}"] / figures[f"update_ms_{first}"]
    figures["full_growth_ratio"] = figures[f"full_ms_{last}"] / figures[f"full_ms_{first}"]
    print("RESULT " + " ".join(f"{k}={v:.3f}" if "ratio" in k or "ms" in k else f"{k}={v:.1f}"
                               for k, v in figures.items()))  # fmt: skip


if __name__ == "__main__":
    main()
