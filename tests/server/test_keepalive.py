"""The server's keepalive on the bot stream (issue 30). A bot behind a link that stops carrying bytes (a
blackholed route: nothing is delivered either way, nothing is reset) is disconnected within the documented
bound, so its seat waits out the disconnect grace instead of timing out three times and forfeiting, and no
match is started with it while it is away. A real server, real SDK bots, and between one of them and the
server a TCP proxy that holds every byte (tests/linkproxy.py)."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from dataclasses import replace

import grpc
import pytest

from tests.conftest import RunningServer
from tests.linkproxy import LinkProxy
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import TestBot, control, eager
from tests.server.test_faults import match_with
from tests.test_bot_stop import finished_of
from tests.workers.harness import wait_until
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.server.gateway import BotConnection, Gateway
from uno_arena.server.settings import ServerSettings
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb

KEEPALIVE_MS = 2_000  # the server's default (docs/protocol.md, "Keepalive and the decision clock")
BOUND_S = 2 * KEEPALIVE_MS / 1000  # documented: a bot whose link goes silent is disconnected within this
SLACK_S = 1.0  # a loaded machine's timers


class SlowGreedyBot(GreedyBot):
    """Greedy, 10 ms a decision, so that a match lasts a few seconds."""

    def decide(self, observation: Observation) -> Action:
        time.sleep(0.01)
        return super().decide(observation)


class HoldsItsLink(SlowGreedyBot):
    """At its `hold_at`-th decision, its link starts holding every byte before it answers: the answer,
    and everything after, goes nowhere."""

    def __init__(self, link: LinkProxy, hold_at: int) -> None:
        self.link, self.hold_at = link, hold_at
        self.decided = 0
        self.held_at: float | None = None

    def decide(self, observation: Observation) -> Action:
        self.decided += 1
        if self.decided == self.hold_at:
            self.link.hold()
            self.held_at = time.monotonic()
        return super().decide(observation)


def connected(server: RunningServer, name: str) -> bool:
    """The server's own view (the gateway's), which decides whether a match may start with the bot."""
    connection = server.arena.gateway.connection(name)
    return connection is not None and not connection.closed


@pytest.mark.settings(keepalive_ms=KEEPALIVE_MS)
def test_a_bot_whose_link_goes_silent_is_disconnected_within_the_keepalive_and_keeps_its_seat(
    match_server: RunningServer,
) -> None:
    link = LinkProxy(match_server.port)
    holder = HoldsItsLink(link, hold_at=10)
    held = BackgroundBot(holder, link.address, "held", match_server.register("held"))
    quick = BackgroundBot(SlowGreedyBot(), match_server.address, "quick", match_server.register("quick"))
    try:
        held.wait_connected()
        quick.wait_connected()
        stub, metadata = control(match_server.address, match_server.control_token)
        request = control_pb2.PlayMatchRequest(
            match_id="blackholed", bots=["quick", "held"], rules=pb.RulesConfig(target_score=100),
            decision_timeout_ms=1000, max_strikes=3, disconnect_grace_ms=15_000,
        )  # fmt: skip
        progress = stub.PlayMatch(request, metadata=metadata, timeout=120)  # the call starts now
        wait_until(lambda: holder.held_at is not None, 60, "the bot's link to start holding")
        assert holder.held_at is not None
        wait_until(lambda: not connected(match_server, "held"), 30, "the server to see the bot gone")
        gone_after = time.monotonic() - holder.held_at
        assert gone_after <= BOUND_S + SLACK_S, f"disconnected {gone_after:.1f} s after its link went silent"

        # While the link holds, a match naming the bot is not started: it is not connected.
        with pytest.raises(grpc.RpcError) as refused:
            list(stub.PlayMatch(control_pb2.PlayMatchRequest(
                match_id="while-held", bots=["quick", "held"], wait_for_bots_ms=500,
            ), metadata=metadata, timeout=30))  # fmt: skip
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION, refused.value
        assert "bot 'held' is not connected" in (refused.value.details() or "")
        assert "while-held" not in match_server.arena.running
        assert "while-held" not in match_server.arena.finished

        link.release()  # the route comes back within the grace period: the bot reconnects and plays on
        finished = finished_of(progress)
        assert held.client.connections >= 2
    finally:
        held.stop()
        quick.stop()
        link.close()
    faults = [(pb.FaultKind.Name(f.kind), f.detail) for f in finished.faults if f.seat == 1]
    assert not [f for f in finished.faults if f.kind == pb.FAULT_KIND_TIMEOUT], faults
    assert {f.kind for f in finished.faults} <= {pb.FAULT_KIND_DISCONNECTED}, faults
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED and not finished.result.forfeited, faults


def test_a_live_bot_that_says_nothing_past_its_deadline_is_charged_a_timeout_not_a_disconnect(
    match_server: RunningServer,
) -> None:
    """A deadline passes with nothing at all heard from the bot since it was asked: a slow bot, or a dead
    link, which only the keepalive can tell apart, so the server waits for its verdict. The bot's next
    message shows it alive (here a Ping 1.5 s after the request, past the 1 s deadline): TIMEOUT at
    once. Nothing at all: TIMEOUT once the keepalive has had its time (`dead_link_s` past the deadline)
    and the bot's stream still stands. Neither is a disconnect."""
    asked_at: list[float] = []
    box: list[TestBot] = []
    fallback = eager(random.Random(5))

    def silent_twice(request: bot_pb2.DecisionRequest) -> int | None:
        asked_at.append(time.monotonic())
        if len(asked_at) == 3:
            threading.Timer(1.5, box[0].ping).start()  # alive, late
            return None
        if len(asked_at) == 6:
            return None  # alive, says nothing
        return fallback(request)

    finished = match_with(match_server, silent_twice, "says-nothing", box, max_strikes=5)
    box[0].close()
    dead_link_s = replace(ServerSettings(), keepalive_ms=1000).dead_link_s  # the fixture's keepalive
    timeouts = [(pb.FAULT_KIND_TIMEOUT, 1), (pb.FAULT_KIND_TIMEOUT, 2)]
    assert [(f.kind, f.strikes) for f in finished.faults] == timeouts, finished.faults
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    pinged = asked_at[3] - asked_at[2]  # the next request came once the Ping was read
    assert 1.4 <= pinged < 1 + dead_link_s - 0.5, pinged
    silent = asked_at[6] - asked_at[5]  # ... once the keepalive's time was up
    assert silent >= 1 + dead_link_s - 0.1, silent


def test_no_match_takes_a_bot_while_a_decision_of_it_waits_for_the_keepalive() -> None:
    """The gateway's notion of a bot that may start a match: connected, and not silent past a deadline.
    A match waiting for it goes ahead as soon as the bot is heard from again (`Gateway.wake`)."""

    async def scenario() -> None:
        gateway = Gateway()
        bot = BotConnection(name="quiet", max_matches=4, ask_single=False)
        await gateway.attach(bot)
        bot.holding = 1  # as `MatchHost._hold` leaves it
        with pytest.raises(TimeoutError, match="bot 'quiet' is not answering"):
            await gateway.reserve(["quiet"], 0.1)
        waiting = asyncio.create_task(gateway.reserve(["quiet"], 10))
        await asyncio.sleep(0)  # it waits
        assert not waiting.done()
        bot.holding = 0  # heard from: the decision timed out, the bot is alive
        gateway.wake()
        await asyncio.wait_for(waiting, 5)
        assert gateway.active_matches("quiet") == 1

    asyncio.run(scenario())
