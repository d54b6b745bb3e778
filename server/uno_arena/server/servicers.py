"""The gRPC servicers: thin. Decode, call the arena, encode, map errors to status codes."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import TypeAlias, TypeVar

import grpc
import redis

from uno_arena.records import identity
from uno_arena.rules import ConfigError, public
from uno_arena.server import wire
from uno_arena.server.arena import Arena
from uno_arena.server.gateway import BotConnection
from uno_arena.server.match_host import UNKNOWN_REQUEST, MatchSpec
from uno_arena.v1 import bot_pb2, bot_pb2_grpc, control_pb2, control_pb2_grpc
from uno_arena.v1 import game_pb2 as pb

log = logging.getLogger(__name__)
SERVER_NAME = "uno-arena"

# each call's context, by its request and response messages
_Request = TypeVar("_Request")
_Response = TypeVar("_Response")
_BotContext: TypeAlias = grpc.aio.ServicerContext[bot_pb2.BotMessage, bot_pb2.ServerMessage]
_PlayMatchContext: TypeAlias = grpc.aio.ServicerContext[
    control_pb2.PlayMatchRequest, control_pb2.MatchProgress
]
_ListBotsContext: TypeAlias = grpc.aio.ServicerContext[
    control_pb2.ListBotsRequest, control_pb2.ListBotsResponse
]
_SpectateContext: TypeAlias = grpc.aio.ServicerContext[
    control_pb2.SpectateRequest, control_pb2.SpectatorEvent
]


# ignore: protoc writes the *_pb2_grpc modules without stubs, so the base class is Any to mypy
class BotServicer(bot_pb2_grpc.BotServiceServicer):  # type: ignore[misc]
    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def Connect(
        self, request_iterator: AsyncIterator[bot_pb2.BotMessage], context: _BotContext
    ) -> AsyncIterator[bot_pb2.ServerMessage | bytes]:
        hello = await self._hello(request_iterator, context)
        settings = self.arena.settings
        connection = BotConnection(
            name=hello.bot_name,
            max_matches=max(1, min(hello.max_matches or 1, settings.max_matches_per_bot)),
            ask_single=hello.ask_single,
            client=hello.client,
        )
        await self.arena.gateway.attach(connection)
        log.info(
            "bot %s connected (%d matches at once, %s)", connection.name, connection.max_matches, hello.client
        )
        reader = asyncio.create_task(self._read(connection, request_iterator))
        try:
            yield bot_pb2.ServerMessage(
                welcome=bot_pb2.Welcome(
                    max_matches=connection.max_matches,
                    decision_timeout_ms=settings.decision_timeout_ms,
                    max_message_bytes=settings.max_message_bytes,
                    server=SERVER_NAME,
                )
            )
            while (message := await connection.outbox.get()) is not None:
                yield message
            if connection.close_reason.startswith("replaced"):
                await context.abort(grpc.StatusCode.ABORTED, connection.close_reason)
        finally:
            reader.cancel()
            await self.arena.gateway.detach(connection, "the bot's stream ended")
            log.info("bot %s disconnected: %s", connection.name, connection.close_reason)

    async def _hello(
        self, requests: AsyncIterator[bot_pb2.BotMessage], context: _BotContext
    ) -> bot_pb2.Hello:
        timeout = self.arena.settings.hello_timeout_ms / 1000
        try:
            first = await asyncio.wait_for(anext(aiter(requests)), timeout)
        except (TimeoutError, StopAsyncIteration):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "say Hello (bot_name and token) first")
        if first.WhichOneof("kind") != "hello":
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the first message must be Hello")
        hello = first.hello
        prefix = self.arena.settings.key_prefix
        try:
            valid = await identity.bot_token_valid(self.arena.redis, prefix, hello.bot_name, hello.token)
        except redis.RedisError as error:
            log.error("cannot check bot %r's token: Redis: %s", hello.bot_name, error)
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, "the server cannot check tokens right now; retry"
            )
        if not valid:
            log.info("refused bot %r: wrong or missing token", hello.bot_name)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown bot name or wrong token")
        return hello

    async def _read(self, connection: BotConnection, requests: AsyncIterator[bot_pb2.BotMessage]) -> None:
        try:
            async for message in requests:
                kind = message.WhichOneof("kind")
                if kind == "decision":
                    self._answer(connection, message.decision)
                elif kind == "ping":
                    connection.send(bot_pb2.ServerMessage(pong=bot_pb2.Pong(nonce=message.ping.nonce)))
                else:
                    self._stray(connection, "", f"unexpected {kind or 'empty'} message after Hello")
            connection.close("the bot closed its stream")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a broken stream: garbage, oversized message, reset
            connection.close(f"stream error: {error}")

    def _answer(self, connection: BotConnection, decision: bot_pb2.Decision) -> None:
        if connection.answer(decision.request_id, decision.action_id):
            return
        match_id = decision.request_id.rpartition("#")[0]
        if decision.request_id in connection.expired:
            self._stray(
                connection, match_id, f"late answer to {decision.request_id!r}: its deadline had passed"
            )
            return
        waiting = [rid for rid, p in connection.pending.items() if p.match_id == match_id]
        if waiting:  # a wrong id while a decision of that match is due: that decision is INVALID
            connection.answer(waiting[0], UNKNOWN_REQUEST)
        else:
            self._stray(connection, match_id, f"no pending request {decision.request_id!r} (late or unknown)")

    @staticmethod
    def _stray(connection: BotConnection, match_id: str, detail: str) -> None:
        """Tell the bot about a message that affected no match (no strike)."""
        fault = pb.Fault(match_id=match_id, kind=pb.FAULT_KIND_INVALID, detail=detail)
        connection.send(bot_pb2.ServerMessage(fault=fault))


# ignore: protoc writes the *_pb2_grpc modules without stubs, so the base class is Any to mypy
class ControlServicer(control_pb2_grpc.ControlServiceServicer):  # type: ignore[misc]
    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def _authorise(self, context: grpc.aio.ServicerContext[_Request, _Response]) -> None:
        metadata = dict(context.invocation_metadata() or ())
        header = str(metadata.get("authorization", ""))
        token = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
        try:
            valid = await identity.control_token_valid(
                self.arena.redis, self.arena.settings.key_prefix, token
            )
        except redis.RedisError as error:
            log.error("cannot check a control token: Redis: %s", error)
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, "the server cannot check tokens right now; retry"
            )
        if not valid:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, "a control token is required (authorization: Bearer ...)"
            )

    async def PlayMatch(
        self, request: control_pb2.PlayMatchRequest, context: _PlayMatchContext
    ) -> AsyncIterator[control_pb2.MatchProgress]:
        await self._authorise(context)
        arena = self.arena
        host = arena.running.get(request.match_id)
        if host is None and request.match_id not in arena.finished:
            spec = await self._spec(request, context)
            if arena.draining:
                await context.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
            waits = request.HasField("wait_for_bots_ms")
            wait = _given(waits, request.wait_for_bots_ms, arena.settings.wait_for_bots_ms) / 1000
            try:
                await arena.gateway.reserve(spec.bots, wait)
            except TimeoutError as missing:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"{missing} (waited {wait:g} s)")
            if request.match_id in arena.running or request.match_id in arena.finished:
                await arena.gateway.release(spec.bots)  # another call started it meanwhile
                host = arena.running.get(request.match_id)
            else:
                host = arena.start(spec)
        if host is None:  # finished (before this call, or by a call that started it meanwhile)
            for message in arena.finished[request.match_id]:
                yield message
            return
        queue: asyncio.Queue[control_pb2.MatchProgress | None] = asyncio.Queue()
        host.subscribers.append(queue)
        try:
            yield control_pb2.MatchProgress(
                started=control_pb2.MatchStartedInfo(
                    match_id=host.spec.match_id, bots=list(host.spec.bots), rules=wire.rules(host.spec.config)
                )
            )
            while (progress := await queue.get()) is not None:
                yield progress
        finally:
            host.subscribers.remove(queue)

    async def _spec(self, request: control_pb2.PlayMatchRequest, context: _PlayMatchContext) -> MatchSpec:
        bots = tuple(request.bots)
        problem = None
        if not request.match_id:
            problem = "match_id: required"
        elif len(set(bots)) != len(bots):
            problem = "bots: a bot may take only one seat"
        elif not 2 <= len(bots) <= 10:
            problem = f"bots: 2 to 10 seats, got {len(bots)}"
        elif request.HasField("decision_timeout_ms") and request.decision_timeout_ms < 1:
            problem = "decision_timeout_ms: must be >= 1 when set (unset: the server's default)"
        elif request.HasField("max_strikes") and request.max_strikes < 1:
            problem = "max_strikes: must be >= 1 when set (unset: the server's default)"
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        try:
            config = wire.rules_from(request.rules, len(bots))
        except ConfigError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"rules.{error}")
        settings = self.arena.settings
        return MatchSpec(
            match_id=request.match_id,
            bots=bots,
            config=config,
            seed=request.seed,
            decision_timeout=_given(
                request.HasField("decision_timeout_ms"),
                request.decision_timeout_ms,
                settings.decision_timeout_ms,
            )
            / 1000,
            max_strikes=_given(request.HasField("max_strikes"), request.max_strikes, settings.max_strikes),
            disconnect_grace=_given(
                request.HasField("disconnect_grace_ms"),
                request.disconnect_grace_ms,
                settings.disconnect_grace_ms,
            )
            / 1000,
        )

    async def ListBots(
        self, request: control_pb2.ListBotsRequest, context: _ListBotsContext
    ) -> control_pb2.ListBotsResponse:
        await self._authorise(context)
        now = time.monotonic()
        gateway = self.arena.gateway
        bots = [
            control_pb2.ConnectedBot(
                name=c.name,
                max_matches=c.max_matches,
                active_matches=gateway.active_matches(c.name),
                connected_seconds=now - c.connected_at,
                client=c.client,
            )
            for c in sorted(gateway.connections(), key=lambda c: c.name)
        ]
        return control_pb2.ListBotsResponse(bots=bots)

    async def Spectate(
        self, request: control_pb2.SpectateRequest, context: _SpectateContext
    ) -> AsyncIterator[control_pb2.SpectatorEvent]:
        await self._authorise(context)
        host = self.arena.running.get(request.match_id)
        if host is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no running match {request.match_id!r}")
            return
        queue: asyncio.Queue[control_pb2.SpectatorEvent | None] = asyncio.Queue()
        so_far = [wire.event(public(e)) for e in host.match.events[: host.published]]
        host.spectators.append(queue)
        try:
            yield control_pb2.SpectatorEvent(match_id=request.match_id, events=so_far)
            while (batch := await queue.get()) is not None:
                yield batch
        finally:
            host.spectators.remove(queue)


def _given(present: bool, value: int, default: int) -> int:
    """A limit of a PlayMatch request: the value when the caller set it (0 included), else the default."""
    return value if present else default
