"""Nothing a bot or a control caller sends can grow the server's memory or knock other bots off."""

from __future__ import annotations

import concurrent.futures
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from tests.conftest import RunningServer
from tests.server.botclient import SilentBot, TestBot, control, eager, play_match
from uno_arena.server.gateway import BotConnection, StrayLimiter, StrayVerdict
from uno_arena.v1 import bot_pb2, bot_pb2_grpc, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import close_reason_of

BIG = "x" * (3 * 1024 * 1024)  # 3 MB: under the 4 MiB message limit, far over any id's


def on_server(server: RunningServer, read: Callable[[], Any]) -> Any:
    """`read()` evaluated on the server's event loop (its state is only touched there)."""

    async def run() -> Any:
        return read()

    return server.call_soon(run()).result(10)


def wait_until(predicate: Callable[[], bool], timeout: float = 30, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def connection_of(server: RunningServer, name: str) -> BotConnection:
    wait_until(lambda: on_server(server, lambda: server.arena.gateway.connection(name)) is not None,
               what=f"{name} to connect")  # fmt: skip
    found: BotConnection = on_server(server, lambda: server.arena.gateway.connection(name))
    return found


def flood(bot: SilentBot, message: bot_pb2.BotMessage, until: threading.Event) -> threading.Thread:
    """Send `message` over and over (as fast as gRPC takes them) until `until` is set."""

    def send() -> None:
        while bot.send(message, until):
            pass

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.mark.settings(outbox_max_messages=64, outbox_max_bytes=1 << 20, stray_burst=10**6, stray_flood=10**6)
def test_a_bot_that_does_not_read_is_disconnected_and_faulted_not_buffered(
    match_server: RunningServer,
) -> None:
    """Replies pile up for a bot that never reads (strays, here not rate-limited): at the outbox
    limit its stream ends with RESOURCE_EXHAUSTED, and the decision its match waits for becomes a
    disconnect (no grace: the seat forfeits)."""
    good = TestBot(match_server.address, "reader", match_server.register("reader"))
    deaf = SilentBot(match_server.address, "deaf", match_server.register("deaf"))
    held = connection_of(match_server, "deaf")
    request = control_pb2.PlayMatchRequest(match_id="deaf-match", bots=["reader", "deaf"], seed=4,
                                           decision_timeout_ms=60_000, disconnect_grace_ms=0)  # fmt: skip
    stop = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        played = pool.submit(play_match, match_server.address, match_server.control_token, request)
        wait_until(lambda: on_server(match_server, lambda: bool(held.pending)), what="a decision of deaf")
        stray = bot_pb2.Decision(request_id="elsewhere" * 14 + "#1", action_id=1)  # 128 characters
        flood(deaf, bot_pb2.BotMessage(decision=stray), stop)
        try:
            finished = played.result(30)[-1].finished
        finally:
            stop.set()
    assert held.closed and held.close_code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert held.peak_messages <= 64 and held.peak_bytes <= 1 << 20
    # the decision it was waiting for, then the forfeit at its next one (it is gone)
    assert [(f.seat, f.kind, f.forfeited) for f in finished.faults] == [
        (1, pb.FAULT_KIND_DISCONNECTED, False),
        (1, pb.FAULT_KIND_DISCONNECTED, True),
    ]
    assert "does not read" in finished.faults[0].detail
    assert finished.result.reason == pb.MATCH_END_FORFEIT and list(finished.result.forfeited) == [1]
    _, ended = deaf.outcome()
    assert ended is not None and ended.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert close_reason_of(ended.trailing_metadata()) == bot_pb2.CLOSE_REASON_OUTBOX_FULL  # a stuck write too
    assert "does not read" in (ended.details() or "")
    # the server's metrics: one outbox cut-off (counted as the stream ends), the two faults
    metrics = match_server.arena.metrics.registry
    wait_until(lambda: metrics.get_sample_value("uno_arena_server_outbox_cutoffs_total") == 1,
               what="the cut-off counted")  # fmt: skip
    assert metrics.get_sample_value("uno_arena_server_faults_total", {"kind": "disconnected"}) == 2
    assert metrics.get_sample_value("uno_arena_server_matches_finished_total", {"end": "forfeit"}) == 1
    deaf.close()
    good.close()


def test_the_stray_limiter_replies_to_a_burst_then_drops_then_calls_a_flood() -> None:
    limiter = StrayLimiter(rate=0.001, burst=2, flood=3)  # no refill meanwhile
    verdicts = [limiter.take() for _ in range(5)]
    assert verdicts == [StrayVerdict.REPLY] * 2 + [StrayVerdict.DROP] * 2 + [StrayVerdict.FLOOD]
    assert limiter.dropped == limiter.dropped_total == 3


@pytest.mark.settings(stray_burst=5, stray_replies_per_s=0.001, stray_flood=20)  # no refill meanwhile
def test_a_flood_of_stray_answers_with_huge_ids_is_cut_off(match_server: RunningServer) -> None:
    """A bot that never reads sends answers quoting 3 MB request ids: nothing of them is echoed
    back (the outbox stays tiny), replies are rate-limited, and the flood ends its stream."""
    deaf = SilentBot(match_server.address, "flooder", match_server.register("flooder"))
    held = connection_of(match_server, "flooder")
    stop = threading.Event()
    flood(deaf, bot_pb2.BotMessage(decision=bot_pb2.Decision(request_id=BIG, action_id=1)), stop)
    try:
        wait_until(lambda: on_server(match_server, lambda: held.closed), what="the flooder's disconnection")
    finally:
        stop.set()
    assert held.close_code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert held.close_why == bot_pb2.CLOSE_REASON_STRAY_FLOOD
    assert held.peak_messages <= 5 and held.peak_bytes < 5 * 1024  # five short replies at most
    received, ended = deaf.outcome()
    assert ended is not None and ended.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert close_reason_of(ended.trailing_metadata()) == bot_pb2.CLOSE_REASON_STRAY_FLOOD
    replies = [m.fault.detail for m in received if m.HasField("fault")]
    assert len(replies) == 5  # the burst; the rest dropped
    assert all("request_id: at most 128 characters" in r and len(r) < 200 for r in replies)
    deaf.close()


def test_huge_ids_are_refused_and_the_bots_stay_connected(match_server: RunningServer) -> None:
    alice, bob = (TestBot(match_server.address, n, match_server.register(n)) for n in ("alice", "bob"))
    for bot in (alice, bob):
        bot.wait_for(bot.welcomed)
    stub, metadata = control(match_server.address, match_server.control_token)
    play = control_pb2.PlayMatchRequest
    refusals = [
        (play(match_id=BIG, bots=["alice", "bob"]), "match_id: at most 128 characters"),
        (play(match_id="ok", bots=["alice", BIG]), "bots[1]: at most 128 characters"),
        (play(match_id="ok", bots=["alice", "bob"], rules=pb.RulesConfig(scoring=BIG)),
         "rules.scoring: at most 128 characters"),
    ]  # fmt: skip
    for request, words in refusals:
        with pytest.raises(grpc.RpcError) as refused:
            list(stub.PlayMatch(request, metadata=metadata, timeout=20))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert words in (refused.value.details() or "") and len(refused.value.details() or "") < 200
    with pytest.raises(grpc.RpcError) as refused:
        list(stub.Spectate(control_pb2.SpectateRequest(match_id=BIG), metadata=metadata, timeout=20))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    alice.answer(BIG, 1)  # a decision quoting a 3 MB request id: a short no-strike reply
    alice.wait_for(lambda: bool(alice.of_kind("fault")))
    fault = alice.of_kind("fault")[0].fault
    assert "request_id: at most 128 characters" in fault.detail and len(fault.detail) < 200
    assert not fault.strikes
    finished = play_match(match_server.address, match_server.control_token,
                          control_pb2.PlayMatchRequest(match_id="after", bots=["alice", "bob"], seed=1,
                                                       rules=pb.RulesConfig(target_score=150)))  # fmt: skip
    assert finished[-1].finished.result.reason == pb.MATCH_END_TARGET_REACHED  # both still connected
    assert not alice.ended and not bob.ended
    alice.close()
    bob.close()


def test_an_over_long_hello_field_is_refused_naming_the_field(match_server: RunningServer) -> None:
    token = match_server.register("named")
    for name, token_, client, field in (("n" * 129, token, "", "bot_name"), ("named", "t" * 200, "", "token"),
                                        ("named", token, "c" * 300, "client")):  # fmt: skip
        channel = grpc.insecure_channel(match_server.address)
        hello = bot_pb2.Hello(bot_name=name, token=token_, client=client)
        with pytest.raises(grpc.RpcError) as refused:
            list(
                bot_pb2_grpc.BotServiceStub(channel).Connect(
                    iter([bot_pb2.BotMessage(hello=hello)]), timeout=10
                )
            )
        channel.close()
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert close_reason_of(refused.value.trailing_metadata()) == bot_pb2.CLOSE_REASON_FIELD_TOO_LONG
        assert f"Hello.{field}: at most" in (refused.value.details() or "")


def test_garbage_after_a_valid_hello_ends_the_stream_with_invalid_argument(
    match_server: RunningServer,
) -> None:
    token = match_server.register("messy")
    hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="messy", token=token)).SerializeToString()
    channel = grpc.insecure_channel(match_server.address)
    raw = channel.stream_stream(
        "/uno_arena.v1.BotService/Connect", request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    sent = threading.Event()

    def requests() -> Iterator[bytes]:
        yield hello
        assert sent.wait(10)  # after the Welcome: the garbage comes from an accepted bot
        yield b"\xff\xfe\xfd garbage \x00\x01"

    call = raw(requests(), timeout=20)
    with pytest.raises(grpc.RpcError) as ended:
        for message in call:
            if bot_pb2.ServerMessage.FromString(message).HasField("welcome"):
                sent.set()
    assert ended.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert close_reason_of(ended.value.trailing_metadata()) == bot_pb2.CLOSE_REASON_NOT_A_BOT_MESSAGE
    assert "not a BotMessage" in (ended.value.details() or "")
    channel.close()


def test_a_duplicate_answer_costs_no_strike(match_server: RunningServer) -> None:
    """Each answer is sent again while the bot's next decision is due: ignored, never INVALID."""
    bot_box: list[TestBot] = []
    fallback = eager(random.Random(3))
    previous: list[tuple[str, int]] = []

    def stutter(request: bot_pb2.DecisionRequest) -> int:
        if previous:
            bot_box[0].answer(*previous[-1])  # the answer to the last request, once more
        action = fallback(request)
        assert action is not None
        previous.append((request.request_id, action))
        return action

    good = TestBot(match_server.address, "steady", match_server.register("steady"))
    twice = TestBot(match_server.address, "twice", match_server.register("twice"), policy=stutter)
    bot_box.append(twice)
    for bot in (good, twice):
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(match_id="dup", bots=["steady", "twice"], seed=9,
                                           rules=pb.RulesConfig(target_score=150))  # fmt: skip
    finished = play_match(match_server.address, match_server.control_token, request)[-1].finished
    assert len(previous) > 3
    assert list(finished.faults) == [] and list(finished.result.faults) == [0, 0]
    twice.wait_for(lambda: any("duplicate answer" in m.fault.detail for m in twice.of_kind("fault")))
    assert all(not m.fault.strikes for m in twice.of_kind("fault"))
    good.close()
    twice.close()


@pytest.mark.settings(outbox_max_bytes=2048)
def test_a_reconnection_that_overflows_its_outbox_leaves_the_grace_period_running(
    match_server: RunningServer,
) -> None:
    """A bot back within its grace period is sent everything the match logged (one Events message):
    here more than its outbox may hold, so the new connection ends at once (RESOURCE_EXHAUSTED). That
    short-lived connection does not restart the grace period: it runs from the first loss, and the
    seat forfeits when it ends."""
    hang_up = threading.Event()
    asked = [0]
    choose = eager(random.Random(3))

    def leave_late(request: bot_pb2.DecisionRequest) -> int | None:
        asked[0] += 1
        if asked[0] >= 60:  # the log by then encodes to well over 2 KiB
            hang_up.set()
            return None
        return choose(request)

    token = match_server.register("comeback")
    bots = [TestBot(match_server.address, "steady", match_server.register("steady")),
            TestBot(match_server.address, "comeback", token, policy=leave_late)]  # fmt: skip
    for bot in bots:
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(match_id="comeback", bots=["steady", "comeback"], seed=3,
                                           decision_timeout_ms=30_000, disconnect_grace_ms=6_000)  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        played = pool.submit(play_match, match_server.address, match_server.control_token, request)
        assert hang_up.wait(60), "the match ended before the bot's 60th decision"
        host = on_server(match_server, lambda: match_server.arena.running["comeback"])
        bots[1].close()
        wait_until(lambda: on_server(match_server, lambda: 1 in host.lost_at), what="the loss of seat 1")
        lost = on_server(match_server, lambda: host.lost_at[1])
        back = TestBot(match_server.address, "comeback", token)  # the same bot, reconnecting
        back.wait_for(lambda: back.ended)
        assert back.error is not None and back.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "does not read" in (back.error.details() or "")
        assert on_server(match_server, lambda: host.lost_at.get(1)) == lost  # not restarted
        finished = played.result(60)[-1].finished
    assert [(f.seat, f.kind, f.forfeited) for f in finished.faults] == [
        (1, pb.FAULT_KIND_DISCONNECTED, False),
        (1, pb.FAULT_KIND_DISCONNECTED, True),
    ]
    assert finished.faults[1].detail == "not connected, nor back within the 6 s grace period"
    assert finished.result.reason == pb.MATCH_END_FORFEIT and list(finished.result.forfeited) == [1]
    back.close()
    bots[0].close()
