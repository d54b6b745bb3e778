"""The local arena: whole matches in-process, through the views and callbacks a connected bot gets."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import random
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from uno_arena.rules import RulesConfig, apply, legal_actions, must_ask, new_match, replay_match, seen_by
from uno_arena.sdk import Action, Bot, Event, EventKind, Fault, FaultKind, HandResult, MatchInfo, MatchResult
from uno_arena.sdk import Observation as View
from uno_arena.sdk.arena import ArenaError, ArenaResult, MatchOutcome, play
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.sdk.examples.strong_bot import StrongBot

SHORT = RulesConfig(target_score=150)  # whole matches, a few hands each

FILE_BOT = """
from uno_arena.sdk import Action, Bot, Observation


class FirstPlayBot(Bot):
    def decide(self, observation: Observation) -> Action:
        plays = observation.legal.plays(uno=True) or observation.legal.plays()
        return plays[0] if plays else observation.legal.safe_default()
"""


def bot_from_file(folder: Path) -> type[Bot]:
    path = folder / "first_play_bot.py"
    path.write_text(FILE_BOT)
    spec = importlib.util.spec_from_file_location("arena_test_first_play_bot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: type[Bot] = module.FirstPlayBot
    return found


def check_tallies(result: ArenaResult, matches: int) -> None:
    assert result.played == len(result.matches) == matches
    assert sum(b.wins for b in result.bots) == pytest.approx(matches)  # shared wins split
    for bot in result.bots:
        assert bot.matches == matches
        assert 0 <= bot.win_low <= bot.win_rate <= bot.win_high <= 1
        assert bot.decisions > 0 and bot.exceptions == bot.timeouts == 0, bot
    for outcome in result.matches:
        best = max(outcome.totals)
        assert max(outcome.totals) >= SHORT.target_score
        assert all(outcome.totals[w] == best for w in outcome.winners)
    assert (
        result.decisions == sum(m.decisions for m in result.matches) == sum(b.decisions for b in result.bots)
    )
    assert result.actions == sum(len(m.result.actions) for m in result.matches) >= result.decisions


@pytest.mark.parametrize(("seats", "bots"), [(2, 2), (4, 4), (10, 4)])
def test_example_bots_and_a_bot_from_a_file_play_at_2_4_and_10_seats(
    seats: int, bots: int, tmp_path: Path
) -> None:
    lineup = [bot_from_file(tmp_path), GreedyBot, StrongBot, RandomBot][:bots]
    result = play(lineup, seats=seats, matches=4, rules=SHORT, seed=11)
    check_tallies(result, 4)
    assert [b.name for b in result.bots] == [b.__name__ for b in lineup]
    assert {len(m.bots) for m in result.matches} == {result.seats} == {seats}
    if seats == 10:  # four bots fill ten seats in turn: three instances of the first two, two of the others
        assert sorted(result.matches[0].bots) == [
            *(f"FirstPlayBot#{n}" for n in (1, 2, 3)), *(f"GreedyBot#{n}" for n in (1, 2, 3)),
            "RandomBot#1", "RandomBot#2", "StrongBot#1", "StrongBot#2",
        ]  # fmt: skip


def test_greedy_beats_random() -> None:
    result = play([GreedyBot, RandomBot], seats=2, matches=20, rules=SHORT, seed=3)
    assert result.stats("GreedyBot").win_low > 0.5


class Counted(GreedyBot):
    def __init__(self) -> None:
        self.matches: list[tuple[str, int]] = []

    def on_match_start(self, match: MatchInfo) -> None:
        self.matches.append((match.match_id, match.seat))


def test_seats_rotate_and_instances_persist_across_matches() -> None:
    made: list[Counted] = []

    def make() -> Counted:
        made.append(Counted())
        return made[-1]

    make.__name__ = "Counted"
    result = play([make, GreedyBot], seats=4, matches=4, rules=SHORT, seed=5)
    assert len(made) == 2  # one instance per seat it fills, made once for the whole run
    seats = sorted(seat for bot in made for _, seat in bot.matches)
    assert seats == [0, 0, 1, 1, 2, 2, 3, 3]  # each instance moved round the table, one seat a match
    assert [m.bots[0] for m in result.matches] == ["Counted#1", "GreedyBot#1", "Counted#2", "GreedyBot#2"]


class Recorder(Bot):
    """Records every callback as (name, match_id, value) and plays greedily."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, object]] = []
        self.greedy = GreedyBot()

    def on_match_start(self, match: MatchInfo) -> None:
        self.calls.append(("on_match_start", match.match_id, match))

    def on_events(self, match_id: str, events: Sequence[Event]) -> None:
        self.calls.append(("on_events", match_id, list(events)))

    def decide(self, observation: View) -> Action:
        self.calls.append(("decide", observation.match_id, observation))
        return self.greedy.decide(observation)

    def on_hand_end(self, result: HandResult) -> None:
        self.calls.append(("on_hand_end", result.match_id, result))

    def on_match_end(self, result: MatchResult) -> None:
        self.calls.append(("on_match_end", result.match_id, result))

    def on_fault(self, fault: Fault) -> None:
        self.calls.append(("on_fault", fault.match_id, fault))


