"""A timing probe: can a seat tell, from when its messages arrive, whether another seat's kept card
could have been played? (RULINGS 29; docs/protocol.md, "What a seat learns, and when".)

Run: `python bench/side_channel.py [--draws N] [--rules stacking,jump_in,...] [--redis-url URL]`
(needs a Redis; keys go under a fresh prefix and are deleted afterwards).

A real `uno-arena server` in its own process (started as `bench/protocol.py` starts one) plays
two-seat matches to 500 between two bots of this process, each a bare gRPC client answering every
request at once (the same trivial work whatever it is asked: constant time):
- the drawer draws on half of its turns even when it could play, and keeps a playable drawn card
  on most of them, so many turns read "drew 1, kept" in the events, some with a playable card and
  some without;
- the observer plays the first card it can (else the first legal action) and times, for each of the
  drawer's turns that reads exactly "drew 1, kept" (no play of the drawer in between), the gap from
  sending its own last answer to receiving the request whose events show that turn.
Ground truth comes from the drawer, which sees its own card and tracks the top card and colour from
the events. The two sides are matched by the draw's place in the match's log (each seat receives
every event, once, in order).

The probe then guesses "playable" from the gap with the best threshold it can fit (either way round:
longer or shorter means playable), fitted on one half of the draws and judged on the other, both
ways (two-fold), and reports the judged balanced accuracy: the mean of the hit rates on playable and
on unplayable draws, so that always guessing the commoner class scores 0.5 and 0.5 is chance.
The last line: `RESULT playable_guess_accuracy=X draws=N playable=P ...`; X at most 0.55 means the
gap tells nothing useful. `fit_accuracy` is the best threshold's score on all the draws it was fitted
on (an optimistic bound), `gap_p50_us_playable` / `_unplayable` the median gaps of each class.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from uno_arena.records import identity  # noqa: E402
from uno_arena.rules import RulesConfig  # noqa: E402
from uno_arena.rules.config import HOUSE_RULES  # noqa: E402
from uno_arena.v1 import bot_pb2, bot_pb2_grpc, codec, control_pb2, control_pb2_grpc  # noqa: E402
from uno_arena.v1 import game_pb2 as pb  # noqa: E402
from uno_arena.v1.channels import aio_channel  # noqa: E402

DRAWER, OBSERVER = "drawer", "observer"


@dataclass
class Table:
    """What a seat tracks from the events it receives: the top card, the colour to match, and how many
    events of each match it has seen (an event's index in the match's log)."""

    top: pb.Card | None = None
    colour: int = 0
    seen: int = 0

    def follow(self, event: pb.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind == "first_card":
            self.top, self.colour = event.first_card.card, event.first_card.card.colour
        elif kind == "colour_chosen":
            self.colour = event.colour_chosen.colour
        elif kind == "played":
            self.top = event.played.card
            self.colour = event.played.card.colour or event.played.colour
        self.seen += 1

    def playable(self, card: pb.Card) -> bool:
        """RULINGS 11, 12: matches the colour to match, or the top card's number or symbol, or is a Wild."""
        assert self.top is not None
        return (
            card.colour == pb.COLOUR_UNSPECIFIED or card.colour == self.colour or card.rank == self.top.rank
        )


@dataclass
class Probe:
    """What both bots found: the drawer's truth and the observer's gaps, keyed by (match id, the
    index of the drawer's `drew` event in the match's log)."""

    truth: dict[tuple[str, int], bool] = field(default_factory=dict)
    gaps: dict[tuple[str, int], float] = field(default_factory=dict)
    decisions: int = 0


def first_play_or_first(legal: list[pb.Action]) -> pb.Action:
    """The first card play (calling UNO when offered), else the first legal action."""
    plays = [a for a in legal if a.kind == pb.ACTION_KIND_PLAY]
    calls = [a for a in plays if a.uno]
    return (calls or plays or legal)[0]


