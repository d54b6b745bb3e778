"""Every bot fault, one by one: the match still finishes and the fault is recorded, where it happened."""

from __future__ import annotations

import concurrent.futures
import random
import re
import threading
import time

import grpc
import pytest

from tests.conftest import RunningServer
from tests.server.botclient import Policy, TestBot, eager, play_match
from tests.server.test_bot_errors import Flaky, play
from uno_arena.records.replay import AUTOMATIC, lines, recorded_match
from uno_arena.rules import action_from_id, legal_actions, new_match, safe_default, to_move
from uno_arena.rules import play as play_action
from uno_arena.v1 import bot_pb2, codec, control_pb2
from uno_arena.v1 import game_pb2 as pb

# a second per decision: the well-behaved side answers at once, but on a loaded machine a 300 ms deadline
# timed some of its answers out too, which the tests would count as the fault under test
FAST = {"decision_timeout_ms": 1000, "disconnect_grace_ms": 1500}


def once_then_eager(misbehave: Policy, at: int = 3) -> Policy:
    """Eager play, except that the `at`-th decision request is answered by `misbehave`."""
    fallback = eager(random.Random(1))
    seen = [0]

    def choose(request: bot_pb2.DecisionRequest) -> int | None:
        seen[0] += 1
        return misbehave(request) if seen[0] == at else fallback(request)

    return choose


def match_with(
    server: RunningServer, policy: Policy, match_id: str, box: list[TestBot] | None = None,
    says_alive: bool = False, **request: object,
) -> control_pb2.FinishedMatch:  # fmt: skip
    """A short match of a well-behaved bot (seat 0) against `policy` (seat 1, put in `box` if given;
    `says_alive`: see `TestBot`)."""
    good = TestBot(server.address, "good", server.register("good"))
    bad = TestBot(server.address, "bad", server.register("bad"), policy=policy, says_alive=says_alive)
    if box is not None:
        box.append(bad)
    for bot in (good, bad):
        bot.wait_for(bot.welcomed)
    fields = {"rules": pb.RulesConfig(target_score=150), **FAST, **request}
    progress = play_match(
        server.address,
        server.control_token,
        control_pb2.PlayMatchRequest(match_id=match_id, bots=["good", "bad"], seed=3, **fields),  # type: ignore[arg-type]
    )
    good.close()
    if box is None:
        bad.close()
    return progress[-1].finished


def replayed(finished: control_pb2.FinishedMatch) -> list[tuple[int, int, int]]:
    """For each applied action, replayed through the rules core: (the seat whose decision it was, the
    events logged before it, the id of the server's default action there)."""
    match = new_match(codec.rules_from(finished.rules, len(finished.result.bots)),
                      random.Random(finished.seed))  # fmt: skip
    found = []
    for action_id in finished.actions:
        found.append((to_move(match), len(match.events), safe_default(legal_actions(match)).id))
        play_action(match, action_from_id(action_id))
    assert len(match.events) == finished.event_count
    return found


def assert_placed(finished: control_pb2.FinishedMatch) -> None:
    """Each fault's action_index and event_index name the decision it was about: that seat's, with that
    many events before it, and the action applied there is the fault's `applied`."""
    decisions = replayed(finished)
    for fault in finished.faults:
        assert fault.HasField("action_index") and fault.HasField("event_index")
        seat, events_before, _ = decisions[fault.action_index]
        assert (seat, events_before) == (fault.seat, fault.event_index)
        assert finished.actions[fault.action_index] == fault.applied.id


def not_legal(request: bot_pb2.DecisionRequest) -> int:
    legal = {a.id for a in request.legal_actions}
    return next(i for i in range(130) if i not in legal)


@pytest.mark.parametrize(
    ("misbehave", "kind"),
    [
        (lambda r: None, pb.FAULT_KIND_TIMEOUT),
        (not_legal, pb.FAULT_KIND_ILLEGAL),
        (lambda r: 4096, pb.FAULT_KIND_INVALID),
    ],
    ids=["timeout", "illegal", "invalid"],
)
def test_one_fault_is_recorded_and_the_match_finishes(
    match_server: RunningServer, misbehave: Policy, kind: int
) -> None:
    finished = match_with(match_server, once_then_eager(misbehave), f"fault-{kind}")
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert [(f.seat, f.kind, f.strikes, f.forfeited) for f in finished.faults] == [(1, kind, 1, False)]
    safe = (pb.ACTION_KIND_DRAW, pb.ACTION_KIND_KEEP, pb.ACTION_KIND_ACCEPT, pb.ACTION_KIND_PASS)
    assert finished.faults[0].applied.kind in (*safe, pb.ACTION_KIND_CHOOSE_COLOUR)
    assert list(finished.result.faults) == [0, 1]
    assert_placed(finished)
    assert finished.faults[0].action_index > 2  # its third decision: after the other seat's and its own