def test_callbacks_come_as_from_the_server_in_order() -> None:
    made: list[Recorder] = []

    def make() -> Recorder:
        made.append(Recorder())
        return made[-1]

    result = play({"recorder": make}, seats=3, matches=2, rules=SHORT, seed=9)
    assert len(made) == 3
    for outcome in result.matches:
        log = replay_match(outcome.config, outcome.seed, outcome.result.actions).events
        for seat, name in enumerate(outcome.bots):
            bot = made[int(name.rpartition("#")[2]) - 1]
            calls = [c for c in bot.calls if c[1] == outcome.match_id]
            names = [c[0] for c in calls]
            assert names[0] == "on_match_start" and names[1] == "on_events" and names[-1] == "on_match_end"
            info = calls[0][2]
            assert isinstance(info, MatchInfo) and info.seat == seat and info.bots == outcome.bots
            # every event of the log, once, in order, as this seat may see it
            told = [e for name_, _, events in calls if name_ == "on_events" for e in events]  # type: ignore[attr-defined]
            assert told == [seen_by(e, seat) for e in log]
            # a decision is asked after the events before it; a hand's result after its hand_ended event
            hands_seen = 0
            for index, (call, _, value) in enumerate(calls):
                if call == "on_hand_end":
                    assert isinstance(value, HandResult)
                    assert value.totals == tuple(
                        map(
                            sum, zip(*[h.points for h in outcome.result.hands[: hands_seen + 1]], strict=True)
                        )
                    )
                    hands_seen += 1
                    before = [e for c in calls[:index] if c[0] == "on_events" for e in c[2]]  # type: ignore[attr-defined]
                    assert sum(1 for e in before if e.kind is EventKind.HAND_ENDED) == hands_seen
                if call == "decide":
                    assert isinstance(value, View) and value.seat == seat
            assert hands_seen == len(outcome.result.hands)
            end = calls[-1][2]
            assert (
                isinstance(end, MatchResult)
                and end.totals == outcome.totals
                and end.winners == outcome.winners
            )
            assert "on_fault" not in names


def test_the_arena_asks_what_the_server_asks() -> None:
    """Every decision, one legal action or not, unless every seat can tell it is the only one (the swap
    after a 7 at two seats: `must_ask`); that one too with `ask_single`. A drawn card that does not
    play is asked (KEEP alone), as on the server (RULINGS 29)."""
    official = play([GreedyBot, GreedyBot], seats=2, matches=2, rules=SHORT, seed=4)
    assert official.decisions == official.actions
    seven_zero = RulesConfig(target_score=150, seven_zero=True)
    default = play([GreedyBot, GreedyBot], seats=2, matches=2, rules=seven_zero, seed=4)
    asked = play([GreedyBot, GreedyBot], seats=2, matches=2, rules=seven_zero, seed=4, ask_single=True)
    public = 0
    for outcome in default.matches:
        match = new_match(outcome.config, random.Random(outcome.seed))
        for action in outcome.result.actions:
            public += not must_ask(match, legal_actions(match))
            apply(match, action)
    assert public > 0 and default.decisions == default.actions - public
    assert asked.decisions == asked.actions
    assert [m.totals for m in asked.matches] == [m.totals for m in default.matches]  # the same play


