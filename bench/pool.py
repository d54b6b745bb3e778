"""The pool of match servers: the same load on 1 and on 2 server processes, side by side in one run.

Run: `python bench/pool.py [--matches 32] [--seconds 8] [--rounds 4] [--target 200] [--redis-url URL]`.
It starts a `redis-server` of its own on a free port (no persistence) so that Redis's command counts
are the bench's alone; `--redis-url` uses another Redis instead (keys under a fresh prefix, deleted
at the end).

Two pools, each started the way an organiser starts one:
- `uno-arena server --listen 127.0.0.1:0 --pool bench-1` (one process);
- `uno-arena server --processes 2 --listen 127.0.0.1:0 --pool bench-2` (two processes, each its
  own port and asyncio loop, both in the pool).
The load, the same on both: `--matches` heads-up matches in flight, one after another in each slot,
between lean bots in this process (the minimal bots of bench/protocol.py: grpc.aio, answer at once
with the first card they can play). Each bot keeps a connection to every server of the pool (the
SDK's `PoolClient` design, docs/scale.md) and each match is placed by the workers' own placement
(`uno_arena.records.pool.place`, the Lua script, one EVAL a match) and played through the server's
PlayMatch, as a worker plays it (without RQ and recording, whose costs docs/performance.md has).

In `--rounds` rounds, each pool is measured for `--seconds` after a warm-up, one after the other (1
then 2, then 2 then 1, and so on: a slow spell of the shared machine hits both): decisions answered by
the bots per second, the server processes' own CPU time (user + system, /proc) per decision, and how
the matches placed in the windows were shared among the servers. Each figure is over all the rounds
together (decisions and CPU seconds summed, then divided).
Then placement's cost in Redis: `--placements` placements on the 2-server pool in a row, counted
with INFO commandstats (every command Redis ran, those inside the script included), less what the
servers' heartbeats did over as long an idle spell.

RESULT line: servers=1,2 decisions_per_s_1 decisions_per_s_2 scaling (= 2 over 1)
cpu_us_per_decision_1 cpu_us_per_decision_2 cpu_ratio (= 2 over 1) placement_share_min
placement_evals_per_match placement_commands_per_match. Targets (issue 30): scaling >= 1.6 where two
cores are free for the servers; on a machine where the load generator shares them (this one: 2 cores),
cpu_us_per_decision_2 <= 1.1 x cpu_us_per_decision_1 and placement_share_min >= 0.3.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import grpc
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.protocol import MinimalBot, cpu_seconds, free_port  # noqa: E402
from uno_arena.records import identity, pool  # noqa: E402
from uno_arena.v1 import control_pb2, control_pb2_grpc  # noqa: E402
from uno_arena.v1 import game_pb2 as pb  # noqa: E402
from uno_arena.v1.channels import aio_channel  # noqa: E402

WARM_UP = 3.0  # seconds of load before each measured window


class Pool:
    """One pool of servers started through the CLI, and what the bench needs of it."""

    def __init__(self, name: str, processes: int, redis_url: str, prefix: str, logs: Path) -> None:
        self.name, self.processes = name, processes
        self.keys = pool.PoolKeys(prefix, name)
        self.log = logs / f"{name}.log"
        command = [sys.executable, "-m", "uno_arena.cli", "server", "--listen", "127.0.0.1:0", "--pool",
                   name, "--processes", str(processes), "--redis-url", redis_url,
                   "--key-prefix", prefix]  # fmt: skip
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=out, start_new_session=True)
        self.entries: list[pool.Entry] = []

    def wait_ready(self, client: redis.Redis, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(entries := pool.servers(client, self.keys)) < self.processes:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit(f"pool {self.name} did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.1)
        self.entries = entries

    @property
    def addresses(self) -> list[str]:
        return [entry.address for entry in self.entries]

    def cpu(self) -> float:
        """CPU seconds of the server processes so far (not the parent, which only waits)."""
        return sum(cpu_seconds(entry.pid) for entry in self.entries)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


class Load:
    """`matches` slots, each playing heads-up matches one after another, placed on the pool."""

    def __init__(self, target: Pool, client: redis.Redis, control_token: str, tokens: dict[str, str],
                 matches: int, target_score: int) -> None:  # fmt: skip
        self.pool, self.client, self.tokens = target, client, tokens
        self.matches, self.target_score = matches, target_score
        self.metadata = (("authorization", f"Bearer {control_token}"),)
        self.names = [f"{target.name}-{i}-{side}" for i in range(matches) for side in ("a", "b")]
        self.placed: Counter[str] = Counter()  # server -> matches placed there in the window
        self.evals = 0  # placements asked (one EVAL each)
        self.counter = itertools.count()
        self.counting = False

    async def run(
        self, seconds: float, then: Callable[[], tuple[float, float]] | None = None
    ) -> tuple[int, float, Counter[str], int, tuple[float, float] | None]:
        """(decisions in the window, server CPU seconds in it, placements by server, placements asked,
        and what `then` returned: it runs after the window, the matches stopped, the bots still there)."""
        deadline = time.perf_counter() + 3600
        bots = [MinimalBot(address, name, self.tokens[name], [], {}, deadline)
                for name in self.names for address in self.pool.addresses]  # fmt: skip
        readies = [asyncio.Event() for _ in bots]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(b.run(r, stop)) for b, r in zip(bots, readies, strict=True)]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
        await self._registered()
        channels = {address: aio_channel(address) for address in self.pool.addresses}
        stubs = {address: control_pb2_grpc.ControlServiceStub(c) for address, c in channels.items()}
        run = uuid.uuid4().hex[:6]
        slots = [asyncio.create_task(self._slot(i, run, stubs)) for i in range(self.matches)]
        await asyncio.sleep(WARM_UP)
        start = time.perf_counter()
        for bot in bots:
            bot.until, bot.decisions = start + seconds, 0
        self.placed.clear()
        self.evals, self.counting = 0, True
        cpu_before = self.pool.cpu()
        await asyncio.sleep(seconds)
        cpu = self.pool.cpu() - cpu_before
        self.counting = False
        decisions = sum(b.decisions for b in bots)
        for task in slots:
            task.cancel()
        await asyncio.gather(*slots, return_exceptions=True)
        after = await asyncio.to_thread(then) if then is not None else None
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in channels.values():
            await channel.close()
        return decisions, cpu, Counter(self.placed), self.evals, after

    async def _registered(self) -> None:
        """Until every server's entry lists every bot (the heartbeat after they connected)."""
        deadline = time.monotonic() + 30
        for address in self.pool.addresses:
            while len(pool.connected_bots(self.client, self.pool.keys, address)) < len(self.names):
                if time.monotonic() > deadline:
                    raise SystemExit(f"the bots are not all listed in {address}'s entry")
                await asyncio.sleep(0.1)

    async def _slot(self, i: int, run: str, stubs: dict[str, control_pb2_grpc.ControlServiceStub]) -> None:
        seats = (self.names[2 * i], self.names[2 * i + 1])
        placed_key = f"{self.pool.keys.prefix}:tournament:bench-{run}:placed"
        while True:
            index = next(self.counter)
            placement = await asyncio.to_thread(
                pool.place, self.client, self.pool.keys, placed_key, index, seats
            )
            if placement is None:
                raise RuntimeError(f"pool {self.pool.name}: no server to place a match on")
            if self.counting:
                self.placed[placement.server] += 1
                self.evals += 1
            request = control_pb2.PlayMatchRequest(
                match_id=f"bench-{run}-{index}", bots=list(seats), seed=index,
                rules=pb.RulesConfig(target_score=self.target_score), disconnect_grace_ms=200, max_strikes=1,
            )  # fmt: skip
            async for _ in stubs[placement.server].PlayMatch(request, metadata=self.metadata):
                pass


