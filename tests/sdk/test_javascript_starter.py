"""The JavaScript starter kit (sdk/javascript/bot.js) as a real `node` process against a real server.

The first of them installs the kit's packages (`npm ci`, tests/provision.py); they skip, saying why,
only where Node.js or the npm registry is missing, and fail then under CI, so CI cannot pass without
the kit having played.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import RunningServer, free_port, start_server, stop_server
from tests.provision import javascript_starter
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import control, play_match
from tests.tls import Certificates, certificates
from uno_arena.records import identity
from uno_arena.sdk import Action, ClientTLS, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.server import arena
from uno_arena.server.settings import ServerTLS
from uno_arena.v1 import channels, control_pb2, control_pb2_grpc
from uno_arena.v1 import game_pb2 as pb

NODE = shutil.which("node")
__all__ = ["certificates"]  # a fixture, used by name


@pytest.fixture(scope="module")
def bot_js() -> Path:
    return javascript_starter() / "bot.js"


class NodeBot:
    """`node bot.js` in its own process, its token from the environment; a thread collects its output."""

    def __init__(self, bot_js: Path, server: str, name: str, token: str, *options: str,
                 environment: dict[str, str] | None = None) -> None:  # fmt: skip
        assert NODE is not None
        env = {**os.environ, "UNO_ARENA_BOT_TOKEN": token, **(environment or {})}
        command = [NODE, str(bot_js), "--server", server, "--name", name, *options]
        self.process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        self.closed = False  # node's output has ended (it exited)
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, name=f"node {name}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self.closed = True
            self._changed.notify_all()

    @property
    def output(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def wait_for_line(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """The first output line matching `pattern`, waiting for it (fails if node exits first)."""
        found: list[re.Match[str]] = []

        def seen() -> bool:
            found[:] = [m for line in self.lines if (m := re.search(pattern, line))][:1]
            return bool(found) or self.closed

        with self._changed:
            self._changed.wait_for(seen, timeout)
        assert found, f"no line matching {pattern!r}; node said:\n{self.output}"
        return found[0]

    def wait(self, timeout: float = 30) -> int:
        code = self.process.wait(timeout)
        self._reader.join(timeout)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.wait()


@pytest.fixture
def node_bots() -> Iterator[list[NodeBot]]:
    """Node processes a test starts; killed at its end if still running."""
    started: list[NodeBot] = []
    yield started
    for bot in started:
        bot.kill()


def test_the_javascript_bot_plays_a_match_against_an_sdk_bot(
    match_server: RunningServer, bot_js: Path, node_bots: list[NodeBot]
) -> None:
    js = NodeBot(bot_js, match_server.address, "js-starter", match_server.register("js-starter"))
    node_bots.append(js)
    greedy = BackgroundBot(GreedyBot(), match_server.address, "greedy", match_server.register("greedy"))
    greedy.wait_connected()
    js.wait_for_line(r"connected to .* as js-starter")
    request = control_pb2.PlayMatchRequest(
        match_id="js-match", bots=["js-starter", "greedy"], seed=15, rules=pb.RulesConfig(target_score=150)
    )
    progress = play_match(match_server.address, match_server.control_token, request)
    finished = progress[-1].finished
    result = finished.result
    assert result.reason == pb.MATCH_END_TARGET_REACHED
    assert list(result.bots) == ["js-starter", "greedy"]
    assert result.faults[0] == 0 and not result.forfeited
    assert not [fault for fault in finished.faults if fault.seat == 0]
    log = [event for p in progress if p.HasField("log") for event in p.log.events]
    assert any(e.HasField("played") and e.played.seat == 0 for e in log)  # it played cards, not only drew
    js.wait_for_line(r"match js-match started: seat 0 of js-starter, greedy, to 150")
    ended = js.wait_for_line(r"match js-match finished: (\S+), won by (.*), totals (\S+), our faults (\d+)")
    winners = ", ".join(result.bots[seat] for seat in result.winners)
    totals = "-".join(str(total) for total in result.totals)
    assert ended.groups() == ("MATCH_END_TARGET_REACHED", winners, totals, "0")
    greedy.stop()


def test_the_javascript_bot_plays_the_house_rules_decisions_without_a_fault(
    match_server: RunningServer, bot_js: Path, node_bots: list[NodeBot]
) -> None:
    js = NodeBot(bot_js, match_server.address, "js-house", match_server.register("js-house"))
    node_bots.append(js)
    token = match_server.register("greedy-house")
    greedy = BackgroundBot(GreedyBot(), match_server.address, "greedy-house", token)
    greedy.wait_connected()
    js.wait_for_line(r"connected to .* as js-house")
    rules = pb.RulesConfig(target_score=150, stacking=True, jump_in=True, seven_zero=True, multi_play=True)
    request = control_pb2.PlayMatchRequest(match_id="js-house", bots=["js-house", "greedy-house"], seed=16,
                                           rules=rules)  # fmt: skip
    progress = play_match(match_server.address, match_server.control_token, request)
    finished = progress[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert not [fault for fault in finished.faults if fault.seat == 0]
    log = [event for p in progress if p.HasField("log") for event in p.log.events]
    assert any(e.HasField("swapped") and e.swapped.seat == 0 for e in log)  # it answered a swap
    players = [e.played.seat if e.HasField("played") else None for e in log]
    assert (0, 0) in itertools.pairwise(players)  # two plays of its in a row: it laid a second card
    assert any(e.HasField("played") and e.played.seat == 0 and e.played.jump_in for e in log)  # it jumped in
    greedy.stop()


class GatedGreedy(GreedyBot):
    """Greedy, but each decision first waits for `open`: the test holds the match still while it drains."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()

    def decide(self, observation: Observation) -> Action:
        assert self.open.wait(30)
        return super().decide(observation)