class Faulty(GreedyBot):
    """Raises on every third decision, returns something illegal on every fifth."""

    def __init__(self) -> None:
        self.asked = 0
        self.faults: list[Fault] = []
        self.hook_calls = 0

    def decide(self, observation: View) -> Action:
        self.asked += 1
        if self.asked % 3 == 0:
            raise ZeroDivisionError("division by zero")
        if self.asked % 5 == 0:
            return "draw"  # type: ignore[return-value]
        return super().decide(observation)

    def on_hand_end(self, result: HandResult) -> None:
        self.hook_calls += 1
        raise RuntimeError("a bug in on_hand_end")

    def on_fault(self, fault: Fault) -> None:
        self.faults.append(fault)


def test_a_faulty_bot_gets_the_safe_default_a_fault_and_its_errors_are_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    instances: list[Faulty] = []

    def make() -> Faulty:
        instances.append(Faulty())
        return instances[-1]

    make.__name__ = "Faulty"
    with caplog.at_level(logging.DEBUG, logger="uno_arena.sdk.arena"):
        result = play([make, GreedyBot], seats=2, matches=3, rules=SHORT, seed=2)
    faulty = instances[0]
    raised = faulty.asked // 3
    illegal = faulty.asked // 5 - faulty.asked // 15  # the 15th raised first
    stats = result.stats("Faulty")
    assert stats.decisions == faulty.asked
    assert stats.exceptions == raised + illegal + faulty.hook_calls
    assert stats.timeouts == 0 and result.stats("GreedyBot").exceptions == 0
    assert [f.kind for f in faulty.faults] == [FaultKind.BOT_ERROR] * (raised + illegal)
    assert [f for m in result.matches for f in m.faults] == faulty.faults
    first = faulty.faults[0]
    assert first.detail.startswith("decide() raised ZeroDivisionError: division by zero (test_arena.py:")
    assert first.strikes == 0 and not first.forfeited and first.applied is not None
    assert any(f.detail.startswith("decide() returned 'draw'") for f in faulty.faults)
    messages = [r.getMessage() for r in caplog.records]
    assert any("ZeroDivisionError: division by zero (test_arena.py:" in m and "\n" not in m for m in messages)
    assert any(
        "on_hand_end() raised RuntimeError: a bug in on_hand_end (test_arena.py:" in m for m in messages
    )
    assert any("further errors are counted" in m for m in messages)  # not one line per error at WARNING


class Stuck(GreedyBot):
    """Its first decision of each match waits until released: past any deadline."""

    release = threading.Event()

    def __init__(self) -> None:
        self.started: set[str] = set()
        self.faults: list[Fault] = []

    def decide(self, observation: View) -> Action:
        if observation.match_id not in self.started:
            self.started.add(observation.match_id)
            assert self.release.wait(30)
        return super().decide(observation)

    def on_fault(self, fault: Fault) -> None:
        self.faults.append(fault)


class StuckAsync(Bot):
    """An async bot whose first decision of each match never finishes by itself."""

    def __init__(self) -> None:
        self.started: set[str] = set()
        self.greedy = GreedyBot()

    async def decide(self, observation: View) -> Action:
        if observation.match_id not in self.started:
            self.started.add(observation.match_id)
            await asyncio.Event().wait()
        await asyncio.sleep(0)
        return self.greedy.decide(observation)


def test_with_a_deadline_a_slow_decision_is_abandoned_and_counted() -> None:
    try:
        result = play([Stuck, StuckAsync, GreedyBot], seats=3, matches=2, rules=SHORT, seed=8, deadline=1.0)
    finally:
        Stuck.release.set()
    assert result.stats("Stuck").timeouts == result.stats("StuckAsync").timeouts == 2
    assert result.stats("GreedyBot").timeouts == 0
    faults = [f for m in result.matches for f in m.faults]
    assert sorted(f.kind for f in faults) == [FaultKind.TIMEOUT] * 4
    assert all(f.detail == "no answer within 1 s" and f.strikes == 1 for f in faults)
    for outcome in result.matches:  # every match ran to its end
        assert max(outcome.totals) >= SHORT.target_score


