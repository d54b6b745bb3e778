"""A bot behind a slow link gets its safe default in on time: the margin follows the measured round trip.

A real match server, a real SDK client, and between them an in-process TCP proxy on loopback that
holds every chunk for a fixed time each way (tests/linkproxy.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from tests.conftest import RunningServer
from tests.linkproxy import LinkProxy
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import control
from tests.test_bot_stop import finished_of
from uno_arena.sdk import Action, Fault, FaultKind, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb

# seconds each way: a 0.5 s round trip, more than the old fixed 0.15 s margin. The measured margin is
# then capped at three quarters of the deadline (0.75 s), which leaves its answers 0.25 s to spare: a
# loaded machine's stalls fit in it (a 0.12 s link and a 0.5 s deadline left 0.05-0.13 s, and failed)
ONE_WAY = 0.25
DEADLINE_MS = 1000


@pytest.fixture
def slow_link(match_server: RunningServer) -> Iterator[LinkProxy]:
    proxy = LinkProxy(match_server.port, delay=ONE_WAY)
    yield proxy
    proxy.close()


class Thinker(GreedyBot):
    """Thinks longer than any deadline: every decision is the SDK's safe default."""

    def __init__(self) -> None:
        self.asked = 0
        self.faults: list[Fault] = []

    def on_fault(self, fault: Fault) -> None:
        self.faults.append(fault)

    async def decide(self, observation: Observation) -> Action:
        self.asked += 1
        await asyncio.sleep(30)  # abandoned by the SDK at its budget (nothing waits for it)
        return observation.legal.safe_default()


@pytest.mark.parametrize("probing", [True, False], ids=["measured-margin", "fixed-margin"])
def test_a_slow_bot_on_a_slow_link_answers_its_safe_default_in_time(
    match_server: RunningServer, slow_link: LinkProxy, probing: bool
) -> None:
    """Measured: every default arrives in time, no TIMEOUT. Fixed 0.15 s (probing off, the old
    behaviour): each default leaves 0.85 s after its request arrived and reaches the server at about
    1.35 s of a 1 s deadline: TIMEOUT, until three strikes forfeit the seat."""
    thinker = Thinker()
    settings = {"rtt_probe_s": 1.0 if probing else 0.0}
    slow = BackgroundBot(
        thinker, f"127.0.0.1:{slow_link.port}", "slow", match_server.register("slow"), **settings
    )
    quick = BackgroundBot(GreedyBot(), match_server.address, "quick", match_server.register("quick"))
    try:
        slow.wait_connected()
        quick.wait_connected()
        deadline = time.monotonic() + 10
        while probing and slow.client.round_trip.srtt is None:  # the first Pong is back
            assert time.monotonic() < deadline, "no round trip measured"
            time.sleep(0.01)  # polls a condition with a deadline
        if probing:
            assert slow.client.round_trip.srtt is not None and slow.client.round_trip.srtt >= 2 * ONE_WAY
        stub, metadata = control(match_server.address, match_server.control_token)
        request = control_pb2.PlayMatchRequest(
            match_id="slow-link",
            bots=["quick", "slow"],
            decision_timeout_ms=DEADLINE_MS,
            disconnect_grace_ms=200,
        )
        progress = stub.PlayMatch(request, metadata=metadata, timeout=60)  # the call starts now
        if probing:  # three decisions answered, the fourth asked: then the seat leaves, ending the match
            deadline = time.monotonic() + 20
            while thinker.asked < 4:
                assert not [f for f in thinker.faults if f.kind is FaultKind.TIMEOUT], thinker.faults
                assert not slow.finished.is_set() and time.monotonic() < deadline, thinker.asked
                time.sleep(0.01)  # polls a condition with a deadline
            slow.stop()  # the seat forfeits after the disconnect grace
        finished = finished_of(progress)
    finally:
        slow.stop()
        quick.stop()
    timeouts = [f for f in finished.faults if f.seat == 1 and f.kind == pb.FAULT_KIND_TIMEOUT]
    if probing:
        assert thinker.asked >= 4 and not timeouts, [f.detail for f in finished.faults]
        assert {f.kind for f in finished.faults} <= {pb.FAULT_KIND_DISCONNECTED}
    else:
        assert len(timeouts) == 3 and list(finished.result.forfeited) == [1]
