"""BotError: a bot reports that its own code failed; the server records a BOT_ERROR fault, no strike.

A real server on port 0; SDK bots whose code fails, and raw clients that send BotError by hand
(before and after their Decision, twice, for ids the server never sent).
"""

from __future__ import annotations

import random
import threading

import pytest

from tests.conftest import RunningServer
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import Policy, TestBot, eager, play_match
from uno_arena.sdk import Action, Fault, FaultKind, MatchResult, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb

SHORT = {"rules": pb.RulesConfig(target_score=300), "max_strikes": 2}
SAFE = (pb.ACTION_KIND_DRAW, pb.ACTION_KIND_KEEP, pb.ACTION_KIND_ACCEPT, pb.ACTION_KIND_PASS,
        pb.ACTION_KIND_CHOOSE_COLOUR)  # fmt: skip


class Flaky(GreedyBot):
    """Greedy, but every `every`-th decision fails: it raises, or answers `None` (not an Action)."""

    def __init__(self, every: int = 2, how: str = "raise") -> None:
        self.every, self.how = every, how
        self.decisions = self.failed = 0
        self.lock = threading.Lock()
        self.faults: list[Fault] = []
        self.ended = threading.Event()

    def decide(self, observation: Observation) -> Action:
        with self.lock:
            self.decisions += 1
            fails = self.decisions % self.every == 0
            self.failed += fails
        if fails and self.how == "raise":
            raise ZeroDivisionError("division by zero")
        if fails:
            return None  # type: ignore[return-value]
        return super().decide(observation)

    def on_fault(self, fault: Fault) -> None:
        self.faults.append(fault)

    def on_match_end(self, result: MatchResult) -> None:
        self.ended.set()


def play(server: RunningServer, flaky: Flaky, match_id: str) -> control_pb2.FinishedMatch:
    bots = {"steady": GreedyBot(), "flaky": flaky}
    running = [BackgroundBot(bot, server.address, name, server.register(name)) for name, bot in bots.items()]
    for bot in running:
        bot.wait_connected()
    request = control_pb2.PlayMatchRequest(match_id=match_id, bots=list(bots), seed=5, **SHORT)  # type: ignore[arg-type]
    finished = play_match(server.address, server.control_token, request)[-1].finished
    assert flaky.ended.wait(30), "the flaky bot never heard that its match ended"  # faults come before
    for bot in running:
        bot.stop()
        assert bot.error is None
    return finished


@pytest.mark.parametrize("how", ["raise", "return None"])
def test_a_bot_whose_code_fails_gets_bot_error_faults_without_strikes(
    match_server: RunningServer, how: str
) -> None:
    flaky = Flaky(how=how)
    finished = play(match_server, flaky, f"flaky-{how.replace(' ', '-')}")
    assert flaky.failed > SHORT["max_strikes"]  # more errors than strikes allowed ...
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED  # ... and still played to the end
    assert list(finished.result.forfeited) == []
    faults = list(finished.faults)
    assert {(f.seat, f.kind, f.strikes, f.forfeited) for f in faults} == {
        (1, pb.FAULT_KIND_BOT_ERROR, 0, False)
    }
    assert len(faults) == flaky.failed and list(finished.result.faults) == [0, flaky.failed]
    expected = "ZeroDivisionError: division by zero (" if how == "raise" else "decide() returned None"
    assert all(f.detail.startswith(expected) for f in faults), faults[0].detail
    assert all(f.applied.kind in SAFE for f in faults)
    # the bot heard of each one, through on_fault
    assert [(f.kind, f.strikes, f.forfeited) for f in flaky.faults] == [
        (FaultKind.BOT_ERROR, 0, False)
    ] * len(faults)
    assert [f.detail for f in flaky.faults] == [f.detail for f in faults]