def test_without_a_deadline_async_bots_play_and_the_bots_are_told_a_decision_timeout() -> None:
    class Async(GreedyBot):
        timeouts: ClassVar[list[float]] = []

        def on_match_start(self, match: MatchInfo) -> None:
            self.timeouts.append(match.decision_timeout)

        async def decide(self, observation: View) -> Action:  # type: ignore[override]
            await asyncio.sleep(0)
            return super().decide(observation)

    result = play([Async, RandomBot], seats=2, matches=2, rules=SHORT, seed=6)
    check_tallies(result, 2)
    timed = play([Async, RandomBot], seats=2, matches=1, rules=SHORT, seed=6, deadline=0.75)
    assert timed.stats("Async").timeouts == 0
    assert Async.timeouts == [1.0, 1.0, 0.75]


def test_the_same_seed_plays_the_same_matches() -> None:
    first, again = (play([StrongBot, GreedyBot], seats=3, matches=3, rules=SHORT, seed=21) for _ in range(2))
    assert [m.result for m in first.matches] == [m.result for m in again.matches]
    assert [(b.wins, b.decisions, b.points_per_match) for b in first.bots] == [
        (b.wins, b.decisions, b.points_per_match) for b in again.bots
    ]
    other = play([StrongBot, GreedyBot], seats=3, matches=3, rules=SHORT, seed=22)
    assert [m.result.actions for m in other.matches] != [m.result.actions for m in first.matches]
    assert [m.seed for m in first.matches] == [21, 22, 23]


def test_each_match_replays_through_the_rules_core_to_the_same_result() -> None:
    seen: list[MatchOutcome] = []
    result = play([StrongBot, RandomBot], seats=4, matches=3, rules=SHORT, seed=31, on_match=seen.append,
                  keep_matches=False)  # fmt: skip
    assert result.matches == () and len(seen) == 3
    for outcome in seen:
        match = replay_match(outcome.config, outcome.seed, outcome.result.actions)
        assert match.result is not None
        assert match.result.totals == outcome.totals and match.result.winners == outcome.winners


def test_what_the_arena_cannot_play_is_a_clear_error() -> None:
    with pytest.raises(ArenaError, match="seats: must be 2 to 10, got 11"):
        play([GreedyBot], seats=11)
    with pytest.raises(ArenaError, match="3 bots for 2 seats"):
        play([GreedyBot, RandomBot, StrongBot], seats=2)
    with pytest.raises(ArenaError, match="rules: hand_size: 15 cannot be dealt to 10 players"):
        play([GreedyBot], seats=10, rules=RulesConfig(hand_size=15))
    with pytest.raises(ArenaError, match="no bots"):
        play([], seats=2)
    with pytest.raises(ArenaError, match="deadline: must be > 0"):
        play([GreedyBot], seats=2, deadline=0)
    with pytest.raises(ArenaError, match=re.escape("its factory made str, not a uno_arena.sdk.Bot")):
        play({"text": lambda: "not a bot"}, seats=2)  # type: ignore[dict-item,return-value]


def test_bot_names_given_twice_get_their_own_rows() -> None:
    result = play([GreedyBot, GreedyBot], seats=2, matches=2, rules=SHORT, seed=1)
    assert [b.name for b in result.bots] == ["GreedyBot", "GreedyBot-2"]
    assert result.matches[0].bots == ("GreedyBot", "GreedyBot-2")


class StackRecorder(GreedyBot):
    """Greedy, noting each penalty decision (phase, penalty, what it chose): stacking is visible to bots."""

    answers: ClassVar[list[tuple[str, int, str, bool]]] = []

    def decide(self, observation: View) -> Action:
        action = super().decide(observation)
        if observation.phase in ("stack", "challenge"):
            could_stack = bool(observation.legal.plays())
            self.answers.append((observation.phase, observation.penalty, action.kind.value, could_stack))
        return action


