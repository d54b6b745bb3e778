"""Authentication, refusals, garbage, replacement, discovery: the server stays up and says why."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

import tests.conftest as conftest
from tests.conftest import RunningServer
from tests.server.botclient import TestBot, control, play_match
from uno_arena.server.app import create_server, redis_client
from uno_arena.server.settings import ServerSettings
from uno_arena.v1 import bot_pb2, bot_pb2_grpc, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import close_reason_of, names


def refused(bot: TestBot) -> tuple[grpc.StatusCode, bot_pb2.CloseReason]:
    """How the server ended the bot's stream: the status code and the reason beside it."""
    bot.wait_for(lambda: bot.ended)
    assert bot.error is not None
    code: grpc.StatusCode = bot.error.code()
    reason = bot.close_reason()
    bot.close()
    return code, reason


def test_wrong_or_missing_token_is_unauthenticated(match_server: RunningServer) -> None:
    match_server.register("known")
    wrong = (grpc.StatusCode.UNAUTHENTICATED, bot_pb2.CLOSE_REASON_TOKEN_REFUSED)
    assert refused(TestBot(match_server.address, "known", "not-the-token")) == wrong
    assert refused(TestBot(match_server.address, "known", "")) == wrong
    assert refused(TestBot(match_server.address, "stranger", "x")) == wrong


def test_first_message_must_be_hello(match_server: RunningServer) -> None:
    channel = grpc.insecure_channel(match_server.address)
    stub = bot_pb2_grpc.BotServiceStub(channel)
    decision = bot_pb2.BotMessage(decision=bot_pb2.Decision(request_id="x", action_id=1))
    with pytest.raises(grpc.RpcError) as error:
        list(stub.Connect(iter([decision]), timeout=10))
    assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert close_reason_of(error.value.trailing_metadata()) == bot_pb2.CLOSE_REASON_NO_HELLO
    channel.close()


def test_a_bot_token_cannot_use_the_control_service(match_server: RunningServer) -> None:
    token = match_server.register("sneaky")
    stub, _ = control(match_server.address, match_server.control_token)
    for credential in (token, "", "garbage"):
        with pytest.raises(grpc.RpcError) as error:
            stub.ListBots(control_pb2.ListBotsRequest(), metadata=[("authorization", f"Bearer {credential}")])
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_garbage_bytes_do_not_hurt_the_server(match_server: RunningServer) -> None:
    channel = grpc.insecure_channel(match_server.address)
    raw = channel.stream_stream(
        "/uno_arena.v1.BotService/Connect", request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    with pytest.raises(grpc.RpcError) as refused:
        list(raw(iter([b"\xff\xfe\xfd garbage \x00\x01"]), timeout=10))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # not UNKNOWN (a crash of ours)
    reason = close_reason_of(refused.value.trailing_metadata())
    assert reason == bot_pb2.CLOSE_REASON_NOT_A_BOT_MESSAGE
    channel.close()
    bot = TestBot(match_server.address, "after", match_server.register("after"))
    bot.wait_for(bot.welcomed)
    bot.close()


def test_a_second_connection_replaces_the_first(match_server: RunningServer) -> None:
    token = match_server.register("twice")
    first = TestBot(match_server.address, "twice", token)
    first.wait_for(first.welcomed)
    second = TestBot(match_server.address, "twice", token)
    second.wait_for(second.welcomed)
    assert refused(first) == (grpc.StatusCode.ABORTED, bot_pb2.CLOSE_REASON_REPLACED)
    stub, metadata = control(match_server.address, match_server.control_token)
    listed = stub.ListBots(control_pb2.ListBotsRequest(), metadata=metadata).bots
    assert [(b.name, b.client) for b in listed] == [("twice", "test")]
    second.close()


def test_play_match_refuses_bad_requests_clearly(match_server: RunningServer) -> None:
    bot = TestBot(match_server.address, "only", match_server.register("only"))
    bot.wait_for(bot.welcomed)
    cases = [
        (
            control_pb2.PlayMatchRequest(match_id="", bots=["only", "x"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "match_id",
        ),
        (control_pb2.PlayMatchRequest(match_id="a", bots=["only"]), grpc.StatusCode.INVALID_ARGUMENT, "bots"),
        (
            control_pb2.PlayMatchRequest(
                match_id="b", bots=["only", "ghost"], rules=pb.RulesConfig(scoring="most")
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "rules.scoring",
        ),
        (
            control_pb2.PlayMatchRequest(match_id="c", bots=["only", "ghost"], wait_for_bots_ms=200),
            grpc.StatusCode.FAILED_PRECONDITION,
            "bot 'ghost' is not connected",
        ),
    ]
    for request, code, words in cases:
        with pytest.raises(grpc.RpcError) as error:
            play_match(match_server.address, match_server.control_token, request)
        assert error.value.code() == code
        assert words in (error.value.details() or "")
    bot.close()


def test_health_and_reflection(match_server: RunningServer) -> None:
    channel = grpc.insecure_channel(match_server.address)
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "uno_arena.v1.BotService", "uno_arena.v1.ControlService"):
        status = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
        assert status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    answer = next(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
    names = {s.name for s in answer.list_services_response.service}
    assert {"uno_arena.v1.BotService", "uno_arena.v1.ControlService", "grpc.health.v1.Health"} <= names
    channel.close()


def test_a_second_server_on_a_taken_address_refuses_to_start(
    match_server: RunningServer, redis_prefix: tuple[object, str]
) -> None:
    """Without SO_REUSEPORT: two servers sharing a port would each take about half the calls."""

    async def second() -> None:
        client = redis_client(conftest.REDIS_URL)
        try:
            server, _, _ = await create_server(match_server.address, client, ServerSettings())
            await server.stop(None)  # only reached if it started (the old behaviour)
        finally:
            await client.aclose()

    with pytest.raises(OSError, match="address already in use"):
        asyncio.run(second())
    command = [sys.executable, "-m", "uno_arena.cli", "server", "--listen", match_server.address,
               "--redis-url", conftest.REDIS_URL, "--key-prefix", redis_prefix[1]]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert f"cannot listen on {match_server.address}: address already in use" in done.stderr
    stub, metadata = control(match_server.address, match_server.control_token)
    assert stub.ListBots(control_pb2.ListBotsRequest(), metadata=metadata, timeout=10).bots == []


def test_the_protocol_guide_lists_every_close_reason() -> None:
    """docs/protocol.md's "How a stream ends" names each reason a client may read beside a status."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
    table = guide.split("### How a stream ends", 1)[1].split("\n### ", 1)[0]
    listed = set(re.findall(r"^\| `[A-Z_]+` \| `([A-Z_]+)` \|", table, flags=re.MULTILINE))
    assert listed == {name.upper() for name in names(bot_pb2.CloseReason.DESCRIPTOR).values()}