def commands(client: redis.Redis) -> int:
    """Commands Redis has run since its statistics were last reset (scripts' own commands included;
    the EVAL itself counted once)."""
    stats: dict[str, dict[str, int]] = client.info("commandstats")
    return sum(
        int(values["calls"])
        for name, values in stats.items()
        if name not in ("cmdstat_config", "cmdstat_info")
    )


def placement_cost(client: redis.Redis, target: Pool, placements: int) -> tuple[float, float]:
    """(commands per placement, EVALs per placement) of `placements` placements in a row on `target`,
    less the heartbeats' commands over an idle spell as long."""
    placed_key = f"{target.keys.prefix}:tournament:bench-cost:placed"
    seats = (f"{target.name}-0-a", f"{target.name}-0-b")
    client.config_resetstat()
    started = time.perf_counter()
    for index in range(placements):
        pool.place(client, target.keys, placed_key, index, seats)
    took = time.perf_counter() - started
    busy = commands(client)
    evals = int(client.info("commandstats").get("cmdstat_eval", {}).get("calls", 0))
    client.config_resetstat()
    time.sleep(took)
    idle = commands(client)
    return (busy - idle) / placements, evals / placements


def private_redis(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", str(folder)]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    probe = redis.Redis(port=port)
    deadline = time.monotonic() + 20
    while True:
        try:
            probe.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise SystemExit("the private redis-server did not start") from None
            time.sleep(0.05)
    probe.close()
    return process, f"redis://127.0.0.1:{port}/0"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=32, help="matches in flight")
    parser.add_argument("--seconds", type=float, default=8.0, help="measured window per pool and round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--target", type=int, default=200, help="target score of each match")
    parser.add_argument("--placements", type=int, default=500, help="placements timed for their Redis cost")
    parser.add_argument("--redis-url", help="use this Redis instead of a private redis-server")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that `finally` stops the processes

    folder = Path(tempfile.mkdtemp(prefix="bench-pool-"))
    redis_process = None
    if args.redis_url:
        url = args.redis_url
    else:
        redis_process, url = private_redis(folder)
    client = redis.Redis.from_url(url)
    prefix = f"bench-pool-{uuid.uuid4().hex[:8]}"
    pools: list[Pool] = []
    try:
        control_token = identity.create_control_token(client, prefix)
        pools = [Pool("bench-1", 1, url, prefix, folder), Pool("bench-2", 2, url, prefix, folder)]
        loads = {}
        for target in pools:
            target.wait_ready(client)
            names = [f"{target.name}-{i}-{side}" for i in range(args.matches) for side in ("a", "b")]
            tokens = {name: identity.register_bot(client, prefix, name) for name in names}
            loads[target.name] = Load(target, client, control_token, tokens, args.matches, args.target)
        version = pools[0].entries[0].version
        print(f"servers: {version}; {args.matches} matches in flight to {args.target}, {args.rounds} rounds "
              f"of {args.seconds:g} s per pool", flush=True)  # fmt: skip
        decisions_of: Counter[int] = Counter()  # pool size -> decisions in all its windows
        cpu_of: dict[int, float] = {1: 0.0, 2: 0.0}  # ... and the server CPU seconds in them
        placed_of: Counter[str] = Counter()  # the 2-server pool's matches placed, by server
        evals_of = 0
        cost: tuple[float, float] | None = None  # placement's Redis commands and EVALs per match

        def measure_cost() -> tuple[float, float]:
            return placement_cost(client, pools[1], args.placements)

        for number in range(1, args.rounds + 1):
            for target in pools if number % 2 else reversed(pools):  # 1, 2, then 2, 1: a slow spell hits both
                then = measure_cost if target.processes == 2 and cost is None else None
                decisions, cpu, placed, evals, after = asyncio.run(loads[target.name].run(args.seconds, then))
                cost = cost or after
                decisions_of[target.processes] += decisions
                cpu_of[target.processes] += cpu
                total = sum(placed.values())
                if target.processes == 2:
                    placed_of.update(placed)
                    evals_of += evals
                split = ", ".join(f"{address} {count}" for address, count in sorted(placed.items()))
                cores = cpu / args.seconds
                print(f"round {number}, {target.processes} server(s): {decisions / args.seconds:.0f} "
                      f"decisions/s, server CPU {cpu / max(decisions, 1) * 1e6:.0f} us/decision "
                      f"({cores:.2f} cores), {total} matches placed ({split})", flush=True)  # fmt: skip
        assert cost is not None
        print(f"placement: {cost[1]:.2f} EVAL and {cost[0]:.1f} Redis commands per match (script included), "
              f"{len(pools[1].addresses)} servers, its bots connected", flush=True)  # fmt: skip
    finally:
        for target in pools:
            target.stop()
        if redis_process is not None:
            redis_process.terminate()
            redis_process.wait()
        else:
            keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
            if keys:
                client.delete(*keys)
        shutil.rmtree(folder, ignore_errors=True)
    seconds = args.rounds * args.seconds
    per_s = {n: decisions_of[n] / seconds for n in (1, 2)}
    cpu_us = {n: cpu_of[n] / max(decisions_of[n], 1) * 1e6 for n in (1, 2)}
    placements = sum(placed_of.values())
    share_min = min(placed_of.get(address, 0) for address in pools[1].addresses) / max(placements, 1)
    print(f"RESULT servers=1,2 decisions_per_s_1={per_s[1]:.0f} decisions_per_s_2={per_s[2]:.0f} "
          f"scaling={per_s[2] / per_s[1]:.3f} cpu_us_per_decision_1={cpu_us[1]:.1f} "
          f"cpu_us_per_decision_2={cpu_us[2]:.1f} cpu_ratio={cpu_us[2] / cpu_us[1]:.3f} "
          f"placement_share_min={share_min:.3f} "
          f"placement_evals_per_match={evals_of / max(placements, 1):.2f} "
          f"placement_commands_per_match={cost[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    try:
        main()
    except grpc.RpcError as error:
        raise SystemExit(f"a match failed: {error}") from None
