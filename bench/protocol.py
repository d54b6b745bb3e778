"""Protocol speed: decisions relayed by our server vs a bare gRPC ping-pong, plus idle-bot memory.

Run: `python bench/protocol.py [--seconds S] [--rounds R] [--redis-url URL] [--idle-bots N]`
(needs a Redis; keys go under a fresh prefix and are deleted afterwards).

In one run, each server in its own process, clients in this one (grpc.aio),
in R rounds of the phases side by side (a slow spell of a shared machine
then hits all sides; each ratio is taken within a round, the figures
reported are medians over the rounds):
(a) reference: a bare grpc.aio bidirectional stream; the server sends a
    message the size of a typical decision request, the client answers with
    a message the size of a Decision, over 1 stream and over 64 streams;
(b) ours: `uno-arena server` relaying decisions to minimal bots (answer at
    once: the first card they can play, calling UNO, else the first legal
    action) in 1 and in 64 concurrent matches, each played to 500;
(r) a second reference with the shape of a match and no server work: pairs
    of streams, one connection each, where an answer on one stream is relayed
    (a reader task, a queue, the writer) as a typical decision request (real
    bytes, the same each time) on the other; 1 and 64 pairs. Its clients do
    what the minimal bots of (b) do with each request (parse it, choose,
    answer with a Decision), so that the two differ only in the server's
    work: like for like. The `*_ratio_vs_relay` figures say how much of the
    gap to (a) is our server's own work rather than the shape any two-seat
    relay must have. The relay uses gRPC's stream API as the issue defined it
    (the request iterator, responses yielded); our server reads with
    `context.read()` and writes with `context.write()`, a leaner use of the
    same library. For the record, a second relay written that way ("lean
    relay") is measured beside it, and the RESULT line also gives our ratios
    against it (`*_vs_lean_relay`): they say what is left once both sides use
    gRPC the same way.
Latency is measured at the client as the time from sending an answer to
receiving the next request of the same stream (raw) or match (ours, relay):
the server's whole turn-around, rules and encoding included.
Then (c): resident memory of the server process with N idle connected bots.
And (d), what asking costs: the bots of (b) play `--count-matches` matches to 500 (seeds 0..N-1, all
at once) on each build, counting the decisions they were asked and the actions applied
(`FinishedMatch.actions`, asked or not). `decisions_per_match` and `actions_per_match` in the RESULT
line are their means; a decision the server applies by itself takes no round trip, and which ones it
may apply is docs/protocol.md's "What a seat learns, and when".

Which build (docs/building.md): each build of the server available is measured, in its own
process, within the same rounds: this interpreter's, its source too when it is a compiled install
(`UNO_ARENA_BUILD=interpreted`), and a compiled install at `--compiled-python` (default
build/venv-compiled/bin/python, as `.ci/run` makes it). The RESULT line gives the compiled
build's figures when there are any (`build=compiled`), and the other build's beside them,
prefixed with its name (`interpreted_latency_ratio_vs_relay=...`).
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

from tests import reference_encoder  # noqa: E402
from uno_arena.records import identity  # noqa: E402
from uno_arena.rules import RulesConfig, apply, legal_actions, new_match, seen_by  # noqa: E402
from uno_arena.rules.build import ENVIRONMENT  # noqa: E402
from uno_arena.rules.runner import eager_choices  # noqa: E402
from uno_arena.v1 import (  # noqa: E402
    bot_pb2,
    bot_pb2_grpc,
    codec,
    control_pb2,
    control_pb2_grpc,
)
from uno_arena.v1 import game_pb2 as pb  # noqa: E402
from uno_arena.v1.channels import ClientTLS, aio_channel  # noqa: E402

DEFAULT_COMPILED_PYTHON = ROOT / "build" / "venv-compiled" / "bin" / "python"
RAW_METHOD = "/bench.Raw/PingPong"
WARM_UP = 0.5  # seconds each phase runs before its measured window: connections made, pairs paired
RELAY_METHOD = "/bench.Relay/Go"
LEAN_RELAY_METHOD = "/bench.LeanRelay/Go"


def typical_request(samples: int = 400) -> bytes:
    """A ServerMessage with a DecisionRequest (and its events) of the median encoded size over random
    2-player states (the same every time: seeded)."""
    rng = random.Random(5)
    requests: list[bytes] = []
    match = new_match(RulesConfig(players=2), rng)
    sent = [0, 0]
    while len(requests) < samples:
        if match.result is not None:
            match, sent = new_match(RulesConfig(players=2), rng), [0, 0]
        seat, legal = match.hand.to_move, legal_actions(match)
        events = [codec.event(seen_by(e, seat)) for e in match.events[sent[seat] :]]
        sent[seat] = len(match.events)
        match_id = "tournament-1/match-12"
        request = reference_encoder.decision_request(
            match, seat, legal, match_id, f"{match_id}#123", 1000, events
        )
        requests.append(bot_pb2.ServerMessage(decision_request=request).SerializeToString())
        apply(match, rng.choice(eager_choices(legal)))
    return sorted(requests, key=len)[len(requests) // 2]


def choose(request: bot_pb2.DecisionRequest) -> int:
    """The minimal bot's choice: the first card it can play, calling UNO when the play leaves one
    card, else the first legal action. (Never calling UNO while always catching makes a hand that
    never ends: a seat at one card is caught, draws two, and so on. Real bots call UNO.)"""
    legal = request.legal_actions
    plays = [a for a in legal if a.HasField("card")]
    calls = [a for a in plays if a.uno]
    return int((calls or plays or legal)[0].id)


# --- the bare reference ---------------------------------------------------------------


def reference_server_main(port: int) -> None:
    """The bare ping-pong (every message in is answered by one of a typical request's size) and the
    relay (which sends a typical request)."""

    async def main() -> None:
        request = typical_request()
        payload = b"x" * len(request)
        waiting: dict[
            str, tuple[asyncio.Queue[bytes | None], asyncio.Future[asyncio.Queue[bytes | None]]]
        ] = {}

        async def ping_pong(requests, context):  # type: ignore[no-untyped-def]
            yield payload
            async for _ in requests:
                yield payload

        async def paired(context) -> tuple[asyncio.Queue[bytes | None], asyncio.Queue[bytes | None]]:  # type: ignore[no-untyped-def]
            """(this stream's queue, its partner's): two streams with the same `pair` metadata."""
            pair = dict(context.invocation_metadata())["pair"]
            mine: asyncio.Queue[bytes | None] = asyncio.Queue()
            if pair in waiting:
                other, first = waiting.pop(pair)
                first.set_result(mine)
                other.put_nowait(request)  # the first to come moves first
            else:
                first = asyncio.get_running_loop().create_future()
                waiting[pair] = (mine, first)
                other = await first
            return mine, other

        async def relay(requests, context):  # type: ignore[no-untyped-def]
            """A message in on one stream of a pair goes out on the other (iterator and yield)."""
            mine, other = await paired(context)

            async def forward() -> None:
                async for _ in requests:
                    other.put_nowait(request)
                other.put_nowait(None)

            reader = asyncio.create_task(forward())
            try:
                while (message := await mine.get()) is not None:
                    yield message
            finally:
                reader.cancel()

        async def lean_relay(requests, context) -> None:  # type: ignore[no-untyped-def]
            """The same relay with `context.read()` and `context.write()`, as our server uses them."""
            mine, other = await paired(context)

            async def forward() -> None:
                while await context.read() is not grpc.aio.EOF:
                    other.put_nowait(request)
                other.put_nowait(None)

            reader = asyncio.create_task(forward())
            try:
                while (message := await mine.get()) is not None:
                    await context.write(message)
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
                grpc.method_handlers_generic_handler(
                    "bench.LeanRelay", {"Go": grpc.stream_stream_rpc_method_handler(lean_relay)}
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
    begin = time.perf_counter() + WARM_UP
    deadline = begin + seconds

    async def one() -> None:
        nonlocal count
        call = channel.stream_stream(RAW_METHOD)()
        await call.read()
        while time.perf_counter() < deadline:
            sent = time.perf_counter()
            await call.write(answer)
            await call.read()
            if sent >= begin:
                latencies.append(time.perf_counter() - sent)
                count += 1
        await call.done_writing()

    await asyncio.gather(*(one() for _ in range(streams)))
    await channel.close()
    return latencies, count


async def relay_client(
    port: int, pairs: int, seconds: float, answer_size: int, method: str = RELAY_METHOD
) -> tuple[list[float], int]:
    """(latencies, round trips) over `pairs` relayed pairs of streams, one channel per stream as bots
    have; each seat handles a request as `MinimalBot` does (`answer_size` is not used: its answers
    are real Decisions)."""
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(2 * pairs)]
    latencies: list[float] = []
    last_sent: dict[int, float] = {}
    count = 0
    begin = time.perf_counter() + WARM_UP  # as ours: measured once every pair is connected and playing
    deadline = begin + seconds

    async def seat(pair: int, channel: grpc.aio.Channel) -> None:
        nonlocal count
        call = channel.stream_stream(
            method,
            request_serializer=bot_pb2.BotMessage.SerializeToString,
            response_deserializer=bot_pb2.ServerMessage.FromString,
        )(metadata=(("pair", str(pair)),))
        async for message in call:
            now = time.perf_counter()
            if now >= deadline:
                break
            sent = last_sent.get(pair)
            if sent is not None and sent >= begin:
                latencies.append(now - sent)
                count += 1
            request = message.decision_request
            decision = bot_pb2.Decision(request_id=request.request_id, action_id=choose(request))
            last_sent[pair] = time.perf_counter()
            await call.write(bot_pb2.BotMessage(decision=decision))
        await call.done_writing()  # the partner's stream ends with this one

    await asyncio.gather(*(seat(i // 2, c) for i, c in enumerate(channels)))
    for channel in channels:
        await channel.close()
    return latencies, count


# --- ours -----------------------------------------------------------------------------


class MinimalBot:
    """Answers every request at once (`choose`); records turn-around times."""

    def __init__(
        self,
        address: str,
        name: str,
        token: str,
        latencies: list[float],
        last_sent: dict[str, float],
        until: float,
        tls: ClientTLS | None = None,
        asked: dict[str, int] | None = None,
    ) -> None:
        self.address, self.name, self.token, self.tls = address, name, token, tls
        self.latencies = latencies
        self.asked = asked if asked is not None else {}  # match id -> requests to its bots so far
        self.last_sent = last_sent  # match id -> when its last answer was sent, by any bot of the match
        self.until = until  # only decisions before this moment count
        self.decisions = 0

    async def run(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        channel = aio_channel(self.address, self.tls)
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
                self.asked[request.match_id] = self.asked.get(request.match_id, 0) + 1
                sent = self.last_sent.pop(request.match_id, None)
                if sent is not None and now < self.until:
                    self.latencies.append(now - sent)
                    self.decisions += 1
                decision = bot_pb2.Decision(request_id=request.request_id, action_id=choose(request))
                self.last_sent[request.match_id] = time.perf_counter()
                await call.write(bot_pb2.BotMessage(decision=decision))
            elif kind == "match_finished":
                self.last_sent.pop(message.match_finished.result.match_id, None)


async def ours(
    address: str,
    control_token: str,
    tokens: dict[str, str],
    matches: int,
    seconds: float,
    server_pid: int,
    tls: ClientTLS | None = None,
) -> tuple[list[float], int, tuple[float, float]]:
    """(latencies, decisions, (server, client) CPU seconds) of `matches` concurrent heads-up
    match slots over `seconds`, after a warm-up."""
    latencies: list[float] = []
    names = [f"m{matches}-{i}-{side}" for i in range(matches) for side in ("a", "b")]
    deadline = time.perf_counter() + 3600
    last_sent: dict[str, float] = {}
    bots = [MinimalBot(address, n, tokens[n], latencies, last_sent, deadline, tls) for n in names]
    readies = [asyncio.Event() for _ in bots]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(b.run(r, stop)) for b, r in zip(bots, readies, strict=True)]
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
    channel = aio_channel(address, tls)
    control = control_pb2_grpc.ControlServiceStub(channel)
    metadata = (("authorization", f"Bearer {control_token}"),)
    counter = iter(range(10**9))
    run = uuid.uuid4().hex[:6]  # ids unique to this phase: a finished match's id is a retry, or a clash

    async def slot(i: int) -> None:
        while True:  # short matches, one after another, until cancelled
            request = control_pb2.PlayMatchRequest(
                match_id=f"bench-{matches}-{run}-{next(counter)}", bots=[names[2 * i], names[2 * i + 1]],
                seed=i, rules=pb.RulesConfig(target_score=500), disconnect_grace_ms=200, max_strikes=1,
            )  # fmt: skip
            async for _ in control.PlayMatch(request, metadata=metadata):
                pass

    slots = [asyncio.create_task(slot(i)) for i in range(matches)]
    await asyncio.sleep(WARM_UP)  # the measured window starts after it, as the references' do
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


async def decisions_per_match(
    address: str, control_token: str, tokens: dict[str, str], matches: int
) -> list[tuple[int, int]]:
    """(decisions asked, actions applied) of `matches` matches to 500 (seeds 0..matches-1, all at
    once) between the minimal bots."""
    names = [f"m64-{i}-{side}" for i in range(matches) for side in ("a", "b")]
    asked: dict[str, int] = {}
    bots = [MinimalBot(address, n, tokens[n], [], {}, 0.0, asked=asked) for n in names]
    readies = [asyncio.Event() for _ in bots]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(b.run(r, stop)) for b, r in zip(bots, readies, strict=True)]
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
    channel = aio_channel(address)  # it carries the control token: built where every such channel is
    control = control_pb2_grpc.ControlServiceStub(channel)
    metadata = (("authorization", f"Bearer {control_token}"),)
    run = uuid.uuid4().hex[:6]

    async def one(i: int) -> tuple[int, int]:
        request = control_pb2.PlayMatchRequest(
            match_id=f"count-{run}-{i}", bots=[names[2 * i], names[2 * i + 1]], seed=i,
            rules=pb.RulesConfig(target_score=500),
        )  # fmt: skip
        applied = 0
        async for progress in control.PlayMatch(request, metadata=metadata):
            if progress.HasField("finished"):
                applied = len(progress.finished.actions)
        return asked.get(request.match_id, 0), applied

    counts = await asyncio.gather(*(one(i) for i in range(matches)))
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    await channel.close()
    return list(counts)


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
    address: str, tokens: dict[str, str], names: list[str], tls: ClientTLS | None = None
) -> tuple[list[object], list[object]]:
    opened, calls = [], []
    for name in names:
        channel = aio_channel(address, tls)
        call = bot_pb2_grpc.BotServiceStub(channel).Connect()
        await call.write(
            bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name=name, token=tokens[name], max_matches=1))
        )
        opened.append(channel)
        calls.append(call)
    for call in calls:
        await call.read()  # Welcome: connected and authenticated
    return opened, calls


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


class ServerBuild:
    """One build of the server to measure: its interpreter and environment."""

    def __init__(self, name: str, python: str, environment: dict[str, str]) -> None:
        self.name, self.python, self.environment = name, python, environment


PROBE = """
import uno_arena.server.match_host
from uno_arena.rules.build import BUILD, compiled_modules
hot_path = {"uno_arena.v1.codec", "uno_arena.server.match_host", "uno_arena.server.gateway"}
print(BUILD if BUILD == "interpreted" or hot_path <= set(compiled_modules()) else "compiled-rules-only")
"""


def build_of(python: str, environment: dict[str, str]) -> str | None:
    """The build `python` runs with `environment` ("compiled", "interpreted", or
    "compiled-rules-only" for a compiled install made before the server's hot path was compiled);
    None if it cannot run."""
    probe = [python, "-c", PROBE]
    try:
        done = subprocess.run(
            probe, env={**os.environ, **environment}, capture_output=True, text=True, timeout=60
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def server_builds(compiled_python: Path | None) -> list[ServerBuild]:
    """The builds to measure, compiled first: this interpreter's (a compiled install also runs its
    source, `UNO_ARENA_BUILD=interpreted`) and a compiled install's at `compiled_python`."""
    candidates = [(sys.executable, {ENVIRONMENT: ""}), (sys.executable, {ENVIRONMENT: "interpreted"})]
    if compiled_python is not None and compiled_python.exists():
        candidates.append((str(compiled_python), {ENVIRONMENT: ""}))
    builds: dict[str, ServerBuild] = {}
    for python, environment in candidates:
        name = build_of(python, environment)
        if name is not None and name not in builds:
            builds[name] = ServerBuild(name, python, environment)
    return sorted(builds.values(), key=lambda build: build.name != "compiled")


ROUND_KEYS = ("decision_p50_us", "decisions_per_s_64", "latency_ratio", "throughput_ratio",
              "latency_ratio_vs_relay", "throughput_ratio_vs_relay")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="time per phase and round")
    parser.add_argument(
        "--rounds",
        type=int,
        default=7,
        help="rounds of the phases; figures are medians (a round's ratios vary by 0.1-0.2 here)",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--idle-bots", type=int, default=1000)
    parser.add_argument("--count-matches", type=int, default=32, help="matches of (d), at most 64")
    parser.add_argument(
        "--compiled-python",
        type=Path,
        default=DEFAULT_COMPILED_PYTHON,
        help="the python of a compiled install, measured beside this interpreted one",
    )
    parser.add_argument("--reference-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference_server:
        reference_server_main(args.reference_server)
        return

    builds = server_builds(args.compiled_python)
    print("server builds measured: " + ", ".join(build.name for build in builds))
    size = len(typical_request())
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

    def start_server(build: ServerBuild) -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        command = [build.python, "-m", "uno_arena.cli", "server", "--listen", f"127.0.0.1:{port}",
                   "--redis-url", args.redis_url, "--key-prefix", prefix]  # fmt: skip
        env = {**os.environ, **build.environment, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        wait_for_port(port)
        return process, f"127.0.0.1:{port}"

    try:
        rounds, raw_all, ours_all = side_by_side(
            args, size, answer_size, builds, start_server, control_token, tokens
        )
        idle = {
            build.name: idle_memory(lambda b=build: start_server(b), tokens, idle_names) for build in builds
        }
        counted = {
            build.name: counted_matches(
                lambda b=build: start_server(b), control_token, tokens, min(args.count_matches, 64)
            )
            for build in builds
        }
    finally:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
    median = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    raw_p99 = percentile(raw_all, 0.99) * 1e6
    print(f"raw  1 stream:  p50 {median['raw_p50_us']:7.0f} us  p99 {raw_p99:7.0f} us")
    print(f"relay 1 pair:   p50 {median['relay_p50_us']:7.0f} us")
    print(f"raw 64 streams: {median['raw_rt_per_s_64']:9.0f} round trips/s")
    print(f"relay 64 pairs: {median['relay_rt_per_s_64']:9.0f} round trips/s")
    for build in builds:
        b = build.name
        print(f"{b:<11} ours 1 match:    p50 {median[f'{b}:decision_p50_us']:7.0f} us  "
              f"p99 {percentile(ours_all[b], 0.99) * 1e6:7.0f} us")  # fmt: skip
        print(f"{b:<11} ours 64 matches: {median[f'{b}:decisions_per_s_64']:9.0f} decisions/s")
        asked, applied = (statistics.mean(c[k] for c in counted[b]) for k in (0, 1))
        print(f"{b:<11} per match: {asked:.1f} decisions asked, {applied:.1f} actions applied "
              f"({len(counted[b])} matches)")  # fmt: skip
        before, rss = idle[b]
        print(f"{b:<11} server memory: {before:.0f} MiB before, {rss:.0f} MiB, {args.idle_bots} idle bots")
    primary, *others = builds

    def figures_of(build: ServerBuild) -> dict[str, float]:
        b = build.name
        return {
            "decision_p50_us": median[f"{b}:decision_p50_us"],
            "decision_p99_us": percentile(ours_all[b], 0.99) * 1e6,
            "raw_p50_us": median["raw_p50_us"],
            "latency_ratio": median[f"{b}:latency_ratio"],
            "decisions_per_s_64": median[f"{b}:decisions_per_s_64"],
            "raw_rt_per_s_64": median["raw_rt_per_s_64"],
            "throughput_ratio": median[f"{b}:throughput_ratio"],
            "relay_p50_us": median["relay_p50_us"],
            "relay_rt_per_s_64": median["relay_rt_per_s_64"],
            "latency_ratio_vs_relay": median[f"{b}:latency_ratio_vs_relay"],
            "throughput_ratio_vs_relay": median[f"{b}:throughput_ratio_vs_relay"],
            "lean_relay_p50_us": median["lean_relay_p50_us"],
            "lean_relay_rt_per_s_64": median["lean_relay_rt_per_s_64"],
            "latency_ratio_vs_lean_relay": median[f"{b}:latency_ratio_vs_lean_relay"],
            "throughput_ratio_vs_lean_relay": median[f"{b}:throughput_ratio_vs_lean_relay"],
            "decisions_per_match": statistics.mean(asked for asked, _ in counted[b]),
            "actions_per_match": statistics.mean(applied for _, applied in counted[b]),
            "idle_bots": args.idle_bots,
            "idle_rss_mib": idle[b][1],
            "rounds": len(rounds),
        }

    def shown(key: str, value: float) -> str:
        if key.endswith("_per_match"):
            return f"{key}={value:.1f}"
        return f"{key}={value:.3f}" if "ratio" in key else f"{key}={value:.0f}"

    fields = [f"build={primary.name}", *(shown(k, v) for k, v in figures_of(primary).items())]
    for other in others:  # the other build's own figures, beside (the references are shared)
        fields += [shown(f"{other.name}_{k}", v) for k, v in figures_of(other).items()
                   if not k.startswith(("raw_", "relay_", "lean_relay_", "idle_bots", "rounds"))]  # fmt: skip
    print("RESULT " + " ".join(fields))


def side_by_side(  # type: ignore[no-untyped-def]
    args, size: int, answer_size: int, builds: list[ServerBuild], start_server, control_token: str,
    tokens: dict[str, str],
) -> tuple[list[dict[str, float]], list[float], dict[str, list[float]]]:  # fmt: skip
    """Rounds of the phases (raw, relay and each build of ours; 1 and 64), one after the other, so
    that a slow spell of the machine hits all sides; ratios are taken within a round.
    Returns (figures per round, all raw 1-stream latencies, all 1-match latencies per build)."""
    reference_port = free_port()
    command = [sys.executable, __file__, "--reference-server", str(reference_port)]
    reference = subprocess.Popen(command)
    rounds: list[dict[str, float]] = []
    raw_all: list[float] = []
    ours_all: dict[str, list[float]] = {build.name: [] for build in builds}

    def per_round_trip(cpu: tuple[float, float], count: int) -> str:
        return f"{cpu[0] / max(count, 1) * 1e6:.0f} + {cpu[1] / max(count, 1) * 1e6:.0f}"

    def reference_64(client, *more) -> tuple[int, str]:  # type: ignore[no-untyped-def]
        """(round trips, CPU us per round trip) of 64 streams of the reference server."""
        before = cpu_now(reference.pid)
        _, count = asyncio.run(client(reference_port, 64, args.seconds, answer_size, *more))
        after = cpu_now(reference.pid)
        return count, per_round_trip((after[0] - before[0], after[1] - before[1]), count)

    servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        wait_for_port(reference_port)
        for build in builds:
            servers[build.name] = start_server(build)
        for number in range(1, args.rounds + 1):
            raw_lat_1, _ = asyncio.run(raw_client(reference_port, 1, args.seconds, answer_size))
            relay_lat_1, _ = asyncio.run(relay_client(reference_port, 1, args.seconds, answer_size))
            lean_lat_1, _ = asyncio.run(
                relay_client(reference_port, 1, args.seconds, answer_size, LEAN_RELAY_METHOD)
            )
            lat_1 = {}
            for name, (process, address) in servers.items():
                lat_1[name], _, _ = asyncio.run(
                    ours(address, control_token, tokens, 1, args.seconds, process.pid)
                )
            raw_64, raw_cpu = reference_64(raw_client)
            relay_64, relay_cpu = reference_64(relay_client)
            lean_64, lean_cpu = reference_64(relay_client, LEAN_RELAY_METHOD)
            decisions_64, cpu = {}, {}
            for name, (process, address) in servers.items():
                _, decisions_64[name], cpu[name] = asyncio.run(
                    ours(address, control_token, tokens, 64, args.seconds, process.pid)
                )
            raw_all += raw_lat_1
            figures = {
                "raw_p50_us": percentile(raw_lat_1, 0.5) * 1e6,
                "relay_p50_us": percentile(relay_lat_1, 0.5) * 1e6,
                "raw_rt_per_s_64": raw_64 / args.seconds,
                "relay_rt_per_s_64": relay_64 / args.seconds,
                "lean_relay_p50_us": percentile(lean_lat_1, 0.5) * 1e6,
                "lean_relay_rt_per_s_64": lean_64 / args.seconds,
            }
            f = {k: round(v) for k, v in figures.items()}
            line = (f"round {number}: p50 raw {f['raw_p50_us']} us, relay {f['relay_p50_us']} us; 64 at once:"
                    f" raw {f['raw_rt_per_s_64']}/s, relay {f['relay_rt_per_s_64']}/s; CPU us per round trip,"
                    f" server + clients: raw {raw_cpu}, relay {relay_cpu}; lean relay: p50"
                    f" {f['lean_relay_p50_us']} us, 64 at once {f['lean_relay_rt_per_s_64']}/s,"
                    f" CPU {lean_cpu}")  # fmt: skip
            for name in servers:
                ours_all[name] += lat_1[name]
                p50, per_s = percentile(lat_1[name], 0.5) * 1e6, decisions_64[name] / args.seconds
                figures[f"{name}:decision_p50_us"] = p50
                figures[f"{name}:decisions_per_s_64"] = per_s
                figures[f"{name}:latency_ratio"] = p50 / figures["raw_p50_us"]
                figures[f"{name}:throughput_ratio"] = per_s / figures["raw_rt_per_s_64"]
                figures[f"{name}:latency_ratio_vs_relay"] = p50 / figures["relay_p50_us"]
                figures[f"{name}:throughput_ratio_vs_relay"] = per_s / figures["relay_rt_per_s_64"]
                figures[f"{name}:latency_ratio_vs_lean_relay"] = p50 / figures["lean_relay_p50_us"]
                figures[f"{name}:throughput_ratio_vs_lean_relay"] = per_s / figures["lean_relay_rt_per_s_64"]
                line += (f"; {name}: p50 {p50:.0f} us ({len(lat_1[name])} decisions), 64 at once "
                         f"{per_s:.0f}/s, CPU {per_round_trip(cpu[name], decisions_64[name])}")  # fmt: skip
            rounds.append(figures)
            print(line, flush=True)
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait()
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


def counted_matches(
    start_server, control_token: str, tokens: dict[str, str], matches: int
) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    """(d) on a fresh server: `decisions_per_match`."""
    process, address = start_server()
    try:
        return asyncio.run(decisions_per_match(address, control_token, tokens, matches))
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    main()
