"""The server's own work per decision, without gRPC: a real `MatchHost`, `Gateway` and two
`BotConnection`s in one process, the bots answering at once from the pending requests.

Run: `python bench/decision_path.py [--decisions N] [--rounds R]`

What it counts is what the match server does between reading an answer and queueing the next
request: checking and applying the answer, the legal actions, encoding the request (events once per
view, the discard pile, the observation), the match's bookkeeping, the end of each match (its log
and result) and the garbage collector's share; not gRPC, the sockets or the event loop's wake-ups
(`bench/protocol.py` measures those too). Matches are heads-up to 500 with the minimal bots of
`bench/protocol.py` (the first playable card, calling UNO, else the first legal action).

Each build of the server available is measured in its own process, alternating, R rounds
(docs/building.md: this interpreter's, a compiled install's source, `build/venv-compiled`); CPU
seconds per decision, the median over the rounds. The RESULT line gives the compiled build's
figure when there is one and the interpreted build's beside it.
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
        print(asyncio.run(decisions_cpu(args.measure)))
        return

    from protocol import server_builds  # the same choice of builds as bench/protocol.py

    builds = server_builds(args.compiled_python)
    print("server builds measured: " + ", ".join(build.name for build in builds))
    figures: dict[str, list[float]] = {build.name: [] for build in builds}
    for number in range(1, args.rounds + 1):
        line = f"round {number}:"
        for build in builds:
            env = {**os.environ, **build.environment, "PYTHONPATH": str(ROOT)}
            done = subprocess.run(
                [build.python, __file__, "--measure", str(args.decisions)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            per_decision = float(done.stdout.strip().splitlines()[-1]) * 1e6
            figures[build.name].append(per_decision)
            line += f" {build.name} {per_decision:.1f} us"
        print(line, flush=True)
    median = {name: statistics.median(values) for name, values in figures.items()}
    primary, *others = builds
    fields = [f"build={primary.name}", f"us_per_decision={median[primary.name]:.1f}"]
    fields += [f"{other.name}_us_per_decision={median[other.name]:.1f}" for other in others]
    if "compiled" in median and "interpreted" in median:
        fields.append(f"compiled_speedup={median['interpreted'] / median['compiled']:.2f}")
    fields.append(f"rounds={args.rounds}")
    print("RESULT " + " ".join(fields))


if __name__ == "__main__":
    main()