class Bot:
    """A bare client: one stream, every request answered as soon as it is read."""

    def __init__(self, address: str, name: str, token: str, probe: Probe, seed: int) -> None:
        self.address, self.name, self.token, self.probe = address, name, token, probe
        self.rng = random.Random(seed)
        self.tables: dict[str, Table] = {}
        self.sent_at: dict[str, float] = {}  # match id -> when this bot last answered in it
        self.seat: dict[str, int] = {}

    async def run(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        channel = aio_channel(self.address)  # plaintext on loopback, as every bench/ client's channel
        call = bot_pb2_grpc.BotServiceStub(channel).Connect()
        hello = bot_pb2.Hello(bot_name=self.name, token=self.token, max_matches=1, client="side-channel")
        await call.write(bot_pb2.BotMessage(hello=hello))
        reader = asyncio.create_task(self._read(call, ready))
        await stop.wait()
        await call.done_writing()
        reader.cancel()
        await channel.close()

    async def _read(self, call, ready: asyncio.Event) -> None:  # type: ignore[no-untyped-def]
        async for message in call:
            arrived = time.perf_counter()
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                ready.set()
            elif kind == "match_started":
                started = message.match_started
                self.tables[started.match_id] = Table()
                self.seat[started.match_id] = started.seat
            elif kind == "events":
                self.events(message.events.match_id, list(message.events.events), None)
            elif kind == "decision_request":
                request = message.decision_request
                self.events(request.match_id, list(request.events), arrived)
                action = self.choose(request)
                decision = bot_pb2.Decision(request_id=request.request_id, action_id=action.id)
                await call.write(bot_pb2.BotMessage(decision=decision))
                self.sent_at[request.match_id] = time.perf_counter()
                self.probe.decisions += 1

    def events(self, match_id: str, events: list[pb.Event], arrived: float | None) -> None:
        table = self.tables[match_id]
        me = self.seat[match_id]
        drawn: list[tuple[int, pb.Event]] = []  # (log index, event) of the other seat's drawing turns
        others_played = False
        for event in events:
            kind = event.WhichOneof("kind")
            if kind == "drew" and event.drew.reason == "draw":
                if event.drew.seat == me and self.name == DRAWER and event.drew.count == 1:
                    self.probe.truth[(match_id, table.seen)] = table.playable(event.drew.cards[0])
                elif event.drew.seat != me:
                    drawn.append((table.seen, event))
            elif kind == "played" and event.played.seat != me:
                others_played = True
            table.follow(event)
        if self.name != OBSERVER or arrived is None or len(drawn) != 1 or others_played:
            return
        index, drew = drawn[0]
        kept = any(e.WhichOneof("kind") == "kept" for e in events)
        sent = self.sent_at.get(match_id)
        if drew.drew.count == 1 and kept and sent is not None:
            self.probe.gaps[(match_id, index)] = arrived - sent

    def choose(self, request: bot_pb2.DecisionRequest) -> pb.Action:
        legal = list(request.legal_actions)
        if self.name == OBSERVER:
            return first_play_or_first(legal)
        roll = self.rng.random()  # drawn for every request: the same work whatever is asked
        phase = request.observation.phase
        draw = [a for a in legal if a.kind == pb.ACTION_KIND_DRAW]
        keep = [a for a in legal if a.kind == pb.ACTION_KIND_KEEP]
        if phase == pb.PHASE_TURN and draw and roll < 0.5:
            return draw[0]  # draws even when it could play
        if phase == pb.PHASE_DRAWN and keep and roll < 0.75:
            return keep[0]  # keeps a playable card too
        return first_play_or_first(legal)


def balanced_accuracy(samples: list[tuple[float, bool]], threshold: float, longer: bool) -> float:
    """Mean hit rate on each class of the guess "playable when the gap is longer (or shorter) than
    `threshold`"; 0.5 is chance whatever the classes' sizes."""
    hits = {True: 0, False: 0}
    sizes = {True: 0, False: 0}
    for gap, playable in samples:
        guess = (gap > threshold) if longer else (gap <= threshold)
        sizes[playable] += 1
        hits[playable] += guess == playable
    if not sizes[True] or not sizes[False]:
        return 0.5
    return (hits[True] / sizes[True] + hits[False] / sizes[False]) / 2


def best_threshold(samples: list[tuple[float, bool]]) -> tuple[float, bool, float]:
    """(threshold, longer, its balanced accuracy on `samples`): the best of every gap seen, both ways."""
    best = (0.0, True, 0.5)
    for threshold in sorted({gap for gap, _ in samples}):
        for longer in (True, False):
            score = balanced_accuracy(samples, threshold, longer)
            if score > best[2]:
                best = (threshold, longer, score)
    return best


def judged(samples: list[tuple[float, bool]]) -> float:
    """Two-fold: fit on the even draws, judge on the odd ones, and the other way; the mean."""
    halves = samples[0::2], samples[1::2]
    scores = []
    for fit, judge in (halves, halves[::-1]):
        threshold, longer, _ = best_threshold(fit)
        scores.append(balanced_accuracy(judge, threshold, longer))
    return statistics.mean(scores)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 20) -> None:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(channel).result(timeout=timeout)
    channel.close()