def test_the_example_bots_play_stacking_matches_and_stack_to_pass_a_penalty_on() -> None:
    StackRecorder.answers.clear()
    rules = RulesConfig(players=4, stacking=True, target_score=150)
    seen: list[MatchOutcome] = []
    lineup = [StackRecorder, StrongBot, RandomBot, StackRecorder]
    result = play(lineup, seats=4, matches=8, rules=rules, seed=41, on_match=seen.append)
    check_tallies(result, 8)
    answers = StackRecorder.answers
    assert ("stack", 2, "play", True) in answers  # it stacked a Draw Two on a Draw Two
    assert any(penalty > (2 if phase == "stack" else 4) for phase, penalty, _, _ in answers)  # stacked
    assert any(phase == "challenge" and kind == "play" for phase, _, kind, _ in answers)  # a Wild Draw Four
    assert all((kind == "play") == could for _, _, kind, could in answers)  # never drew when it could stack
    for outcome in seen:  # the stacking plays are what the rules core replays
        assert outcome.config.stacking
        match = replay_match(outcome.config, outcome.seed, outcome.result.actions)
        assert match.result is not None and match.result.totals == outcome.totals


HOUSE = RulesConfig(target_score=150, stacking=True, jump_in=True, seven_zero=True, multi_play=True)


@pytest.mark.slow  # 360 matches for the statistics; the example bots' house-rule decisions are checked below
def test_with_every_house_rule_on_strong_beats_greedy_beats_random() -> None:
    strong = play([StrongBot, GreedyBot], seats=2, matches=300, rules=HOUSE, seed=16, keep_matches=False)
    assert strong.stats("StrongBot").win_low > 0.5
    greedy = play([GreedyBot, RandomBot], seats=2, matches=60, rules=HOUSE, seed=16, keep_matches=False)
    assert greedy.stats("GreedyBot").win_low > 0.5


class HouseRecorder(GreedyBot):
    """Greedy, noting each house-rule decision: (phase, what it chose, whether it could play, and
    for a swap the size of the hand taken against the smallest other one)."""

    answers: ClassVar[list[tuple[str, str, bool, tuple[int, int]]]] = []

    def decide(self, observation: View) -> Action:
        action = super().decide(observation)
        if observation.phase in ("jump_in", "lay", "swap"):
            sizes = observation.hand_sizes
            smallest = min(n for seat, n in enumerate(sizes) if seat != observation.seat)
            taken = (sizes[action.seat] if action.seat is not None else 0, smallest)
            could_play = bool(observation.legal.plays())
            self.answers.append((observation.phase, action.kind.value, could_play, taken))
        return action


def test_the_example_bots_play_every_new_decision_of_the_house_rules() -> None:
    HouseRecorder.answers.clear()
    rules = RulesConfig(players=4, target_score=150, stacking=True, jump_in=True, seven_zero=True,
                        multi_play=True)  # fmt: skip
    seen: list[MatchOutcome] = []
    lineup = [HouseRecorder, StrongBot, RandomBot, HouseRecorder]
    result = play(lineup, seats=4, matches=6, rules=rules, seed=26, on_match=seen.append)
    check_tallies(result, 6)
    answers = HouseRecorder.answers
    assert {phase for phase, *_ in answers} == {"jump_in", "lay", "swap"}  # asked each
    assert any(a[:2] == ("jump_in", "play") for a in answers)  # it jumped in
    assert any(a[:2] == ("lay", "play") for a in answers)  # it laid a second card
    for phase, kind, could_play, (taken, smallest) in answers:
        if phase == "swap":
            assert taken == smallest  # the smallest hand
        else:  # jumped in, or laid more, whenever it could
            assert (kind == "play") == could_play
    happened: set[str] = set()
    for outcome in seen:  # the house rules' plays are what the rules core replays
        match = replay_match(outcome.config, outcome.seed, outcome.result.actions)
        assert match.result is not None and match.result.totals == outcome.totals
        happened |= {type(e).__name__ for e in match.events}
        happened |= {"jump_in" for e in match.events if getattr(e, "jump_in", False)}
    assert {"Swapped", "HandsPassed", "Received", "jump_in"} <= happened
