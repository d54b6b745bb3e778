"""What the SDK does when the bot's own code fails: one log line, the safe default, a BotError to report.

Pure logic: `BotClient._choose` and `_handle` on observations and messages built from the rules core,
no server (tests/server/test_bot_errors.py has the server's side).
"""

from __future__ import annotations

import asyncio
import logging
import random

import pytest

from tests import reference_encoder
from uno_arena.rules import KEEP, RulesConfig, legal_actions, new_match
from uno_arena.sdk import Action, Bot, BotClient, Fault, FaultKind, Observation
from uno_arena.v1 import bot_pb2, codec
from uno_arena.v1 import game_pb2 as pb

CLIENT_LOG = "uno_arena.sdk.client"


def turn_observation() -> Observation:
    """A seat's first turn of a real deal, where the safe default is `draw`."""
    for seed in range(100):
        match = new_match(RulesConfig(players=2), random.Random(seed))
        legal = legal_actions(match)
        request = reference_encoder.decision_request(match, match.hand.to_move, legal, "m", "m#1", 1000, [])
        observation = codec.decision_from(request)
        if observation.legal.draw is not None:
            return observation
    raise AssertionError("no deal starts with a turn")


def choose(bot: Bot, budget: float = 5.0) -> tuple[Action, str | None]:
    client = BotClient(bot, "127.0.0.1:1", "faulty", "token")
    return asyncio.run(client._choose(turn_observation(), budget))


def divide(cards: int) -> float:
    return 10 / cards  # the bot's own helper: the error is raised here


class Dividing(Bot):
    def decide(self, observation: Observation) -> Action:
        divide(0)
        return observation.legal.safe_default()


RAISED_AT = divide.__code__.co_firstlineno + 1  # the line `return 10 / cards`


def test_a_raising_decide_is_one_line_with_type_message_and_place(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=CLIENT_LOG)
    action, failure = choose(Dividing())
    assert action.text == "draw"
    where = f"test_faults_sdk.py:{RAISED_AT} in divide"
    assert failure == f"ZeroDivisionError: division by zero ({where})"
    assert [r.getMessage() for r in caplog.records] == [
        f"decide() raised ZeroDivisionError: division by zero ({where}): answering draw"
    ]
    assert caplog.records[0].exc_info is None  # no traceback, no observation dump at INFO


def test_the_traceback_is_kept_at_debug_level(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=CLIENT_LOG)
    choose(Dividing())
    traced = [r for r in caplog.records if r.exc_info is not None]
    assert len(traced) == 1 and traced[0].levelno == logging.DEBUG
    assert isinstance(traced[0].exc_info[1], ZeroDivisionError)  # type: ignore[index]


class ChoosingFromNothing(Bot):
    def decide(self, observation: Observation) -> Action:
        return random.choice([])  # raises inside the standard library


def test_the_place_is_the_bots_own_line_not_the_library_it_called() -> None:
    line = ChoosingFromNothing.decide.__code__.co_firstlineno + 1
    _, failure = choose(ChoosingFromNothing())
    assert failure is not None and failure.startswith("IndexError: ")
    assert failure.endswith(f"(test_faults_sdk.py:{line} in decide)")


class AsyncRaising(Bot):
    async def decide(self, observation: Observation) -> Action:
        await asyncio.sleep(0)
        raise KeyError("colour")


def test_an_async_decide_that_raises_is_reported_too() -> None:
    line = AsyncRaising.decide.__code__.co_firstlineno + 2
    action, failure = choose(AsyncRaising())
    assert action.text == "draw"
    assert failure == f"KeyError: 'colour' (test_faults_sdk.py:{line} in decide)"


class OwnTimeout(Bot):
    def decide(self, observation: Observation) -> Action:
        raise TimeoutError("the bot's own opponent model timed out")


def test_a_timeout_error_raised_by_the_bot_is_its_error_not_a_missed_deadline() -> None:
    _, failure = choose(OwnTimeout())
    assert failure is not None and failure.startswith("TimeoutError: the bot's own opponent model timed out")