def test_an_unknown_request_id_is_invalid(match_server: RunningServer) -> None:
    bot_box: list[TestBot] = []

    def wrong_id(request: bot_pb2.DecisionRequest) -> None:
        bot_box[0].answer(request.request_id + "-nope", request.legal_actions[0].id)
        return None

    finished = match_with(match_server, once_then_eager(wrong_id), "unknown-id", bot_box)
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert [(f.kind, f.detail) for f in finished.faults] == [
        (pb.FAULT_KIND_INVALID, "answered an unknown request id")
    ]
    bot_box[0].close()


def test_strikes_make_a_seat_forfeit(match_server: RunningServer) -> None:
    finished = match_with(match_server, lambda r: None, "silent", says_alive=True, max_strikes=3)
    assert finished.result.reason == pb.MATCH_END_FORFEIT
    assert list(finished.result.forfeited) == [1]
    assert list(finished.result.winners) == [0]
    assert [f.strikes for f in finished.faults] == [1, 2, 3]
    assert finished.faults[-1].forfeited
    assert_placed(finished)
    assert finished.faults[-1].action_index == len(finished.actions) - 1  # two seats: it ends there


def three_seats(server: RunningServer, third: TestBot, match_id: str, **limits: int) -> list[TestBot]:
    """Two well-behaved bots and `third` (seat 2), connected; the caller plays the match."""
    bots = [TestBot(server.address, n, server.register(n)) for n in (f"{match_id}-a", f"{match_id}-b")]
    for bot in (*bots, third):
        bot.wait_for(bot.welcomed)
    return [*bots, third]