async def play(address: str, control_token: str, tokens: dict[str, str], rules: pb.RulesConfig,
               draws: int, max_matches: int) -> tuple[Probe, int]:  # fmt: skip
    """Matches one after another until `draws` kept draws are measured; (what was found, matches)."""
    probe = Probe()
    bots = [Bot(address, name, tokens[name], probe, seed) for seed, name in enumerate((OBSERVER, DRAWER))]
    readies = [asyncio.Event() for _ in bots]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(b.run(r, stop)) for b, r in zip(bots, readies, strict=True)]
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
    channel = aio_channel(address)
    control = control_pb2_grpc.ControlServiceStub(channel)
    metadata = (("authorization", f"Bearer {control_token}"),)
    run = uuid.uuid4().hex[:6]
    matches = 0
    while len(measured(probe)) < draws and matches < max_matches:
        seats = [OBSERVER, DRAWER] if matches % 2 == 0 else [DRAWER, OBSERVER]
        request = control_pb2.PlayMatchRequest(match_id=f"side-{run}-{matches}", bots=seats, seed=matches,
                                               rules=rules)  # fmt: skip
        async for _ in control.PlayMatch(request, metadata=metadata):
            pass
        matches += 1
        print(f"match {matches}: {len(measured(probe))} kept draws measured", flush=True)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    await channel.close()
    return probe, matches


def measured(probe: Probe) -> list[tuple[float, bool]]:
    """(gap, playable) of every kept draw both sides saw, in the order they happened."""
    return [(gap, probe.truth[key]) for key, gap in probe.gaps.items() if key in probe.truth]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--draws", type=int, default=400, help="kept draws to measure (at least 200)")
    parser.add_argument("--max-matches", type=int, default=200)
    parser.add_argument("--rules", default="", help=f"house rules to add, by name: {','.join(HOUSE_RULES)}")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    args = parser.parse_args()
    house = [name for name in args.rules.split(",") if name]
    unknown = sorted(set(house) - set(HOUSE_RULES))
    if unknown:
        parser.error(f"--rules: unknown house rule {unknown[0]} (known: {', '.join(HOUSE_RULES)})")
    rules = codec.rules(RulesConfig(players=2, **dict.fromkeys(house, True)))

    client = redis.Redis.from_url(args.redis_url)
    prefix = f"uno-arena-bench-{uuid.uuid4().hex[:8]}"
    tokens = {name: identity.register_bot(client, prefix, name) for name in (OBSERVER, DRAWER)}
    control_token = identity.create_control_token(client, prefix)
    port = free_port()
    command = [sys.executable, "-m", "uno_arena.cli", "server", "--listen", f"127.0.0.1:{port}",
               "--redis-url", args.redis_url, "--key-prefix", prefix]  # fmt: skip
    server = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        probe, matches = asyncio.run(
            play(f"127.0.0.1:{port}", control_token, tokens, rules, args.draws, args.max_matches)
        )
    finally:
        server.terminate()
        server.wait()
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
    samples = measured(probe)
    playable = [gap for gap, yes in samples if yes]
    unplayable = [gap for gap, yes in samples if not yes]
    if not playable or not unplayable:
        raise SystemExit(f"only one class among {len(samples)} kept draws: nothing to tell apart")
    fitted = best_threshold(samples)
    accuracy = judged(samples)
    print(f"kept draws measured: {len(samples)} ({len(playable)} playable) over {matches} matches, "
          f"{probe.decisions} decisions asked")  # fmt: skip
    print(f"gap p50: playable {statistics.median(playable) * 1e6:.0f} us, "
          f"unplayable {statistics.median(unplayable) * 1e6:.0f} us")  # fmt: skip
    print(
        f"best threshold on all: {fitted[0] * 1e6:.0f} us ({'longer' if fitted[1] else 'shorter'} means "
        f"playable), balanced accuracy {fitted[2]:.3f}; fitted on half, judged on the other: {accuracy:.3f}"
    )
    fields = {
        "playable_guess_accuracy": f"{accuracy:.3f}",
        "draws": len(samples),
        "playable": len(playable),
        "fit_accuracy": f"{fitted[2]:.3f}",
        "gap_p50_us_playable": f"{statistics.median(playable) * 1e6:.0f}",
        "gap_p50_us_unplayable": f"{statistics.median(unplayable) * 1e6:.0f}",
        "matches": matches,
        "decisions_per_match": f"{probe.decisions / max(matches, 1):.0f}",
        "rules": ",".join(house) or "official",
    }
    print("RESULT " + " ".join(f"{k}={v}" for k, v in fields.items()))


if __name__ == "__main__":
    main()