class Returning(Bot):
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def decide(self, observation: Observation) -> Action:
        return self.answer  # type: ignore[return-value]


def test_an_answer_that_is_not_an_action_is_one_line_with_its_repr_cut(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=CLIENT_LOG)
    action, failure = choose(Returning("x" * 5000))
    assert action.text == "draw"
    assert failure is not None and failure.startswith("decide() returned 'xxx") and "..." in failure
    assert failure.endswith(", not an Action") and len(failure) < 120
    assert [r.getMessage() for r in caplog.records] == [f"{failure}: answering draw"]


def test_an_action_that_is_not_legal_now_names_it() -> None:
    observation = turn_observation()
    draw = observation.legal.draw
    assert draw is not None
    stale = KEEP  # an action of another decision
    _, failure = choose(Returning(stale))
    assert failure == "decide() returned keep (id 121), not one of the legal actions"
    _, failure = choose(Returning(None))
    assert failure == "decide() returned None, not an Action"


class Slow(Bot):
    async def decide(self, observation: Observation) -> Action:
        await asyncio.sleep(5)  # the bot under test misses its deadline; nothing waits on this
        return observation.legal.safe_default()


def test_a_missed_deadline_is_one_line_and_not_reported(caplog: pytest.LogCaptureFixture) -> None:
    """The server counts timeouts itself: the SDK only logs them, without the observation."""
    caplog.set_level(logging.INFO, logger=CLIENT_LOG)
    action, failure = choose(Slow(), budget=0.05)
    assert (action.text, failure) == ("draw", None)
    assert [r.getMessage() for r in caplog.records] == ["decide() took longer than 0.05 s: answering draw"]


class Noticing(Bot):
    def __init__(self, raises: bool = False) -> None:
        self.faults: list[Fault] = []
        self.raises = raises

    def on_fault(self, fault: Fault) -> None:
        self.faults.append(fault)
        if self.raises:
            raise RuntimeError("a bug in on_fault")


def fault_message(kind: pb.FaultKind = pb.FAULT_KIND_BOT_ERROR) -> bot_pb2.ServerMessage:
    applied = pb.Action(id=120, kind=pb.ACTION_KIND_DRAW, text="draw")
    fault = pb.Fault(match_id="m", seat=1, kind=kind, detail="ZeroDivisionError: ...",
                     applied=applied, strikes=0)  # fmt: skip
    return bot_pb2.ServerMessage(fault=fault)


def test_a_fault_from_the_server_reaches_on_fault_and_logs_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=CLIENT_LOG)
    bot = Noticing()
    BotClient(bot, "127.0.0.1:1", "faulty", "token")._handle(fault_message(pb.FAULT_KIND_TIMEOUT))
    assert bot.faults == [Fault("m", 1, FaultKind.TIMEOUT, "ZeroDivisionError: ...", 120, 0, False)]
    line = "the server recorded a timeout fault in match m: ZeroDivisionError: ... "
    line += "(it applied draw; strikes 0)"
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(logging.WARNING, line)]


def test_the_echo_of_a_bot_error_reaches_on_fault_but_logs_only_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK logged the failure at ERROR when it happened: the server's echo adds no second line."""
    caplog.set_level(logging.DEBUG, logger=CLIENT_LOG)
    bot = Noticing()
    BotClient(bot, "127.0.0.1:1", "faulty", "token")._handle(fault_message())
    assert bot.faults == [Fault("m", 1, FaultKind.BOT_ERROR, "ZeroDivisionError: ...", 120, 0, False)]
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]


def test_a_raising_on_fault_is_logged_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    bot = Noticing(raises=True)
    BotClient(bot, "127.0.0.1:1", "faulty", "token")._handle(fault_message())
    assert len(bot.faults) == 1
    assert any("on_fault raised" in r.getMessage() for r in caplog.records)