def drain_mid_match(
    server: RunningServer, bot_js: Path, node_bots: list[NodeBot], disconnect_grace_ms: int | None = None
) -> tuple[NodeBot, GatedGreedy, BackgroundBot, Iterator[control_pb2.MatchProgress]]:
    """Node plays seat 0 of a match against a gated Greedy; after a hand, SIGINT, and the server's Draining.

    The opponent is held (the gate closed) from before the signal, so the match is still running when the
    server answers; the caller opens the gate.
    """
    js = NodeBot(bot_js, server.address, "js-drains", server.register("js-drains"))
    node_bots.append(js)
    gated = GatedGreedy()
    opponent = BackgroundBot(gated, server.address, "gated", server.register("gated"))
    opponent.wait_connected()
    js.wait_for_line(r"connected to .* as js-drains")
    stub, metadata = control(server.address, server.control_token)
    request = control_pb2.PlayMatchRequest(
        match_id="js-drain", bots=["js-drains", "gated"], seed=3, decision_timeout_ms=10_000
    )
    if disconnect_grace_ms is not None:
        request.disconnect_grace_ms = disconnect_grace_ms
    progress = stub.PlayMatch(request, metadata=metadata, timeout=120)
    for message in progress:
        if message.HasField("hand"):  # a hand has been played: the match is under way
            break
    gated.open.clear()
    js.process.send_signal(signal.SIGINT)
    js.wait_for_line(r"draining: finishing 1 running match \(Ctrl-C again to stop now\)")
    js.wait_for_line(r"the server starts no new match; 1 still running")
    return js, gated, opponent, progress


def test_ctrl_c_on_the_javascript_bot_finishes_its_match_and_exits_0(
    match_server: RunningServer, bot_js: Path, node_bots: list[NodeBot]
) -> None:
    js, gated, opponent, progress = drain_mid_match(match_server, bot_js, node_bots)
    gated.open.set()
    finished = [m for m in progress if m.HasField("finished")][-1].finished
    assert js.wait() == 0, js.output
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    assert not finished.result.forfeited
    assert finished.result.faults[0] == 0
    assert js.lines[-1].endswith("every match finished: stopping")
    opponent.stop()


def test_a_second_ctrl_c_stops_the_javascript_bot_at_once_and_forfeits(
    match_server: RunningServer, bot_js: Path, node_bots: list[NodeBot]
) -> None:
    js, gated, opponent, progress = drain_mid_match(match_server, bot_js, node_bots, disconnect_grace_ms=0)
    js.process.send_signal(signal.SIGINT)
    assert js.wait() == 1, js.output
    assert js.lines[-1].endswith("stopping now: 1 running match will be forfeited")
    gated.open.set()
    finished = [m for m in progress if m.HasField("finished")][-1].finished
    assert finished.result.reason == pb.MATCH_END_FORFEIT
    assert list(finished.result.forfeited) == [0]
    opponent.stop()


def test_the_javascript_bot_reconnects_until_the_server_is_up_and_stops_on_sigterm(
    redis_prefix: tuple[redis.Redis, str], bot_js: Path, node_bots: list[NodeBot]
) -> None:
    client, prefix = redis_prefix
    address = f"127.0.0.1:{free_port()}"  # nothing listens there yet
    js = NodeBot(bot_js, address, "js-patient", identity.register_bot(client, prefix, "js-patient"))
    node_bots.append(js)
    js.wait_for_line(r"connection ended \(UNAVAILABLE: ")
    js.wait_for_line(r"reconnecting in \d\.\d s")
    server, thread = start_server(client, prefix, address, keepalive_ms=1000)
    try:
        js.wait_for_line(r"connected to .* as js-patient")
        js.process.send_signal(signal.SIGTERM)  # no match running: it stops at once, cleanly
        assert js.wait() == 0, js.output
    finally:
        stop_server(server, thread)
    assert "draining: finishing 0 running matches" in js.output


