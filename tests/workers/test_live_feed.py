"""A match followed live from end to end: a real server, a real `uno-arena worker` process, SDK bots, Redis,
and the web view's server-sent events read with a plain HTTP client. The feed has every public event in
order and no seat's cards, and every fault (a bot that times out until it forfeits) where it happened; a
feed that cannot be written never stops the match from being recorded."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import redis

from tests.conftest import RunningServer
from tests.endpoints import status_of
from tests.sdk.runner import BackgroundBot
from tests.web.test_live import Message, follow, web
from tests.workers.harness import ServerProcess, WorkerProcess, connect_bots, wait_until
from tests.workers.test_tournament import (
    SlowGreedyBot,
    assert_recorded_once,
    finished,
    start_worker,
)
from uno_arena.records import identity, live
from uno_arena.records.match import load_match
from uno_arena.records.replay import export
from uno_arena.records.spec import TournamentSpec, spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, scheduled_match, states
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import lifecycle
from uno_arena.workers.live import _in_order

PRIVATE = ("dealt", "drew", "received", "hand_shown")  # events whose cards only their seat may see


def without_cards(event: dict[str, Any]) -> dict[str, Any]:
    """The event with its private cards (and the mark that they are hidden) left out."""
    kind, values = next(iter(event.items()))
    if kind not in PRIVATE:
        return event
    return {kind: {k: v for k, v in values.items() if k not in ("cards", "hidden")}}


def running_ids(url: str, tournament_id: str) -> list[str]:
    status, body = status_of(f"{url}/api/tournament/{tournament_id}/running")
    assert status == 200, body
    return [m["match_id"] for m in json.loads(body)["running"]]


def follow_the_first_match(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path, spec: TournamentSpec
) -> tuple[str, str, list[Message]]:
    """Create and start the tournament with a worker, follow its first match's live feed from the web
    as a browser does, from its first event to its end, and wait for the tournament to finish:
    (tournament id, match id, the feed's messages)."""
    client, prefix = match_server.redis, match_server.prefix
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    match_id = Keys(prefix, tournament_id).match_id(0)
    with web(client, prefix) as url:
        lifecycle.start(client, prefix, tournament_id)
        start_worker(match_server, workers, tmp_path)
        wait_until(lambda: match_id in running_ids(url, tournament_id), 60, "the match to be listed running")
        messages = list(follow(f"{url}/match/{match_id}/events"))
        wait_until(lambda: finished(match_server, tournament_id), 120, "the tournament to finish")
        assert match_id not in running_ids(url, tournament_id)  # listed running no more
    return tournament_id, match_id, messages


def test_a_match_is_followed_from_the_server_to_the_browser(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    bots = connect_bots(
        match_server, {"ann": SlowGreedyBot(), "bob": SlowGreedyBot(), "cid": SlowGreedyBot()}
    )
    spec = spec_from_dict({"name": "live", "bots": ["ann", "bob", "cid"], "target": 300, "seed": 5,
                           "server": match_server.address})  # fmt: skip
    tournament_id, match_id, messages = follow_the_first_match(match_server, workers, tmp_path, spec)
    assert_recorded_once(client, prefix, tournament_id)

    scheduled = scheduled_match(client, prefix, tournament_id, 0)
    assert messages[0].event == "start" and messages[0].json()["bots"] == list(scheduled.bots)
    assert messages[-1].event == "end" and messages[-1].json() == {"match_id": match_id, "recorded": True}
    assert {m.event for m in messages[1:-1]} == {"events"}
    ids = [m.id for m in messages]
    assert all(ids) and ids == sorted(ids, key=lambda i: tuple(map(int, str(i).split("-"))))
    streamed = [e for m in messages[1:-1] for e in m.json()]

    match = load_match(client, prefix, match_id)
    assert match is not None
    logged: list[dict[str, Any]] = export(match)["events"]  # type: ignore[assignment]
    assert len(streamed) == len(logged) == match.finished.event_count  # every event, in order
    assert [without_cards(e) for e in streamed] == [without_cards(e) for e in logged]
    private_logged = [e for e in logged if next(iter(e)) in PRIVATE and next(iter(e.values())).get("cards")]
    assert private_logged  # the tournament's log has every seat's cards ...
    private_streamed = [e for e in streamed if next(iter(e)) in PRIVATE]
    assert private_streamed and not [e for e in private_streamed if next(iter(e.values())).get("cards")]
    assert all(next(iter(e.values())).get("hidden") for e in private_streamed)  # ... the live feed none
    for bot in bots:
        bot.stop()


def test_a_feed_that_cannot_be_written_never_stops_the_match(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    bots = connect_bots(match_server, {"dee": GreedyBot(), "eve": GreedyBot()})
    spec = spec_from_dict({"name": "blocked", "bots": ["dee", "eve"], "target": 100,
                           "server": match_server.address})  # fmt: skip
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    keys = Keys(prefix, tournament_id)
    matches = lifecycle.start(client, prefix, tournament_id)
    for index in range(matches):  # a key of another type where each feed goes: every write of it fails
        client.set(live.stream_key(prefix, keys.match_id(index)), "in the way")
    worker = start_worker(match_server, workers, tmp_path)
    wait_until(lambda: finished(match_server, tournament_id), 120, "the tournament to finish")
    assert_recorded_once(client, prefix, tournament_id)
    assert "cannot write its live feed" in worker.output()
    assert client.get(live.stream_key(prefix, keys.match_id(0))) == b"in the way"
    for bot in bots:
        bot.stop()


class SlowRandomBot(RandomBot):
    """Random among its plays (when it has one: uniform play draws for hundreds of turns), 10 ms per
    decision: a match played again after a server restart goes differently."""

    def decide(self, observation: Observation) -> Action:
        time.sleep(0.01)
        plays = observation.legal.plays()
        return self.rng.choice(plays) if plays else super().decide(observation)


def feed_entries(client: redis.Redis, prefix: str, match_id: str) -> list[live.LiveEntry]:
    entries = live.read(client, prefix, match_id)
    while entries and (more := live.read(client, prefix, match_id, after=entries[-1].id)):
        entries += more
    return entries


def streamed_events(client: redis.Redis, prefix: str, match_id: str) -> int:
    entries = feed_entries(client, prefix, match_id)
    return sum(len(json.loads(e.data)) for e in entries if e.kind == "events")


def test_after_a_server_restart_the_feed_holds_the_match_played_again(
    redis_prefix: tuple[redis.Redis, str], workers: list[WorkerProcess], tmp_path: Path
) -> None:
    client, prefix = redis_prefix
    server = ServerProcess(prefix, tmp_path / "server.log").start()
    bots: list[BackgroundBot] = []
    try:
        for seed, name in enumerate(("rnd1", "rnd2")):
            bots.append(BackgroundBot(SlowRandomBot(seed), server.address, name,
                                      identity.register_bot(client, prefix, name)))  # fmt: skip
            bots[-1].wait_connected()
        # to 150: seconds of play are left when the server is killed after the first 40 events
        spec = spec_from_dict({"name": "again", "bots": ["rnd1", "rnd2"], "target": 150,
                               "server": server.address, "retries": {"attempts": 1}})  # fmt: skip
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        match_id = Keys(prefix, tournament_id).match_id(0)
        lifecycle.start(client, prefix, tournament_id)
        token = identity.create_control_token(client, prefix)
        worker = WorkerProcess(prefix, token, tmp_path / "worker.log", options=["--server-wait", "60"])
        workers.append(worker.start())
        wait_until(lambda: streamed_events(client, prefix, match_id) >= 40, 60, "the feed to have events")

        server.kill()  # mid-match; the new server plays it again from its first event, the bots choose anew
        server.start()
        wait_until(lambda: states(client, prefix, tournament_id)[0] is MatchState.DONE, 120, "the match")
        wait_until(lambda: [e.kind for e in feed_entries(client, prefix, match_id)][-1:] == ["end"], 30,
                   "the feed to end")  # fmt: skip
    finally:
        server.stop()
        for bot in bots:
            bot.stop()
    entries = feed_entries(client, prefix, match_id)
    assert [e.kind for e in entries if e.kind != "events"] == ["start", "end"]  # what came before is void
    assert "live feed starts over" in worker.output()
    match = load_match(client, prefix, match_id)
    assert match is not None
    streamed = [e for entry in entries if entry.kind == "events" for e in json.loads(entry.data)]
    logged: list[dict[str, Any]] = export(match)["events"]  # type: ignore[assignment]
    assert [without_cards(e) for e in streamed] == [without_cards(e) for e in logged]


class Stalling(GreedyBot):
    """Greedy, but every third decision holds its client's event loop for 300 ms: the SDK cannot answer
    in its place, so past a 100 ms deadline each is a timeout."""

    def __init__(self) -> None:
        self.decisions = 0

    async def decide(self, observation: Observation) -> Action:  # type: ignore[override]
        self.decisions += 1
        if self.decisions % 3 == 0:
            time.sleep(0.3)  # blocking on purpose: the fault under test
        return super().decide(observation)


def test_the_faults_and_the_forfeit_are_followed_live_where_they_happened(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    bots = connect_bots(match_server, {"amy": SlowGreedyBot(), "dave": Stalling(), "ida": SlowGreedyBot()})
    spec = spec_from_dict({"name": "faults", "bots": ["amy", "dave", "ida"], "seats": 3, "target": 200,
                           "seed": 7, "server": match_server.address,
                           "deadlines": {"decision_ms": 100, "max_strikes": 3}})  # fmt: skip
    _, match_id, messages = follow_the_first_match(match_server, workers, tmp_path, spec)
    for bot in bots:
        bot.stop()

    match = load_match(client, prefix, match_id)
    assert match is not None
    recorded = export(match)["finished"]["faults"]  # type: ignore[index]
    dave = match.record.bots.index("dave")
    assert match.record.forfeited == (dave,)
    faults = [m.json() for m in messages if m.event == "fault"]
    assert faults == recorded  # each fault, as the replay JSON has it, in order
    assert any(f["kind"] == "FAULT_KIND_TIMEOUT" and f["seat"] == dave for f in faults)
    assert faults[-1]["forfeited"] and faults[-1]["seat"] == dave and faults[-1]["strikes"] == 3
    ids = [m.id for m in messages]
    assert all(ids) and ids == sorted(ids, key=lambda i: tuple(map(int, str(i).split("-"))))  # one stream
    streamed = 0
    for message in messages[1:-1]:  # never before its place: after every event logged before it
        if message.event == "events":
            streamed += len(message.json())
        else:
            assert message.event == "fault" and streamed >= message.json()["event_index"], message
    assert streamed == match.finished.event_count
    forfeit = next(i for i, m in enumerate(messages) if m.event == "fault" and m.json().get("forfeited"))
    assert any(m.event == "events" for m in messages[forfeit:])  # seen live, while the match went on


def test_a_fault_goes_after_the_events_logged_before_it() -> None:
    events = [pb.Event(hand_started=pb.HandStarted(number=n)) for n in range(5)]
    early, late = pb.Fault(seat=0, event_index=12), pb.Fault(seat=1, event_index=14)
    parts = _in_order(events, [early, late], written=10)  # the feed has 10 events; these are 10 to 14
    assert parts == [events[:2], early, events[2:4], late, events[4:]]
    behind = pb.Fault(seat=2, event_index=3)  # its place was written already: it goes first
    assert _in_order(events, [behind], written=10) == [behind, events]
    assert _in_order([], [late], written=10) == [late, []]  # the match ended before its events came
