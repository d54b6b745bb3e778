"""Whole matches through a real server on port 0, with real gRPC bots."""

from __future__ import annotations

import concurrent.futures
import random
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import grpc
import pytest

from tests.conftest import RunningServer
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import TestBot, eager, play_match
from uno_arena.records.replay import read_replay_file, recorded_match, write_replay_file
from uno_arena.rules import RulesConfig, replay_match
from uno_arena.rules.action import action_from_id
from uno_arena.sdk import Action, Bot, Event, EventKind, MatchInfo, Observation, Phase, Played, Received
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.v1 import codec, control_pb2
from uno_arena.v1 import game_pb2 as pb


def connect(server: RunningServer, *names: str, **options: object) -> list[TestBot]:
    bots = [TestBot(server.address, name, server.register(name), **options) for name in names]  # type: ignore[arg-type]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    return bots


def test_a_full_match_between_two_clients(match_server: RunningServer) -> None:
    alice, bob = connect(match_server, "alice", "bob")
    request = control_pb2.PlayMatchRequest(match_id="m1", bots=["alice", "bob"], seed=7)
    progress = play_match(match_server.address, match_server.control_token, request)
    finished = progress[-1].finished
    assert progress[0].WhichOneof("kind") == "started"
    result = finished.result
    assert result.reason == pb.MATCH_END_TARGET_REACHED
    assert max(result.totals) >= 500
    assert list(result.bots) == ["alice", "bob"]
    assert len([p for p in progress if p.WhichOneof("kind") == "hand"]) == len(result.hands)
    for bot in (alice, bob):
        bot.wait_for(lambda b=bot: bool(b.of_kind("match_finished")))
        assert bot.of_kind("match_finished")[0].match_finished.result == result
        assert bot.of_kind("decision_request")
    replayed = replay_match(RulesConfig(players=2), 7, [action_from_id(a) for a in finished.actions])
    assert replayed.result is not None and list(replayed.result.totals) == list(result.totals)
    log = [event for p in progress if p.WhichOneof("kind") == "log" for event in p.log.events]
    assert len(log) == finished.event_count == len(replayed.events)
    assert log == [codec.event(e) for e in replayed.events]  # the complete log, private cards included
    again = play_match(match_server.address, match_server.control_token, request)  # a retry: not played twice
    assert again == [p for p in progress if p.WhichOneof("kind") in ("log", "finished")]
    for bot in (alice, bob):
        bot.close()