@pytest.mark.settings(bot_errors_strike=True)
def test_the_server_may_count_bot_errors_as_strikes(match_server: RunningServer) -> None:
    flaky = Flaky()
    finished = play(match_server, flaky, "flaky-strikes")
    assert finished.result.reason == pb.MATCH_END_FORFEIT and list(finished.result.forfeited) == [1]
    assert [(f.kind, f.strikes, f.forfeited) for f in finished.faults] == [
        (pb.FAULT_KIND_BOT_ERROR, 1, False),
        (pb.FAULT_KIND_BOT_ERROR, 2, True),
    ]


def reporting(at: int, *plan: str) -> tuple[Policy, list[TestBot], list[int]]:
    """Eager play; at the `at`-th request, send what `plan` says in order: "error" (a BotError for this
    request), "answer" (the Decision), "unknown" (a BotError quoting an id never sent), "long" (one
    over 128 characters). Returns the policy, a box for the bot, and the answer given at `at`."""
    fallback, seen, box, answered = eager(random.Random(2)), [0], [], []

    def choose(request: bot_pb2.DecisionRequest) -> int | None:
        seen[0] += 1
        action_id = fallback(request)
        if seen[0] != at:
            return action_id
        assert action_id is not None
        for step in plan:
            if step == "answer":
                box[0].answer(request.request_id, action_id)
                answered.append(action_id)
            else:
                quoted = {"error": request.request_id, "unknown": "nobody#7", "long": "x" * 129}[step]
                report = bot_pb2.BotError(request_id=quoted, detail=f"my bug\non line {step}")
                box[0].send(bot_pb2.BotMessage(bot_error=report))
        return None

    return choose, box, answered


def raw_match(
    server: RunningServer, policy: Policy, box: list[TestBot], match_id: str
) -> control_pb2.FinishedMatch:
    good = TestBot(server.address, "good", server.register("good"))
    bad = TestBot(server.address, "bad", server.register("bad"), policy=policy)
    box.append(bad)
    for bot in (good, bad):
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(match_id=match_id, bots=["good", "bad"], seed=3, **SHORT)  # type: ignore[arg-type]
    finished = play_match(server.address, server.control_token, request)[-1].finished
    bad.wait_for(lambda: bool(bad.of_kind("match_finished")))
    good.close()
    bad.close()
    return finished


@pytest.mark.parametrize("order", [("error", "answer"), ("answer", "error")], ids=["before", "after"])
def test_a_bot_error_before_or_after_its_decision_is_recorded_once_with_what_was_applied(
    match_server: RunningServer, order: tuple[str, str]
) -> None:
    policy, box, answered = reporting(4, *order, "error")  # the second report is a duplicate
    finished = raw_match(match_server, policy, box, f"report-{order[0]}")
    assert [(f.seat, f.kind, f.strikes) for f in finished.faults] == [(1, pb.FAULT_KIND_BOT_ERROR, 0)]
    fault = finished.faults[0]
    assert fault.detail == "my bug on line error"  # one line
    if order[0] == "answer":  # known by then: the action the bot answered
        assert fault.applied.id == answered[0]
    else:  # not answered yet: the safe default, which the SDK would answer
        assert fault.applied.kind in SAFE
    told = [m.fault for m in box[0].of_kind("fault")]
    assert [f.kind for f in told] == [pb.FAULT_KIND_BOT_ERROR, pb.FAULT_KIND_INVALID]
    assert told[1].strikes == 0 and "duplicate BotError" in told[1].detail


def test_bot_errors_quoting_ids_never_sent_are_strays(match_server: RunningServer) -> None:
    policy, box, _ = reporting(2, "unknown", "long", "answer")
    finished = raw_match(match_server, policy, box, "report-unknown")
    assert list(finished.faults) == []  # nothing recorded, no strike
    strays = [m.fault.detail for m in box[0].of_kind("fault")]
    assert len(strays) == 2
    assert "BotError for no recent request 'nobody#7'" in strays[0]
    assert strays[1].startswith("BotError.request_id: at most 128 characters, got 129")