def test_the_javascript_bot_stops_when_its_token_is_refused(
    match_server: RunningServer, bot_js: Path, node_bots: list[NodeBot]
) -> None:
    match_server.register("js-refused")
    js = NodeBot(bot_js, match_server.address, "js-refused", "not-the-token")
    node_bots.append(js)
    assert js.wait() == 1
    assert js.lines[-1] == (
        "error: the server refused the bot's name or token: UNAUTHENTICATED unknown bot name or wrong token"
    )


def test_the_javascript_bot_stops_when_another_copy_replaces_it(
    match_server: RunningServer, bot_js: Path, node_bots: list[NodeBot]
) -> None:
    token = match_server.register("js-copied")
    js = NodeBot(bot_js, match_server.address, "js-copied", token)
    node_bots.append(js)
    js.wait_for_line(r"connected to .* as js-copied")
    copy = BackgroundBot(GreedyBot(), match_server.address, "js-copied", token)
    copy.wait_connected()
    assert js.wait() == 1, js.output
    assert js.lines[-1].startswith("error: another copy of bot js-copied connected; this one stops: ABORTED ")
    copy.stop()


@pytest.mark.settings(token_check_ms=100)
def test_the_javascript_bot_stops_when_its_token_is_revoked_knowing_why_from_the_reason(
    match_server: RunningServer, bot_js: Path, node_bots: list[NodeBot], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status message is for people: the bot reads CLOSE_REASON_TOKEN_REVOKED beside it (by the
    status code alone, UNAUTHENTICATED, it would say its token was refused)."""
    monkeypatch.setattr(arena, "TOKEN_REVOKED", "your key no longer opens this door")
    js = NodeBot(bot_js, match_server.address, "js-revoked", match_server.register("js-revoked"))
    node_bots.append(js)
    js.wait_for_line(r"connected to .* as js-revoked")
    identity.revoke_bot(match_server.redis, match_server.prefix, "js-revoked")
    assert js.wait() == 1, js.output
    assert js.lines[-1] == (
        "error: the bot's token was replaced or revoked: UNAUTHENTICATED your key no longer opens this door"
    )


def test_the_javascript_bot_plays_over_tls_with_a_private_ca(
    redis_prefix: tuple[redis.Redis, str], certificates: Certificates, bot_js: Path, node_bots: list[NodeBot]
) -> None:
    tls = ServerTLS(str(certificates.cert_file), str(certificates.key_file))
    server, thread = start_server(*redis_prefix, tls=tls, keepalive_ms=1000)
    trusted = ClientTLS(ca_file=str(certificates.ca_file))
    try:  # the CA from the environment, as UNO_ARENA_TLS_CA, and from the option
        js = NodeBot(bot_js, server.address, "js-tls", server.register("js-tls"),
                     environment={"UNO_ARENA_TLS_CA": str(certificates.ca_file)})  # fmt: skip
        node_bots.append(js)
        js_opt = NodeBot(bot_js, server.address, "js-tls-2", server.register("js-tls-2"), "--tls-ca",
                         str(certificates.ca_file))  # fmt: skip
        node_bots.append(js_opt)
        js.wait_for_line(r"connected to .* as js-tls,")
        js_opt.wait_for_line(r"connected to .* as js-tls-2,")
        request = control_pb2.PlayMatchRequest(match_id="js-tls", bots=["js-tls", "js-tls-2"], seed=5,
                                               rules=pb.RulesConfig(target_score=100))  # fmt: skip
        metadata = [("authorization", f"Bearer {server.control_token}")]
        with channels.channel(server.address, trusted) as channel:
            progress = list(control_pb2_grpc.ControlServiceStub(channel).PlayMatch(request, metadata=metadata,
                                                                                   timeout=120))  # fmt: skip
        result = progress[-1].finished.result
        assert result.reason == pb.MATCH_END_TARGET_REACHED and not result.forfeited
        assert list(result.faults) == [0, 0]
        js.wait_for_line(r"match js-tls finished: MATCH_END_TARGET_REACHED")
    finally:
        stop_server(server, thread)


def test_the_javascript_bot_refuses_to_send_its_token_in_clear_off_this_machine(
    bot_js: Path, node_bots: list[NodeBot]
) -> None:
    js = NodeBot(bot_js, "192.0.2.1:50051", "js-far", "secret-token")  # never routed: nothing could answer
    node_bots.append(js)
    assert js.wait() == 1
    refusal = "error: refusing to send the token in clear to 192.0.2.1:50051, which is not on this machine"
    assert js.lines[-1].startswith(f"{refusal}: connect with TLS (--tls, or --tls-ca FILE")
    assert not any("connect" in line and "ended" in line for line in js.lines)  # it never tried
