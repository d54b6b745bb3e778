"""The SDK against a real server on port 0: example bots, faulty bot code, restarts, Ctrl-C."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest

from sdk import Action, Bot, Observation
from sdk.examples.greedy_bot import GreedyBot
from sdk.examples.random_bot import RandomBot
from tests.conftest import RunningServer, start_server, stop_server
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import play_match
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb


def request(match_id: str, bots: list[str], **fields: object) -> control_pb2.PlayMatchRequest:
    return control_pb2.PlayMatchRequest(match_id=match_id, bots=bots, seed=11, **fields)  # type: ignore[arg-type]


def run_bots(server: RunningServer, bots: dict[str, Bot], **settings: object) -> dict[str, BackgroundBot]:
    running = {name: BackgroundBot(bot, server.address, name, server.register(name), **settings)
               for name, bot in bots.items()}  # fmt: skip
    for bot in running.values():
        bot.wait_connected()
    return running


def test_example_bots_play_full_matches(match_server: RunningServer) -> None:
    bots = run_bots(match_server, {"rand": RandomBot(1), "greedy": GreedyBot(), "greedy2": GreedyBot()})
    for match_id, seats in (("rg", ["rand", "greedy"]), ("gg", ["greedy", "greedy2"])):
        finished = play_match(match_server.address, match_server.control_token, request(match_id, seats))[
            -1
        ].finished
        assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
        assert max(finished.result.totals) >= 500
        assert not finished.faults
    for bot in bots.values():
        bot.stop()
        assert bot.error is None


class Raising(Bot):
    def decide(self, observation: Observation) -> Action:
        raise RuntimeError("a bug in the bot")


class Slow(Bot):
    def __init__(self) -> None:
        self.first = True

    def decide(self, observation: Observation) -> Action:
        if self.first:
            self.first = False
            time.sleep(1.5)  # the bot under test is slow; nothing waits on this
        return observation.legal.plays()[0] if observation.legal.plays() else observation.legal.safe_default()


@pytest.mark.parametrize("faulty", [Raising, Slow], ids=["raises", "slow"])
def test_faulty_bot_code_becomes_safe_defaults_not_faults(
    match_server: RunningServer, faulty: type[Bot]
) -> None:
    bots = run_bots(match_server, {"steady": GreedyBot(), "faulty": faulty()})
    fields = {"rules": pb.RulesConfig(target_score=100), "decision_timeout_ms": 800}
    finished = play_match(
        match_server.address, match_server.control_token, request("f", ["steady", "faulty"], **fields)
    )
    assert finished[-1].finished.result.reason in (pb.MATCH_END_TARGET_REACHED, pb.MATCH_END_MAX_HANDS)
    assert not finished[-1].finished.faults  # the SDK answered in time, every time
    for bot in bots.values():
        bot.stop()


def test_reconnects_after_a_server_restart(redis_prefix: tuple[object, str]) -> None:
    server, thread = start_server(*redis_prefix)  # type: ignore[arg-type]
    address = server.address
    tokens = {name: server.register(name) for name in ("back1", "back2")}
    bots = {name: BackgroundBot(GreedyBot(), address, name, token, backoff_initial=0.1, backoff_max=0.5)
            for name, token in tokens.items()}  # fmt: skip
    for bot in bots.values():
        bot.wait_connected(1)
    stop_server(server, thread)
    server, thread = start_server(*redis_prefix, address=address)  # type: ignore[arg-type]
    for bot in bots.values():
        bot.wait_connected(2)
    finished = play_match(address, server.control_token, request("after-restart", list(tokens)))[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    for bot in bots.values():
        bot.stop()
    stop_server(server, thread)


def test_ctrl_c_mid_match_stops_cleanly_and_the_seat_forfeits(match_server: RunningServer) -> None:
    in_match = threading.Event()

    class Noticing(GreedyBot):
        def decide(self, observation: Observation) -> Action:
            in_match.set()
            return super().decide(observation)

    bots = run_bots(match_server, {"stays": GreedyBot(), "leaves": Noticing()})
    fields = {"disconnect_grace_ms": 300, "decision_timeout_ms": 2000}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        played = pool.submit(play_match, match_server.address, match_server.control_token,
                             request("ctrl-c", ["stays", "leaves"], **fields))  # fmt: skip
        assert in_match.wait(30)
        bots["leaves"].stop()  # what Ctrl-C does
        finished = played.result(60)[-1].finished
    assert bots["leaves"].error is None
    assert finished.result.reason == pb.MATCH_END_FORFEIT
    assert list(finished.result.forfeited) == [1]
    bots["stays"].stop()
