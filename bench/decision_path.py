"""The server's own work per decision, without gRPC: a real `MatchHost`, `Gateway` and two
`BotConnection`s in one process, the bots answering at once from the pending requests.

Run: `python bench/decision_path.py [--decisions N] [--rounds R]`

What it counts is what the match server does between reading an answer and queueing the next
request: checking and applying the answer, the legal actions, encoding the request (events once per
view, the discard pile, the observation), the match's bookkeeping, the end of each match (its log
and result) and the garbage collector's share; not gRPC, the sockets or the event loop's wake-ups
(`bench/protocol.py` measures those too). Matches are heads-up to 500 with the minimal bots of
`bench/protocol.py` (the first playable card, calling UNO, else the first legal action).

The same process then measures the two ends of a request apart (issue 27: decoding costs at most
twice encoding): matches of the same bots played on the rules core, each decision's request encoded
by a `codec.MatchEncoder` as the server does (`encoder.request`) and decoded from those bytes as a
bot's SDK does (`codec.decision_from_bytes` with one `DecisionDecoder` per seat, as per connection:
the Observation with its legal actions, and the events), each timed on its own on the wall clock
(`perf_counter`; CPU-time clocks cost a system call, a microsecond, as much as a compiled encode's
fifth). A decision where either took over `PREEMPTED` seconds, that is where the process was
preempted on this shared machine, is left out of both sums (the round's line counts them).

Each build of the server available is measured in its own process, alternating, R rounds
(docs/building.md: this interpreter's, a compiled install's source, `build/venv-compiled`); CPU
seconds per decision, the median over the rounds. The RESULT line gives the compiled build's
figure when there is one and the interpreted build's beside it (its fields prefixed by its name):
`us_per_decision`, then `encode_us_per_decision`, `decode_us_per_decision` (medians over the rounds)
and `decode_over_encode` (the median of each round's ratio, both measured in one process).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


async def decisions_cpu(decisions: int) -> float:
    """CPU seconds per decision over at least `decisions` decisions asked and answered."""
    from uno_arena.rules import RulesConfig
    from uno_arena.server.gateway import BotConnection, Gateway
    from uno_arena.server.match_host import MatchHost, MatchSpec
    from uno_arena.server.settings import ServerSettings

    settings = ServerSettings()
    gateway = Gateway()
    connections = [BotConnection(name=n, max_matches=1, ask_single=False, settings=settings) for n in "ab"]
    for connection in connections:
        await gateway.attach(connection)
    answered, number = 0, 0
    start = time.process_time()
    while answered < decisions:
        number += 1
        spec = MatchSpec(f"bench/m-{number}", ("a", "b"), RulesConfig(players=2, target_score=500),
                         number, 1.0, 1, 0.2)  # fmt: skip
        task = asyncio.create_task(MatchHost(spec, gateway).run())
        await asyncio.sleep(0)
        while not task.done():
            for connection in connections:
                connection._outbox.clear()  # what a writer would send: dropped
                connection.queued_bytes = 0
                for request_id, asked in list(connection.pending.items()):
                    legal = asked.legal  # type: ignore[attr-defined]
                    plays = [a for a in legal if a.card is not None]
                    calls = [a for a in plays if a.uno]
                    connection.answer(request_id, (calls or plays or legal)[0].id)
                    answered += 1
            await asyncio.sleep(0)
    return (time.process_time() - start) / answered


PREEMPTED = 0.002  # seconds: some 20 times the longest encode or decode of a request here


def codec_seconds(decisions: int) -> tuple[float, float, int]:
    """(encode, decode) seconds per decision over at least `decisions` decisions, each request
    encoded as the server does and decoded from its bytes as the SDK does; and how many decisions
    were left out, preempted."""
    import random

    from uno_arena.rules import RulesConfig, apply, legal_actions, new_match
    from uno_arena.v1 import codec

    clock = time.perf_counter
    encoding = decoding = 0.0
    made, number, preempted = 0, 0, 0
    while made < decisions:
        number += 1
        match = new_match(RulesConfig(players=2, target_score=500), random.Random(number))
        encoder = codec.MatchEncoder(match, f"bench/m-{number}", 1000)
        decoders = [codec.DecisionDecoder(), codec.DecisionDecoder()]  # each bot's connection
        sent = [0, 0]
        while match.result is None:
            seat = match.hand.to_move
            legal = legal_actions(match)
            started = clock()
            raw, stop = encoder.request(seat, legal, f"bench/m-{number}#{seat}.{made}", sent[seat])
            encoded = clock()
            request = codec.decision_from_bytes(raw, decoders[seat])
            decoded = clock()
            if encoded - started < PREEMPTED and decoded - encoded < PREEMPTED:
                encoding += encoded - started
                decoding += decoded - encoded
            else:
                preempted += 1
            sent[seat] = stop
            made += 1
            chosen = request.observation.legal_actions
            plays = [a for a in chosen if a.card is not None]
            calls = [a for a in plays if a.uno]
            apply(match, (calls or plays or list(chosen))[0])
    timed = made - preempted
    return encoding / timed, decoding / timed, preempted


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--decisions", type=int, default=30_000, help="decisions per round and build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--compiled-python", type=Path, default=ROOT / "build" / "venv-compiled" / "bin" / "python"
    )
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        per_decision = asyncio.run(decisions_cpu(args.measure))
        print(per_decision, *codec_seconds(args.measure))
        return

    from protocol import server_builds  # the same choice of builds as bench/protocol.py

    builds = server_builds(args.compiled_python)
    print("server builds measured: " + ", ".join(build.name for build in builds))
    figures: dict[str, list[float]] = {build.name: [] for build in builds}
    encodes: dict[str, list[float]] = {build.name: [] for build in builds}
    decodes: dict[str, list[float]] = {build.name: [] for build in builds}
    ratios: dict[str, list[float]] = {build.name: [] for build in builds}
    for number in range(1, args.rounds + 1):
        line = f"round {number}:"
        for build in builds:
            env = {**os.environ, **build.environment, "PYTHONPATH": str(ROOT)}
            done = subprocess.run(
                [build.python, __file__, "--measure", str(args.decisions)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            seconds, encode_s, decode_s, preempted = done.stdout.strip().splitlines()[-1].split()
            per_decision, encode, decode = (float(figure) * 1e6 for figure in (seconds, encode_s, decode_s))
            figures[build.name].append(per_decision)
            encodes[build.name].append(encode)
            decodes[build.name].append(decode)
            ratios[build.name].append(decode / encode)
            line += f" {build.name} {per_decision:.1f} us (encode {encode:.1f}, decode {decode:.1f} us:"
            line += f" {decode / encode:.2f}x, {preempted} preempted)"
        print(line, flush=True)
    median = {name: statistics.median(values) for name, values in figures.items()}
    primary, *others = builds
    fields = [f"build={primary.name}", f"us_per_decision={median[primary.name]:.1f}"]
    fields += [f"{other.name}_us_per_decision={median[other.name]:.1f}" for other in others]
    for build in builds:
        prefix = "" if build is primary else f"{build.name}_"
        fields += [
            f"{prefix}encode_us_per_decision={statistics.median(encodes[build.name]):.1f}",
            f"{prefix}decode_us_per_decision={statistics.median(decodes[build.name]):.1f}",
            f"{prefix}decode_over_encode={statistics.median(ratios[build.name]):.2f}",
        ]
    if "compiled" in median and "interpreted" in median:
        fields.append(f"compiled_speedup={median['interpreted'] / median['compiled']:.2f}")
    fields.append(f"rounds={args.rounds}")
    print("RESULT " + " ".join(fields))


if __name__ == "__main__":
    main()
