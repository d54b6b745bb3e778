"""Protocol speed: decisions relayed by our server vs a bare gRPC ping-pong, plus idle-bot memory.

Run: `python bench/protocol.py [--seconds S] [--rounds R] [--redis-url URL] [--idle-bots N]`
(needs a Redis; keys go under a fresh prefix and are deleted afterwards).

In one run, each server in its own process, clients in this one (grpc.aio),
in R rounds of six phases side by side (a slow spell of a shared machine
then hits all sides; each ratio is taken within a round, the figures
reported are medians over the rounds):
(a) reference: a bare grpc.aio bidirectional stream; the server sends a
    message the size of a typical decision request, the client answers with
    a message the size of a Decision, over 1 stream and over 64 streams;
(b) ours: `uno-arena server` relaying decisions to minimal bots (answer at
    once: the first card they can play, calling UNO, else the first legal
    action) in 1 and in 64 concurrent matches, each played to 500;
(r) a second reference with the shape of a match and no work: pairs of
    streams, one connection each, where an answer on one stream is relayed
    (a reader task, a queue, the writer) as a request-sized message on the
    other; 1 and 64 pairs. The `*_ratio_vs_relay` figures say how much of
    the gap to (a) is our own work rather than the shape any two-seat relay
    must have.
Latency is measured at the client as the time from sending an answer to
receiving the next request of the same stream (raw) or match (ours, relay):
the server's whole turn-around, rules and encoding included.
Then (c): resident memory of the server process with N idle connected bots.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import grpc
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from uno_arena.records import identity  # noqa: E402
from uno_arena.rules import RulesConfig, apply, legal_actions, new_match, seen_by  # noqa: E402
from uno_arena.rules.runner import eager_choices  # noqa: E402
from uno_arena.server import wire  # noqa: E402
from uno_arena.v1 import bot_pb2, bot_pb2_grpc, control_pb2, control_pb2_grpc  # noqa: E402
from uno_arena.v1 import game_pb2 as pb  # noqa: E402

RAW_METHOD = "/bench.Raw/PingPong"
RELAY_METHOD = "/bench.Relay/Go"


def typical_request_size(samples: int = 400) -> int:
    """Median encoded size of a DecisionRequest (with its events) over random 2-player states."""
    rng = random.Random(5)
    sizes: list[int] = []
    match = new_match(RulesConfig(players=2), rng)
    sent = [0, 0]
    while len(sizes) < samples:
        if match.result is not None:
            match, sent = new_match(RulesConfig(players=2), rng), [0, 0]
        seat, legal = match.hand.to_move, legal_actions(match)
        events = [wire.event(seen_by(e, seat)) for e in match.events[sent[seat] :]]
        sent[seat] = len(match.events)
        match_id = "tournament-1/match-12"
        request = wire.decision_request(match, seat, legal, match_id, f"{match_id}#123", 1000, events)
        sizes.append(bot_pb2.ServerMessage(decision_request=request).ByteSize())
        apply(match, rng.choice(eager_choices(legal)))
    return int(statistics.median(sizes))


# --- the bare reference ---------------------------------------------------------------


def reference_server_main(port: int, size: int) -> None:
    """The bare ping-pong (every message in is answered by one of `size` bytes) and the relay."""

    async def main() -> None:
        payload = b"x" * size
        waiting: dict[
            str, tuple[asyncio.Queue[bytes | None], asyncio.Future[asyncio.Queue[bytes | None]]]
        ] = {}

        async def ping_pong(requests, context):  # type: ignore[no-untyped-def]
            yield payload
            async for _ in requests:
                yield payload

        async def relay(requests, context):  # type: ignore[no-untyped-def]
            """Two streams with the same `pair` metadata: a message in on one goes out on the other."""
            pair = dict(context.invocation_metadata())["pair"]
            mine: asyncio.Queue[bytes | None] = asyncio.Queue()
            if pair in waiting:
                other, first = waiting.pop(pair)
                first.set_result(mine)
                other.put_nowait(payload)  # the first to come moves first
            else:
                first = asyncio.get_running_loop().create_future()
                waiting[pair] = (mine, first)
                other = await first

            async def forward() -> None:
                async for _ in requests:
                    other.put_nowait(payload)
                other.put_nowait(None)

            reader = asyncio.create_task(forward())
            try:
                while (message := await mine.get()) is not None:
                    yield message
            finally:
                reader.cancel()

        server = grpc.aio.server()
        server.add_generic_rpc_handlers(
            [
                grpc.method_handlers_generic_handler(
                    "bench.Raw", {"PingPong": grpc.stream_stream_rpc_method_handler(ping_pong)}
                ),
                grpc.method_handlers_generic_handler(
                    "bench.Relay", {"Go": grpc.stream_stream_rpc_method_handler(relay)}
                ),
            ]
        )
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        await server.wait_for_termination()

    asyncio.run(main())


async def raw_client(port: int, streams: int, seconds: float, answer_size: int) -> tuple[list[float], int]:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    answer = b"y" * answer_size
    latencies: list[float] = []
    count = 0
    deadline = time.perf_counter() + seconds

    async def one() -> None:
        nonlocal count
        call = channel.stream_stream(RAW_METHOD)()
        await call.read()
        while time.perf_counter() < deadline:
            sent = time.perf_counter()
            await call.write(answer)
            await call.read()
            latencies.append(time.perf_counter() - sent)
            count += 1
        await call.done_writing()

    await asyncio.gather(*(one() for _ in range(streams)))
    await channel.close()
    return latencies, count


async def relay_client(port: int, pairs: int, seconds: float, answer_size: int) -> tuple[list[float], int]:
    """(latencies, round trips) over `pairs` relayed pairs of streams, one channel per stream as bots have."""
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(2 * pairs)]
    answer = b"y" * answer_size
    latencies: list[float] = []
    last_sent: dict[int, float] = {}
    count = 0
    deadline = time.perf_counter() + seconds

    async def seat(pair: int, channel: grpc.aio.Channel) -> None:
        nonlocal count
        call = channel.stream_stream(RELAY_METHOD)(metadata=(("pair", str(pair)),))
        async for _ in call:
            now = time.perf_counter()
            if now >= deadline:
                break
            sent = last_sent.get(pair)
            if sent is not None:
                latencies.append(now - sent)
                count += 1
            last_sent[pair] = time.perf_counter()
            await call.write(answer)
        await call.done_writing()  # the partner's stream ends with this one

    await asyncio.gather(*(seat(i // 2, c) for i, c in enumerate(channels)))
    for channel in channels:
        await channel.close()
    return latencies, count


# --- ours -----------------------------------------------------------------------------


class MinimalBot:
    """Answers every request at once; records turn-around times.

    It plays the first card it can, calling UNO when the play leaves one card,
    else takes the first legal action. (Never calling UNO while always catching
    makes a hand that never ends: a seat at one card is caught, draws two, and so
    on, with the discard pile ever longer. Real bots call UNO.)
    """

    def __init__(
        self,
        address: str,
        name: str,
        token: str,
        latencies: list[float],
        last_sent: dict[str, float],
        until: float,
    ) -> None:
        self.address, self.name, self.token = address, name, token
        self.latencies = latencies
        self.last_sent = last_sent  # match id -> when its last answer was sent, by any bot of the match
        self.until = until  # only decisions before this moment count
        self.decisions = 0

    async def run(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        channel = grpc.aio.insecure_channel(self.address)
        call = bot_pb2_grpc.BotServiceStub(channel).Connect()
        hello = bot_pb2.Hello(bot_name=self.name, token=self.token, max_matches=1, client="bench")
        await call.write(bot_pb2.BotMessage(hello=hello))
        reader = asyncio.create_task(self._read(call, ready))
        await stop.wait()
        await call.done_writing()
        reader.cancel()
        await channel.close()

    async def _read(self, call, ready: asyncio.Event) -> None:  # type: ignore[no-untyped-def]
        async for message in call:
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                ready.set()
            elif kind == "decision_request":
                request = message.decision_request
                now = time.perf_counter()
                sent = self.last_sent.pop(request.match_id, None)
                if sent is not None and now < self.until:
                    self.latencies.append(now - sent)
                    self.decisions += 1
                legal = request.legal_actions
                plays = [a for a in legal if a.HasField("card")]
                calls = [a for a in plays if a.uno]
                choice = (calls or plays or legal)[0].id
                decision = bot_pb2.Decision(request_id=request.request_id, action_id=choice)
                self.last_sent[request.match_id] = time.perf_counter()
                await call.write(bot_pb2.BotMessage(decision=decision))
            elif kind == "match_finished":
                self.last_sent.pop(message.match_finished.result.match_id, None)


async def ours(
    address: str, control_token: str, tokens: dict[str, str], matches: int, seconds: float, server_pid: int
) -> tuple[list[float], int, tuple[float, float]]:
    """(latencies, decisions, (server, client) CPU seconds) of `matches` concurrent heads-up
    match slots over `seconds`, after a warm-up."""
    latencies: list[float] = []
    names = [f"m{matches}-{i}-{side}" for i in range(matches) for side in ("a", "b")]
    deadline = time.perf_counter() + 3600
    last_sent: dict[str, float] = {}
    bots = [MinimalBot(address, n, tokens[n], latencies, last_sent, deadline) for n in names]
    readies = [asyncio.Event() for _ in bots]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(b.run(r, stop)) for b, r in zip(bots, readies, strict=True)]
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
    channel = grpc.aio.insecure_channel(address)
    control = control_pb2_grpc.ControlServiceStub(channel)
    metadata = (("authorization", f"Bearer {control_token}"),)
    counter = iter(range(10**9))

    async def slot(i: int) -> None:
        while True:  # short matches, one after another, until cancelled
            request = control_pb2.PlayMatchRequest(
                match_id=f"bench-{matches}-{next(counter)}", bots=[names[2 * i], names[2 * i + 1]], seed=i,
                rules=pb.RulesConfig(target_score=500), disconnect_grace_ms=200, max_strikes=1,
            )  # fmt: skip
            async for _ in control.PlayMatch(request, metadata=metadata):
                pass

    slots = [asyncio.create_task(slot(i)) for i in range(matches)]
    await asyncio.sleep(0.5)  # warm-up; the measured window starts after it
    start = time.perf_counter()
    for bot in bots:
        bot.until = start + seconds
        bot.decisions = 0
    latencies.clear()
    cpu_before = cpu_now(server_pid)
    await asyncio.sleep(seconds)
    cpu = cpu_now(server_pid)
    for task in slots:
        task.cancel()
    stop.set()
    await asyncio.gather(*slots, *tasks, return_exceptions=True)
    await channel.close()
    return latencies, sum(b.decisions for b in bots), (cpu[0] - cpu_before[0], cpu[1] - cpu_before[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_now(server_pid: int) -> tuple[float, float]:
    """(CPU seconds of the server process, of this process, where the clients run) so far."""
    return cpu_seconds(server_pid), time.process_time()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def idle_bots(
    address: str, tokens: dict[str, str], names: list[str]
) -> tuple[list[object], list[object]]:
    channels, calls = [], []
    for name in names:
        channel = grpc.aio.insecure_channel(address)
        call = bot_pb2_grpc.BotServiceStub(channel).Connect()
        await call.write(
            bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name=name, token=tokens[name], max_matches=1))
        )
        channels.append(channel)
        calls.append(call)
    for call in calls:
        await call.read()  # Welcome: connected and authenticated
    return channels, calls


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 20) -> None:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(channel).result(timeout=timeout)
    channel.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="time per phase and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the phases; figures are medians")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--idle-bots", type=int, default=1000)
    parser.add_argument("--reference-server", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference_server:
        reference_server_main(args.reference_server, args.size)
        return

    size = typical_request_size()
    answer_size = bot_pb2.BotMessage(
        decision=bot_pb2.Decision(request_id="tournament-1/match-12#123", action_id=60)
    ).ByteSize()
    print(f"typical decision request: {size} bytes; decision: {answer_size} bytes")

    client = redis.Redis.from_url(args.redis_url)
    prefix = f"uno-arena-bench-{uuid.uuid4().hex[:8]}"
    names = [f"m{m}-{i}-{side}" for m in (1, 64) for i in range(m) for side in ("a", "b")]
    idle_names = [f"idle-{i}" for i in range(args.idle_bots)]
    tokens = {n: identity.register_bot(client, prefix, n) for n in names + idle_names}
    control_token = identity.create_control_token(client, prefix)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def start_server() -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        command = [sys.executable, "-m", "uno_arena.cli", "server", "--listen", f"127.0.0.1:{port}",
                   "--redis-url", args.redis_url, "--key-prefix", prefix]  # fmt: skip
        process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        wait_for_port(port)
        return process, f"127.0.0.1:{port}"

    try:
        rounds, raw_all, ours_all = side_by_side(args, size, answer_size, start_server, control_token, tokens)
        idle_rss_before, idle_rss = idle_memory(start_server, tokens, idle_names)
    finally:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
    median = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    raw_p99, ours_p99 = percentile(raw_all, 0.99) * 1e6, percentile(ours_all, 0.99) * 1e6
    print(f"raw  1 stream:  p50 {median['raw_p50_us']:7.0f} us  p99 {raw_p99:7.0f} us")
    print(f"ours 1 match:   p50 {median['decision_p50_us']:7.0f} us  p99 {ours_p99:7.0f} us")
    print(f"relay 1 pair:   p50 {median['relay_p50_us']:7.0f} us")
    print(f"raw 64 streams: {median['raw_rt_per_s_64']:9.0f} round trips/s")
    print(f"relay 64 pairs: {median['relay_rt_per_s_64']:9.0f} round trips/s")
    print(f"ours 64 matches: {median['decisions_per_s_64']:9.0f} decisions/s")
    print(f"server memory: {idle_rss_before:.0f} MiB before, {idle_rss:.0f} MiB, {args.idle_bots} idle bots")
    figures = {
        "decision_p50_us": median["decision_p50_us"],
        "decision_p99_us": ours_p99,
        "raw_p50_us": median["raw_p50_us"],
        "latency_ratio": median["latency_ratio"],
        "decisions_per_s_64": median["decisions_per_s_64"],
        "raw_rt_per_s_64": median["raw_rt_per_s_64"],
        "throughput_ratio": median["throughput_ratio"],
        "relay_p50_us": median["relay_p50_us"],
        "relay_rt_per_s_64": median["relay_rt_per_s_64"],
        "latency_ratio_vs_relay": median["latency_ratio_vs_relay"],
        "throughput_ratio_vs_relay": median["throughput_ratio_vs_relay"],
        "idle_bots": args.idle_bots,
        "idle_rss_mib": idle_rss,
        "rounds": len(rounds),
    }
    print(
        "RESULT " + " ".join(f"{k}={v:.3f}" if "ratio" in k else f"{k}={v:.0f}" for k, v in figures.items())
    )


def side_by_side(  # type: ignore[no-untyped-def]
    args, size: int, answer_size: int, start_server, control_token: str, tokens: dict[str, str]
) -> tuple[list[dict[str, float]], list[float], list[float]]:
    """Rounds of the six phases (raw, relay and ours; 1 and 64), one after the other, so that a
    slow spell of the machine hits all sides; ratios are taken within a round.
    Returns (figures per round, all raw 1-stream latencies, all ours 1-match latencies)."""
    reference_port = free_port()
    command = [sys.executable, __file__, "--reference-server", str(reference_port), "--size", str(size)]
    reference = subprocess.Popen(command)
    rounds: list[dict[str, float]] = []
    raw_all: list[float] = []
    ours_all: list[float] = []

    def per_round_trip(cpu: tuple[float, float], count: int) -> str:
        return f"{cpu[0] / max(count, 1) * 1e6:.0f} + {cpu[1] / max(count, 1) * 1e6:.0f}"

    def reference_64(client) -> tuple[int, str]:  # type: ignore[no-untyped-def]
        """(round trips, CPU us per round trip) of 64 streams of the reference server."""
        before = cpu_now(reference.pid)
        _, count = asyncio.run(client(reference_port, 64, args.seconds, answer_size))
        after = cpu_now(reference.pid)
        return count, per_round_trip((after[0] - before[0], after[1] - before[1]), count)

    try:
        wait_for_port(reference_port)
        process, address = start_server()
        try:
            for number in range(1, args.rounds + 1):
                raw_lat_1, _ = asyncio.run(raw_client(reference_port, 1, args.seconds, answer_size))
                relay_lat_1, _ = asyncio.run(relay_client(reference_port, 1, args.seconds, answer_size))
                lat_1, _, _ = asyncio.run(ours(address, control_token, tokens, 1, args.seconds, process.pid))
                raw_64, raw_cpu = reference_64(raw_client)
                relay_64, relay_cpu = reference_64(relay_client)
                _, decisions_64, cpu = asyncio.run(
                    ours(address, control_token, tokens, 64, args.seconds, process.pid)
                )
                raw_all += raw_lat_1
                ours_all += lat_1
                figures = {
                    "raw_p50_us": percentile(raw_lat_1, 0.5) * 1e6,
                    "relay_p50_us": percentile(relay_lat_1, 0.5) * 1e6,
                    "decision_p50_us": percentile(lat_1, 0.5) * 1e6,
                    "raw_rt_per_s_64": raw_64 / args.seconds,
                    "relay_rt_per_s_64": relay_64 / args.seconds,
                    "decisions_per_s_64": decisions_64 / args.seconds,
                }
                figures["latency_ratio"] = figures["decision_p50_us"] / figures["raw_p50_us"]
                figures["throughput_ratio"] = figures["decisions_per_s_64"] / figures["raw_rt_per_s_64"]
                figures["latency_ratio_vs_relay"] = figures["decision_p50_us"] / figures["relay_p50_us"]
                figures["throughput_ratio_vs_relay"] = (
                    figures["decisions_per_s_64"] / figures["relay_rt_per_s_64"]
                )
                rounds.append(figures)
                f = {k: round(v) for k, v in figures.items()}
                print(
                    f"round {number}: p50 raw {f['raw_p50_us']} us, relay {f['relay_p50_us']} us, "
                    f"ours {f['decision_p50_us']} us ({len(lat_1)} decisions); 64 at once: "
                    f"raw {f['raw_rt_per_s_64']}/s, relay {f['relay_rt_per_s_64']}/s, "
                    f"ours {f['decisions_per_s_64']}/s; CPU us per round trip, server + clients: "
                    f"raw {raw_cpu}, relay {relay_cpu}, ours {per_round_trip(cpu, decisions_64)}",
                    flush=True,
                )
        finally:
            process.terminate()
            process.wait()
    finally:
        reference.terminate()
        reference.wait()
    return rounds, raw_all, ours_all


def idle_memory(start_server, tokens: dict[str, str], names: list[str]) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(resident MiB of a fresh server, and with `names` connected and idle)."""
    process, address = start_server()
    try:
        before = rss_mib(process.pid)

        async def idle() -> float:
            channels, _calls = await idle_bots(address, tokens, names)
            rss = rss_mib(process.pid)
            for channel in channels:
                await channel.close()  # type: ignore[attr-defined]
            return rss

        return before, asyncio.run(idle())
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    main()
