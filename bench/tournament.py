"""Tournament throughput: matches played through RQ workers vs the same matches played directly.

Run: `python bench/tournament.py [--bots 8] [--cycles 2] [--target 500] [--redis-url URL]`
(needs a Redis; keys go under a fresh prefix and are deleted afterwards).
Random bots make long matches: at 500 points the whole run takes about 40
minutes on 2 cores; `--target 100` gives a figure in about 10.

An 8-bot heads-up round robin (2 cycles: 56 matches to 500) of random SDK
bots connected over gRPC to `uno-arena server`, each in its own process:
(a) through RQ: `uno-arena tournament`'s queue with 1 and then 2
    `uno-arena worker` processes, timed from `start` until every result is
    recorded;
(b) directly: the same matches (same bots, seats and seeds) played through
    the control service's PlayMatch by 2 threads, no RQ and no recording.
overhead_ratio = direct matches/s over the better RQ run's.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.protocol import free_port  # noqa: E402
from uno_arena.records import identity  # noqa: E402
from uno_arena.records.spec import TournamentSpec, spec_from_dict  # noqa: E402
from uno_arena.records.tournament import TournamentStatus, load, scheduled_match  # noqa: E402
from uno_arena.v1 import (  # noqa: E402
    codec,
    control_pb2,
    control_pb2_grpc,
)
from uno_arena.v1.channels import channel as channel_to  # noqa: E402
from uno_arena.workers import lifecycle  # noqa: E402
from uno_arena.workers.queue import delete_prefix  # noqa: E402

PYTHON = [sys.executable, "-m", "uno_arena.cli"]


def spawn(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*PYTHON, *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_bots(address: str, token: str, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    with channel_to(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=timeout)
        stub = control_pb2_grpc.ControlServiceStub(channel)
        while len(stub.ListBots(control_pb2.ListBotsRequest(), metadata=_auth(token)).bots) < count:
            if time.monotonic() > deadline:
                raise SystemExit("the bots did not connect")
            time.sleep(0.1)


def _auth(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def through_rq(
    client: redis.Redis, url: str, prefix: str, spec: TournamentSpec, token: str, workers: int
) -> float:
    """Matches per second of the whole tournament played by `workers` RQ workers."""
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    processes = [
        spawn("worker", "--redis-url", url, "--key-prefix", prefix, env={"UNO_ARENA_CONTROL_TOKEN": token})
        for _ in range(workers)
    ]
    try:
        time.sleep(2)  # let the workers import and register before the clock starts
        started = time.perf_counter()
        count = lifecycle.start(client, prefix, tournament_id)
        while load(client, prefix, tournament_id).status is not TournamentStatus.FINISHED:
            time.sleep(0.05)
        return count / (time.perf_counter() - started)
    finally:
        for process in processes:
            stop(process)


def direct(client: redis.Redis, prefix: str, spec: TournamentSpec, token: str, concurrency: int) -> float:
    """Matches per second of the same schedule played straight through PlayMatch."""
    tournament_id = lifecycle.create_checked(client, prefix, spec)  # only for its schedule
    matches = [
        scheduled_match(client, prefix, tournament_id, i)
        for i in range(load(client, prefix, tournament_id).matches)
    ]

    def play(index: int) -> None:
        match = matches[index]
        request = control_pb2.PlayMatchRequest(
            match_id=f"direct-{tournament_id}-{index}",
            bots=list(match.bots),
            rules=codec.rules(spec.rules),
            seed=match.seed,
        )
        with channel_to(spec.server) as channel:
            for progress in control_pb2_grpc.ControlServiceStub(channel).PlayMatch(
                request, metadata=_auth(token)
            ):
                if progress.WhichOneof("kind") == "finished":
                    return
        raise RuntimeError("no result")

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(play, range(len(matches))))
    return len(matches) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--cycles", type=int, default=2)
    parser.add_argument("--target", type=int, default=500)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that `finally` stops the processes
    client = redis.Redis.from_url(args.redis_url)
    prefix = f"bench-tournament-{uuid.uuid4().hex[:8]}"
    port = free_port()
    address = f"127.0.0.1:{port}"
    processes = [spawn("server", "--listen", address, "--redis-url", args.redis_url, "--key-prefix", prefix)]
    try:
        token = identity.create_control_token(client, prefix)
        names = [f"random{i}" for i in range(args.bots)]
        for name in names:
            bot_token = identity.register_bot(client, prefix, name)
            processes.append(
                spawn(
                    "bot",
                    "run",
                    "sdk/uno_arena/sdk/examples/random_bot.py:RandomBot",
                    "--name",
                    name,
                    "--token",
                    bot_token,
                    "--server",
                    address,
                    "--max-matches",
                    "4",
                )
            )
        wait_bots(address, token, args.bots)
        spec = spec_from_dict(
            {
                "name": "bench",
                "bots": names,
                "cycles": args.cycles,
                "target": args.target,
                "seed": 1,
                "server": address,
            }
        )
        rq_1 = through_rq(client, args.redis_url, prefix, spec, token, 1)
        print(f"RQ, 1 worker:   {rq_1:.2f} matches/s", flush=True)
        rq_2 = through_rq(client, args.redis_url, prefix, spec, token, 2)
        print(f"RQ, 2 workers:  {rq_2:.2f} matches/s", flush=True)
        best = max(rq_1, rq_2)
        concurrency = 2 if rq_2 >= rq_1 else 1
        straight = direct(client, prefix, spec, token, concurrency)
        print(f"direct, {concurrency} at once: {straight:.2f} matches/s", flush=True)
        matches = args.bots * (args.bots - 1) // 2 * args.cycles
        print(
            f"RESULT matches={matches} rq_matches_per_s_1w={rq_1:.3f} rq_matches_per_s_2w={rq_2:.3f} "
            f"direct_matches_per_s={straight:.3f} overhead_ratio={straight / best:.3f}"
        )
    finally:
        for process in processes:
            stop(process)
        delete_prefix(client, prefix)


if __name__ == "__main__":
    main()