def test_a_forfeited_seat_plays_on_by_default_actions_from_its_forfeit(match_server: RunningServer) -> None:
    """Three seats: the one that strikes out plays on, every later decision of it the server's default,
    never asked (no more faults); its faults say where they happened."""
    answered = [0]

    def answers_twice(request: bot_pb2.DecisionRequest) -> int | None:
        answered[0] += 1
        return request.legal_actions[0].id if answered[0] <= 2 else None

    mute = TestBot(match_server.address, "mute3", match_server.register("mute3"), policy=answers_twice)
    bots = three_seats(match_server, mute, "plays-on")
    request = control_pb2.PlayMatchRequest(match_id="plays-on", bots=[b.name for b in bots], seed=3,
                                           rules=pb.RulesConfig(target_score=100), decision_timeout_ms=200,
                                           max_strikes=2)  # fmt: skip
    finished = play_match(match_server.address, match_server.control_token, request)[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED and list(finished.result.forfeited) == [2]
    assert [(f.seat, f.kind, f.strikes, f.forfeited) for f in finished.faults] == [
        (2, pb.FAULT_KIND_TIMEOUT, 1, False),
        (2, pb.FAULT_KIND_TIMEOUT, 2, True),
    ]
    assert_placed(finished)
    forfeit = finished.faults[-1].action_index
    decisions = replayed(finished)
    later = [i for i, (seat, _, _) in enumerate(decisions) if seat == 2 and i > forfeit]
    assert len(later) > 10  # it played on, a whole match to 100
    assert all(finished.actions[i] == decisions[i][2] for i in later)
    for bot in bots:
        bot.close()


def test_a_bot_gone_past_its_grace_forfeits_by_a_fault_at_its_next_decision(
    match_server: RunningServer,
) -> None:
    """The decision it hung up on is a DISCONNECTED fault; its next one, due while it is still gone after
    the grace period, another, which forfeits: that is where its automatic moves begin."""
    hang_up = threading.Event()
    asked = [0]

    def leave_at_the_third(request: bot_pb2.DecisionRequest) -> int | None:
        asked[0] += 1
        if asked[0] >= 3:
            hang_up.set()  # never answers: the test hangs up instead
            return None
        return request.legal_actions[0].id

    leaver = TestBot(match_server.address, "leaver3", match_server.register("leaver3"),
                     policy=leave_at_the_third)  # fmt: skip
    bots = three_seats(match_server, leaver, "gone")
    request = control_pb2.PlayMatchRequest(match_id="gone", bots=[b.name for b in bots], seed=4,
                                           rules=pb.RulesConfig(target_score=100), decision_timeout_ms=30_000,
                                           disconnect_grace_ms=300)  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(play_match, match_server.address, match_server.control_token, request)
        assert hang_up.wait(30)
        leaver.close()
        progress = future.result(60)
    finished = progress[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED and list(finished.result.forfeited) == [2]
    assert [(f.kind, f.strikes, f.forfeited) for f in finished.faults] == [
        (pb.FAULT_KIND_DISCONNECTED, 1, False),
        (pb.FAULT_KIND_DISCONNECTED, 2, True),
    ]
    assert finished.faults[1].detail == "not connected, nor back within the 0.3 s grace period"
    assert_placed(finished)
    assert finished.faults[0].action_index < finished.faults[1].action_index
    # `uno-arena replay` of it: the fault and the forfeit where they happened, the moves after automatic
    log = [e for m in progress if m.HasField("log") for e in m.log.events]
    text = list(lines(recorded_match(finished, log)))
    assert "  !! leaver3 forfeits: every later move of leaver3 is automatic" in text
    assert sum(line.startswith("  !! fault: leaver3 disconnected (") for line in text) == 2
    assert sum(line.startswith("  leaver3 ") and line.endswith(AUTOMATIC) for line in text) > 3
    forfeited = r"forfeited: leaver3 in hand \d+ \(disconnected, strike 2\); its later moves were automatic"
    assert re.fullmatch(forfeited, text[-2])
    for bot in bots[:2]:
        bot.close()


def test_a_bot_error_is_placed_at_the_decision_it_reports(match_server: RunningServer) -> None:
    flaky = Flaky(every=3)
    finished = play(match_server, flaky, "flaky-placed")
    assert finished.faults and all(f.kind == pb.FAULT_KIND_BOT_ERROR for f in finished.faults)
    assert_placed(finished)
    assert len({f.action_index for f in finished.faults}) == len(finished.faults)  # one per decision
    # the bot hears where too (the SDK's Fault)
    assert [(f.action_index, f.event_index) for f in flaky.faults] == [
        (f.action_index, f.event_index) for f in finished.faults
    ]


def test_an_oversized_message_ends_the_stream_and_counts_as_disconnect(match_server: RunningServer) -> None:
    bot_box: list[TestBot] = []

    def oversized(request: bot_pb2.DecisionRequest) -> None:
        bot_box[0].answer("x" * (5 * 1024 * 1024), request.legal_actions[0].id)
        return None

    # a long decision timeout: under load, sending 5 MB may take longer than FAST's 1 s
    finished = match_with(match_server, once_then_eager(oversized), "big", bot_box, decision_timeout_ms=5000)
    assert finished.faults[0].kind == pb.FAULT_KIND_DISCONNECTED
    assert finished.result.reason == pb.MATCH_END_FORFEIT  # it never came back within the grace period
    assert list(finished.result.winners) == [0]
    bad = bot_box[0]
    bad.wait_for(lambda: bad.ended)
    assert bad.error is not None and bad.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    bad.close()


def test_a_disconnected_bot_that_comes_back_in_time_plays_on(match_server: RunningServer) -> None:
    token = match_server.register("flaky")
    good = TestBot(match_server.address, "good", match_server.register("good"))
    hang_up = threading.Event()

    def leave(request: bot_pb2.DecisionRequest) -> None:
        hang_up.set()
        return None

    flaky = TestBot(match_server.address, "flaky", token, policy=once_then_eager(leave, at=2))
    for bot in (good, flaky):
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(match_id="comeback", bots=["good", "flaky"], seed=5,
                                           rules=pb.RulesConfig(target_score=150), decision_timeout_ms=5000,
                                           disconnect_grace_ms=10_000)  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(play_match, match_server.address, match_server.control_token, request)
        assert hang_up.wait(30)
        flaky.close()
        back = TestBot(match_server.address, "flaky", token)
        finished = future.result(60)[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert [f.kind for f in finished.faults] == [pb.FAULT_KIND_DISCONNECTED]
    assert back.of_kind("match_started")[0].match_started.match_id == "comeback"  # told again on return
    back.wait_for(lambda: bool(back.of_kind("match_finished")))
    good.close()
    back.close()


def test_faults_in_one_match_leave_the_others_alone(match_server: RunningServer) -> None:
    bots = {name: TestBot(match_server.address, name, match_server.register(name)) for name in ("a", "b")}
    bots["mute"] = TestBot(match_server.address, "mute", match_server.register("mute"), policy=lambda r: None,
                           says_alive=True)  # fmt: skip
    bots["c"] = TestBot(match_server.address, "c", match_server.register("c"))
    for bot in bots.values():
        bot.wait_for(bot.welcomed)
    requests = [
        control_pb2.PlayMatchRequest(
            match_id="calm", bots=["a", "b"], seed=1, rules=pb.RulesConfig(target_score=150)
        ),
        control_pb2.PlayMatchRequest(match_id="noisy", bots=["mute", "c"], seed=2, max_strikes=2, **FAST),
    ]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        calm, noisy = pool.map(
            lambda r: play_match(match_server.address, match_server.control_token, r)[-1], requests
        )
    assert calm.finished.result.reason == pb.MATCH_END_TARGET_REACHED and not calm.finished.faults
    assert noisy.finished.result.reason == pb.MATCH_END_FORFEIT
    for bot in bots.values():
        bot.close()


def test_a_late_answer_costs_only_its_timeout(match_server: RunningServer) -> None:
    bot_box: list[TestBot] = []
    late: list[tuple[str, int]] = []
    fallback = eager(random.Random(2))

    def slow_once(request: bot_pb2.DecisionRequest) -> int | None:
        if not late:
            late.append((request.request_id, request.legal_actions[0].id))
            return None  # times out ...
        if len(late) == 1:
            late.append(("sent", 0))
            bot_box[0].answer(*late[0])  # ... and is answered late, just before the next answer
        return fallback(request)

    finished = match_with(match_server, slow_once, "late", bot_box)
    assert [f.kind for f in finished.faults] == [pb.FAULT_KIND_TIMEOUT]
    slow = bot_box[0]
    slow.wait_for(lambda: any(not m.fault.strikes for m in slow.of_kind("fault")))
    stray = [m.fault for m in slow.of_kind("fault") if not m.fault.strikes]
    assert len(stray) == 1 and "late answer" in stray[0].detail
    assert not stray[0].HasField("action_index") and not stray[0].HasField("event_index")  # no decision's
    assert_placed(finished)
    slow.close()


def test_a_deadline_after_earlier_decisions_is_the_whole_timeout(match_server: RunningServer) -> None:
    """One clock per match, armed at the first decision's deadline and moved on when it fires early:
    a decision that times out later still gets its whole second, not what was left of the first's."""
    fallback = eager(random.Random(4))
    asked_at: list[float] = []

    def slow_first_then_silent(request: bot_pb2.DecisionRequest) -> int | None:
        asked_at.append(time.monotonic())
        if len(asked_at) == 1:
            time.sleep(0.5)  # a slow answer, in time: the match's clock stays armed for its deadline
        return None if len(asked_at) == 5 else fallback(request)

    finished = match_with(match_server, slow_first_then_silent, "slow-then-silent")
    assert [f.kind for f in finished.faults] == [pb.FAULT_KIND_TIMEOUT]
    assert asked_at[4] - asked_at[0] >= 0.5  # the first deadline passes while the 5th is due
    assert asked_at[5] - asked_at[4] >= 0.95  # the next request came only after the whole timeout
    assert_placed(finished)


# what the server applies for a missed house-rule decision (None: the first legal action)
HOUSE_DEFAULTS = {
    pb.PHASE_LAY: pb.ACTION_KIND_DONE,
    pb.PHASE_JUMP_IN: pb.ACTION_KIND_PASS,
    pb.PHASE_SWAP: None,
}


def test_a_missed_house_rule_decision_gets_the_safe_default(match_server: RunningServer) -> None:
    """rules.safe_default for the house rules' decisions: DONE for LAY (lay no more), PASS for
    JUMP_IN (no jump), the first legal action (a swap, with the lowest seat) for SWAP. The deadline is
    a whole second: under a loaded machine a 300 ms one timed an answered decision out too."""
    silent: list[bot_pb2.DecisionRequest] = []
    fallback = eager(random.Random(4))

    def mute_twice_per_phase(request: bot_pb2.DecisionRequest) -> int | None:
        phase = request.observation.phase
        if phase in HOUSE_DEFAULTS and sum(r.observation.phase == phase for r in silent) < 2:
            silent.append(request)
            return None
        return fallback(request)

    names = ["quiet", "loud1", "loud2"]
    token = match_server.register("quiet")
    bots = [TestBot(match_server.address, "quiet", token, policy=mute_twice_per_phase, says_alive=True)]
    bots += [TestBot(match_server.address, n, match_server.register(n)) for n in names[1:]]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    rules = pb.RulesConfig(target_score=200, jump_in=True, seven_zero=True, multi_play=True)
    request = control_pb2.PlayMatchRequest(match_id="house-defaults", bots=names, seed=2, rules=rules,
                                           decision_timeout_ms=1000, max_strikes=100)  # fmt: skip
    finished = play_match(match_server.address, match_server.control_token, request)[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    quiet = [f for f in finished.faults if f.seat == 0]
    assert [r.observation.phase for r in silent].count(pb.PHASE_SWAP) == 2
    assert {r.observation.phase for r in silent} == set(HOUSE_DEFAULTS)
    assert len(quiet) == len(silent) and all(f.kind == pb.FAULT_KIND_TIMEOUT for f in quiet)
    for asked, fault in zip(silent, quiet, strict=True):
        expected = HOUSE_DEFAULTS[asked.observation.phase]
        applied = fault.applied
        assert applied.id in {a.id for a in asked.legal_actions}
        if expected is None:  # SWAP: the first legal action
            assert applied.kind == pb.ACTION_KIND_SWAP and applied.id == asked.legal_actions[0].id
        else:
            assert applied.kind == expected
    for bot in bots:
        bot.close()