def test_a_stacking_match_carries_the_stack_decision_and_its_penalty(match_server: RunningServer) -> None:
    """RULINGS 25 over the wire: PHASE_STACK and Observation.penalty reach the bots, stacking plays are
    accepted, and the recorded actions replay through the rules core to the same result. (Seed 8 has a
    stacked Draw Two and a Wild Draw Four offered to stack, with these eager bots.)"""
    bots = connect(match_server, "stack-a", "stack-b", "stack-c", "stack-d")
    rules = pb.RulesConfig(stacking=True, target_score=150)
    names = [b.name for b in bots]
    request = control_pb2.PlayMatchRequest(match_id="stacked", bots=names, seed=8, rules=rules)
    progress = play_match(match_server.address, match_server.control_token, request)
    assert progress[0].started.rules.stacking
    finished = progress[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    asked = [m.decision_request for bot in bots for m in bot.of_kind("decision_request")]
    stack = [r for r in asked if r.observation.phase == pb.PHASE_STACK]
    assert stack and all(r.observation.penalty >= 2 and r.observation.penalty % 2 == 0 for r in stack)
    assert {a.kind for r in stack for a in r.legal_actions} == {pb.ACTION_KIND_PLAY, pb.ACTION_KIND_ACCEPT}
    assert any(r.observation.penalty > 2 for r in stack)  # a Draw Two stacked on a Draw Two
    challenge = [r for r in asked if r.observation.phase == pb.PHASE_CHALLENGE]
    assert any(a.kind == pb.ACTION_KIND_PLAY for r in challenge for a in r.legal_actions)  # a Wild Draw Four
    replayed = replay_match(RulesConfig(players=4, stacking=True, target_score=150), 8,
                            [action_from_id(a) for a in finished.actions])  # fmt: skip
    assert replayed.result is not None and list(replayed.result.totals) == list(finished.result.totals)
    for bot in bots:
        bot.close()


class Watcher(Bot):
    """Keeps what its seat was asked (phases) and told (events) around an example bot's own choices."""

    def __init__(self) -> None:
        super().__init__()
        self.seat = -1
        self.match_rules = RulesConfig()
        self.phases: Counter[Phase] = Counter()
        self.events: list[Event] = []

    def on_match_start(self, match: MatchInfo) -> None:
        self.seat, self.match_rules = match.seat, match.rules
        super().on_match_start(match)

    def on_events(self, match_id: str, events: Sequence[Event]) -> None:
        self.events.extend(events)
        super().on_events(match_id, events)

    def decide(self, observation: Observation) -> Action:
        self.phases[observation.phase] += 1
        chosen = super().decide(observation)
        assert isinstance(chosen, Action)  # the example bots decide synchronously
        return chosen


class WatchingGreedy(Watcher, GreedyBot):
    pass


class WatchingStrong(Watcher, StrongBot):
    pass


HOUSE_RULES = ("stacking", "jump_in", "seven_zero", "multi_play")


def test_sdk_example_bots_play_a_match_with_every_house_rule(
    match_server: RunningServer, tmp_path: Path
) -> None:
    """RULINGS 25-28 over the wire, with the SDK's example bots: the new decisions (JUMP_IN, LAY, SWAP)
    are asked, the new events (Swapped, HandsPassed, Received, a jump-in Played) reach every seat, a
    Received's cards only its receiver, and the match, its replay file and its rules core replay agree."""
    watchers: dict[str, Watcher] = {"g0": WatchingGreedy(), "s1": WatchingStrong(), "g2": WatchingGreedy(),
                                    "s3": WatchingStrong()}  # fmt: skip
    bots = [BackgroundBot(bot, match_server.address, name, match_server.register(name))
            for name, bot in watchers.items()]  # fmt: skip
    for bot in bots:
        bot.wait_connected()
    rules = pb.RulesConfig(target_score=150, stacking=True, jump_in=True, seven_zero=True, multi_play=True)
    request = control_pb2.PlayMatchRequest(match_id="house", bots=list(watchers), seed=3, rules=rules)
    progress = play_match(match_server.address, match_server.control_token, request)
    finished = progress[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert not finished.faults  # every decision answered in time, legally, without an error of the bots
    assert all(getattr(finished.rules, name) for name in HOUSE_RULES)
    for bot in bots:
        bot.stop()

    asked: Counter[Phase] = sum((w.phases for w in watchers.values()), Counter())
    assert asked[Phase.JUMP_IN] and asked[Phase.LAY] and asked[Phase.SWAP], asked
    for watcher in watchers.values():
        assert all(getattr(watcher.match_rules, name) for name in HOUSE_RULES)
        kinds = Counter(e.kind for e in watcher.events)
        assert kinds[EventKind.SWAPPED] and kinds[EventKind.HANDS_PASSED], kinds
        assert any(isinstance(e, Played) and e.jump_in for e in watcher.events)
        received = [e for e in watcher.events if isinstance(e, Received)]
        assert {e.seat for e in received} == set(range(4))
        for event in received:
            if event.seat == watcher.seat:  # its own new hand, card by card
                assert event.cards is not None and len(event.cards) == event.count
            else:
                assert event.cards is None
        laid = [(a.seat, b.seat) for a, b in zip(watcher.events, watcher.events[1:], strict=False)
                if isinstance(a, Played) and isinstance(b, Played) and a.card.rank is b.card.rank
                and not b.jump_in]  # fmt: skip
        assert any(s == t for s, t in laid)  # cards laid together: one seat's consecutive plays

    config = codec.rules_from(finished.rules, 4)
    replayed = replay_match(config, 3, [action_from_id(a) for a in finished.actions])
    assert replayed.result is not None and list(replayed.result.totals) == list(finished.result.totals)
    log = [event for p in progress if p.WhichOneof("kind") == "log" for event in p.log.events]
    assert log == [codec.event(e) for e in replayed.events]
    path = write_replay_file(recorded_match(finished, log), tmp_path)
    assert codec.rules_from(read_replay_file(path).finished.rules, 4) == config


SEVEN_ZERO_EVENTS = {"swapped", "hands_passed", "received"}
# each house rule alone: the decision it adds, and the seven-0 events it makes
ALONE = {
    "jump_in": (pb.PHASE_JUMP_IN, set[str]()),
    "seven_zero": (pb.PHASE_SWAP, SEVEN_ZERO_EVENTS),
    "multi_play": (pb.PHASE_LAY, set[str]()),
}
HOUSE_PHASES = {pb.PHASE_STACK, pb.PHASE_JUMP_IN, pb.PHASE_LAY, pb.PHASE_SWAP}


@pytest.mark.parametrize("rule", sorted(ALONE))
def test_each_house_rule_alone_asks_its_own_decision_only(match_server: RunningServer, rule: str) -> None:
    names = [f"{rule}-{seat}" for seat in range(3)]
    bots = connect(match_server, *names)
    rules = pb.RulesConfig(target_score=100)
    setattr(rules, rule, True)
    request = control_pb2.PlayMatchRequest(match_id=f"alone-{rule}", bots=names, seed=5, rules=rules)
    progress = play_match(match_server.address, match_server.control_token, request)
    finished = progress[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED and not finished.faults
    phase, kinds = ALONE[rule]
    asked = {m.decision_request.observation.phase for bot in bots for m in bot.of_kind("decision_request")}
    assert asked & HOUSE_PHASES == {phase}
    log = [event for p in progress if p.WhichOneof("kind") == "log" for event in p.log.events]
    assert {e.WhichOneof("kind") for e in log} & SEVEN_ZERO_EVENTS == kinds
    assert any(e.played.jump_in for e in log) == (rule == "jump_in")
    replayed = replay_match(
        codec.rules_from(finished.rules, 3), 5, [action_from_id(a) for a in finished.actions]
    )
    assert replayed.result is not None and list(replayed.result.totals) == list(finished.result.totals)
    for bot in bots:
        bot.close()


def test_matches_are_multiplexed_on_one_connection(match_server: RunningServer) -> None:
    names = ["hub", "p1", "p2", "p3"]
    hub, *others = connect(match_server, names[0], max_matches=3) + connect(match_server, *names[1:])
    requests = [
        control_pb2.PlayMatchRequest(
            match_id=f"multi-{i}", bots=["hub", name], seed=i, rules=pb.RulesConfig(target_score=200)
        )
        for i, name in enumerate(names[1:])
    ]
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        results = list(
            pool.map(lambda r: play_match(match_server.address, match_server.control_token, r)[-1], requests)
        )
    assert all(r.finished.result.reason == pb.MATCH_END_TARGET_REACHED for r in results)
    match_ids = {m.decision_request.match_id for m in hub.of_kind("decision_request")}
    assert match_ids == {"multi-0", "multi-1", "multi-2"}
    for bot in others:  # each opponent only ever saw its own match
        assert {m.decision_request.match_id for m in bot.of_kind("decision_request")} <= {
            r.match_id for r in requests if bot.name in r.bots
        }
    for bot in [hub, *others]:
        bot.close()


def test_a_bot_plays_no_more_matches_than_it_announced(match_server: RunningServer) -> None:
    release = threading.Event()
    fallback = eager(random.Random(5))

    def held(request: object) -> int:
        assert release.wait(30)
        return fallback(request)  # type: ignore[arg-type]

    solo, *others = connect(match_server, "solo") + connect(match_server, "o1", "o2")
    solo.policy = held  # its first match waits until the second has been refused
    first = control_pb2.PlayMatchRequest(
        match_id="slot-1", bots=["solo", "o1"], seed=1, rules=pb.RulesConfig(target_score=100)
    )
    second = control_pb2.PlayMatchRequest(
        match_id="slot-2", bots=["solo", "o2"], seed=2, wait_for_bots_ms=300
    )
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(play_match, match_server.address, match_server.control_token, first)
        solo.wait_for(lambda: bool(solo.of_kind("match_started")))
        with pytest.raises(grpc.RpcError) as refused:
            play_match(match_server.address, match_server.control_token, second)
        release.set()
        assert running.result(60)[-1].finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "no free match slot" in (refused.value.details() or "")
    for bot in [solo, *others]:
        bot.close()
