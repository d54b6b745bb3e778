"""The gRPC servicers: thin. Decode, call the arena, encode, map errors to status codes."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import logging
import time
from collections.abc import AsyncIterator, Iterable
from typing import NoReturn, TypeAlias, TypeVar

import grpc
import redis
from google.protobuf.message import DecodeError

from uno_arena.records import identity
from uno_arena.rules import ConfigError, build
from uno_arena.rules.config import MAX_PLAYERS, MIN_PLAYERS
from uno_arena.server.arena import SERVER_DRAINING, SERVER_STOPPING, Arena
from uno_arena.server.gateway import BotConnection, DuplicateLink, NoNewMatches, too_long
from uno_arena.server.match_host import MatchHost, MatchSpec, Progress
from uno_arena.server.spectators import Spectator
from uno_arena.server.throttle import FailureLimiter, address_key, client_address, say_wait
from uno_arena.v1 import bot_pb2, bot_pb2_grpc, codec, control_pb2, control_pb2_grpc
from uno_arena.v1.names import close_trailer
from uno_arena.v1.printable import printable

log = logging.getLogger(__name__)


def _server_name() -> str:
    """Welcome.server: the name, installed version and build (compiled or interpreted); the bare
    name and build when uno-arena is not installed."""
    try:
        return f"uno-arena {importlib.metadata.version('uno-arena')} ({build.describe()})"
    except importlib.metadata.PackageNotFoundError:
        return f"uno-arena ({build.describe()})"


SERVER_NAME = _server_name()
SAY_HELLO = "say Hello (bot_name and token) first"
# The status of each way a stream ends before its Hello is accepted (bot.proto, CloseReason)
REFUSALS: dict[bot_pb2.CloseReason, grpc.StatusCode] = {
    bot_pb2.CLOSE_REASON_SERVER_STOPPING: grpc.StatusCode.UNAVAILABLE,
    bot_pb2.CLOSE_REASON_NO_HELLO: grpc.StatusCode.UNAUTHENTICATED,
    bot_pb2.CLOSE_REASON_NOT_A_BOT_MESSAGE: grpc.StatusCode.INVALID_ARGUMENT,
    bot_pb2.CLOSE_REASON_FIELD_TOO_LONG: grpc.StatusCode.INVALID_ARGUMENT,
    bot_pb2.CLOSE_REASON_TOKEN_CHECK_FAILED: grpc.StatusCode.UNAVAILABLE,
    bot_pb2.CLOSE_REASON_TOKEN_REFUSED: grpc.StatusCode.UNAUTHENTICATED,
    bot_pb2.CLOSE_REASON_RATE_LIMITED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    bot_pb2.CLOSE_REASON_DUPLICATE_LINK: grpc.StatusCode.ALREADY_EXISTS,
}
# The refusals that are not the client's fault: they take nothing from its address's failure bucket
NOT_FAILURES = frozenset({bot_pb2.CLOSE_REASON_SERVER_STOPPING, bot_pb2.CLOSE_REASON_TOKEN_CHECK_FAILED,
                          bot_pb2.CLOSE_REASON_RATE_LIMITED,
                          bot_pb2.CLOSE_REASON_DUPLICATE_LINK})  # fmt: skip
STATUS_WAIT = 0.5  # s: how long ending a stream waits for its status to go out before cancelling it

# each call's context, by its request and response messages
_Request = TypeVar("_Request")
_Response = TypeVar("_Response")
_BotContext: TypeAlias = grpc.aio.ServicerContext[bot_pb2.BotMessage, bot_pb2.ServerMessage | bytes]
_PlayMatchContext: TypeAlias = grpc.aio.ServicerContext[control_pb2.PlayMatchRequest, Progress]
_ListBotsContext: TypeAlias = grpc.aio.ServicerContext[
    control_pb2.ListBotsRequest, control_pb2.ListBotsResponse
]
_SpectateContext: TypeAlias = grpc.aio.ServicerContext[
    control_pb2.SpectateRequest, control_pb2.SpectatorEvent | bytes
]


def first_too_long(fields: Iterable[tuple[str, str]], limit: int) -> str | None:
    return next((problem for f, v in fields if (problem := too_long(f, v, limit))), None)


def client_of(arena: Arena, context: grpc.aio.ServicerContext[_Request, _Response]) -> str:
    """The address a call's failures count against: its peer's, or the client a trusted proxy names."""
    trusted = arena.settings.trusted_proxies
    if not trusted:
        return client_address(context.peer(), (), ())
    keys = {address_key(proxy) or proxy for proxy in trusted}
    return client_address(context.peer(), context.invocation_metadata() or (), keys)


def too_many_failures(what: str, peer: str, wait: float, limiter: FailureLimiter) -> str:
    """The status message of a call refused for its address's failures: what, from where, how long to wait."""
    return (f"too many {what} from {peer}: wait {say_wait(wait)} (a burst of {limiter.burst}, then "
            f"{limiter.per_s:g} a second)")  # fmt: skip


# ignore: protoc writes the *_pb2_grpc modules without stubs, so the base class is Any to mypy
class BotServicer(bot_pb2_grpc.BotServiceServicer):  # type: ignore[misc]
    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.failures = arena.hello_failures  # failed Hellos per peer address

    async def Connect(
        self, request_iterator: AsyncIterator[bot_pb2.BotMessage], context: _BotContext
    ) -> None:
        """One bot's stream. Messages are read with `context.read()` and written with `context.write()`
        rather than through the request iterator and by yielding: each message then passes through
        fewer layers of gRPC's asyncio wrappers (docs/performance.md)."""
        hello = await self._hello(context)
        settings = self.arena.settings
        connection = BotConnection(
            name=hello.bot_name,
            max_matches=max(1, min(hello.max_matches or 1, settings.max_matches_per_bot)),
            ask_single=hello.ask_single,
            client=hello.client,
            token_sha256=identity.token_digest(hello.token),
            settings=settings,
            follow_pool=hello.follow_pool,
            instance=hello.instance,
            link=hello.link,
        )
        call = asyncio.current_task()
        assert call is not None

        def end_now(code: grpc.StatusCode, details: str, why: bot_pb2.CloseReason) -> None:
            ending = self._end(context, call, code, details, why)
            self.arena.gateway.track_ending(asyncio.create_task(ending))

        connection.on_forced_close = end_now
        try:
            await self.arena.connect(connection)
        except DuplicateLink as duplicate:
            log.info("%s", duplicate, extra={"bot": connection.name})
            await self._refuse(context, bot_pb2.CLOSE_REASON_DUPLICATE_LINK, str(duplicate))
        log.info("bot %s connected (%d matches at once, %s)", connection.name, connection.max_matches,
                 printable(hello.client), extra={"bot": connection.name})  # fmt: skip
        reader = asyncio.create_task(self.arena.gateway.read(connection, context))
        try:
            await context.write(
                bot_pb2.ServerMessage(
                    welcome=bot_pb2.Welcome(
                        max_matches=connection.max_matches,
                        decision_timeout_ms=settings.decision_timeout_ms,
                        max_message_bytes=settings.max_message_bytes,
                        server=SERVER_NAME,
                        address=self.arena.address,
                        pool=list(self.arena.pool),
                        pool_name=self.arena.pool_name,
                    )
                )
            )
            while (message := await connection.next_message()) is not None:
                await context.write(message)
            trailer = close_trailer(connection.close_why)  # the reason, beside the status
            if connection.close_code is not None:  # the status from the handler: gRPC sends it as it ends
                await context.abort(connection.close_code, connection.close_reason, trailer)
            context.set_trailing_metadata(trailer)  # an OK end: drained, or the bot closed its side
        finally:
            reader.cancel()
            await self.arena.disconnect(connection, "the bot's stream ended")
            dropped = connection.strays.dropped_total
            log.info("bot %s disconnected: %s%s", connection.name, printable(connection.close_reason),
                     f" ({dropped} replies to stray messages dropped)" if dropped else "",
                     extra={"bot": connection.name})  # fmt: skip

    @staticmethod
    async def _end(
        context: _BotContext,
        call: asyncio.Task[object],
        code: grpc.StatusCode,
        details: str,
        why: bot_pb2.CloseReason,
    ) -> None:
        """End a stream with `code` (and `why`), even while gRPC waits to write to a bot that does not read.

        A handler that is not stuck aborts with the status itself (`Connect`). One still running
        after `STATUS_WAIT` is stuck in a write: the status goes out first, then the call's task is
        cancelled, which runs `Connect`'s cleanup (and abandons the write the bot does not take:
        gRPC then sends the status ahead of it).
        """
        await asyncio.wait({call}, timeout=STATUS_WAIT)  # a handler not stuck in a write ends by itself
        if call.done():  # the call is over (and gRPC may have freed it): nothing to end
            return
        # Created now, the abort's first step (which hands the status to gRPC) runs before gRPC could
        # see this call finish and free it.
        status = asyncio.create_task(BotServicer._abort(context, code, details, why))
        await asyncio.wait({status}, timeout=STATUS_WAIT)  # done unless a write to the bot is stuck
        call.cancel()
        await status

    @staticmethod
    async def _abort(
        context: _BotContext, code: grpc.StatusCode, details: str, why: bot_pb2.CloseReason
    ) -> None:
        with contextlib.suppress(Exception):  # AbortError always; an error if the bot is gone already
            await context.abort(code, details, close_trailer(why))

    async def _refuse(self, context: _BotContext, why: bot_pb2.CloseReason, details: str) -> NoReturn:
        """End a stream before its Hello was accepted: the reason's status, and the reason beside it.
        A refusal for the client's fault counts against its address (`throttle`)."""
        self.arena.metrics.hello_refused(why).inc()
        if why not in NOT_FAILURES:
            self.failures.failed(client_of(self.arena, context))
        await context.abort(REFUSALS[why], details, close_trailer(why))

    async def _hello(self, context: _BotContext) -> bot_pb2.Hello:
        """The stream's Hello, its token checked; otherwise the stream ends, saying why."""
        settings = self.arena.settings
        if self.arena.stopping:
            await self._refuse(context, bot_pb2.CLOSE_REASON_SERVER_STOPPING, SERVER_STOPPING)
        peer = client_of(self.arena, context)
        wait = self.failures.wait(peer)
        if wait:  # refused before anything is read or checked, and held back: a guesser is slowed down
            if self.failures.refused % 1000 == 1:  # the first of a run, then one line per thousand
                log.warning("refusing Hellos from %s: too many failed lately (%d refused so far)", peer,
                            self.failures.refused)  # fmt: skip
            wait -= await self.failures.hold(wait)
            details = too_many_failures("failed Hellos", peer, wait, self.failures)
            await self._refuse(context, bot_pb2.CLOSE_REASON_RATE_LIMITED, details)
        try:
            first: object = await asyncio.wait_for(context.read(), settings.hello_timeout_ms / 1000)
        except TimeoutError:
            await self._refuse(context, bot_pb2.CLOSE_REASON_NO_HELLO, SAY_HELLO)
        except DecodeError:
            await self._refuse(
                context, bot_pb2.CLOSE_REASON_NOT_A_BOT_MESSAGE, "the first message is not a BotMessage"
            )
        if not isinstance(first, bot_pb2.BotMessage):  # grpc.aio.EOF: the bot's side ended first
            await self._refuse(context, bot_pb2.CLOSE_REASON_NO_HELLO, SAY_HELLO)
        if first.WhichOneof("kind") != "hello":
            await self._refuse(context, bot_pb2.CLOSE_REASON_NO_HELLO, "the first message must be Hello")
        hello = first.hello
        problem = first_too_long(
            (("bot_name", hello.bot_name), ("token", hello.token), ("instance", hello.instance),
             ("link", hello.link)), settings.max_id_chars,
        ) or too_long("client", hello.client, settings.max_client_chars)  # fmt: skip
        if problem:
            log.info("refused a bot's Hello: %s", problem)
            await self._refuse(context, bot_pb2.CLOSE_REASON_FIELD_TOO_LONG, f"Hello.{problem}")
        try:
            valid = await identity.bot_token_valid(
                self.arena.redis, settings.key_prefix, hello.bot_name, hello.token
            )
        except redis.RedisError as error:
            log.error(
                "cannot check bot %r's token: Redis: %s", hello.bot_name, error, extra={"bot": hello.bot_name}
            )
            await self._refuse(
                context,
                bot_pb2.CLOSE_REASON_TOKEN_CHECK_FAILED,
                "the server cannot check tokens right now; retry",
            )
        if not valid:
            log.info("refused bot %r: wrong or missing token", hello.bot_name, extra={"bot": hello.bot_name})
            await self._refuse(context, bot_pb2.CLOSE_REASON_TOKEN_REFUSED, "unknown bot name or wrong token")
        return hello


# ignore: protoc writes the *_pb2_grpc modules without stubs, so the base class is Any to mypy
class ControlServicer(control_pb2_grpc.ControlServiceServicer):  # type: ignore[misc]
    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.failures = arena.control_failures  # failed control tokens per peer address

    async def _authorise(self, context: grpc.aio.ServicerContext[_Request, _Response]) -> None:
        """The call's control token, checked; a peer with too many failures lately is refused unchecked."""
        peer = client_of(self.arena, context)
        wait = self.failures.wait(peer)
        if wait:
            if self.failures.refused % 1000 == 1:
                log.warning("refusing control calls from %s: too many wrong tokens lately (%d refused "
                            "so far)", peer, self.failures.refused)  # fmt: skip
            wait -= await self.failures.hold(wait)
            details = too_many_failures("wrong control tokens", peer, wait, self.failures)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, details)
        metadata = dict(context.invocation_metadata() or ())
        header = str(metadata.get("authorization", ""))
        # exactly as sent: a token with anything around it (a trailing space) is not the token
        token = header[len("Bearer ") :] if header.startswith("Bearer ") else ""
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
            self.failures.failed(peer)
            problem = "unknown control token" if token else "a control token is required"
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"{problem} (authorization: Bearer ...)")

    async def PlayMatch(
        self, request: control_pb2.PlayMatchRequest, context: _PlayMatchContext
    ) -> AsyncIterator[Progress]:
        await self._authorise(context)
        arena = self.arena
        spec = await self._spec(request, context)
        host = await self._same_match(spec, context)
        if host is None and arena.finished.get(spec.match_id) is None:
            if arena.draining:
                await context.abort(grpc.StatusCode.UNAVAILABLE, SERVER_DRAINING)
            waits = request.HasField("wait_for_bots_ms")
            wait = _given(waits, request.wait_for_bots_ms, arena.settings.wait_for_bots_ms) / 1000
            try:
                await arena.gateway.reserve(spec.bots, wait)
            except TimeoutError as missing:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"{missing} (waited {wait:g} s)")
            except NoNewMatches as refused:  # the server began draining while this call waited for bots
                await context.abort(grpc.StatusCode.UNAVAILABLE, str(refused))
            if spec.match_id in arena.running or arena.finished.get(spec.match_id) is not None:
                await arena.gateway.release(spec.bots)  # another call started it meanwhile
                host = await self._same_match(spec, context)
            else:
                host = arena.start(spec)
        if host is None:  # finished (before this call, or by a call that started it meanwhile)
            finished = arena.finished.get(spec.match_id)
            if finished is None:  # dropped from the results kept: it would be played twice
                await context.abort(
                    grpc.StatusCode.ALREADY_EXISTS,
                    f"match id {spec.match_id!r} finished and its result is no longer kept",
                )
                return
            for message in finished.ending:
                yield message
            return
        queue: asyncio.Queue[Progress | None] = asyncio.Queue()
        host.subscribers.append(queue)
        try:
            yield control_pb2.MatchProgress(
                started=control_pb2.MatchStartedInfo(
                    match_id=host.spec.match_id,
                    bots=list(host.spec.bots),
                    rules=codec.rules(host.spec.config),
                )
            )
            while (progress := await queue.get()) is not None:
                yield progress
        finally:
            host.subscribers.remove(queue)

    async def _same_match(self, spec: MatchSpec, context: _PlayMatchContext) -> MatchHost | None:
        """The running match `spec` asks for (None if it is not running), or ALREADY_EXISTS if the
        id is running or finished as a different match: a retry attaches, a clash never does."""
        host = self.arena.running.get(spec.match_id)
        finished = self.arena.finished.get(spec.match_id)
        existing = host.spec if host is not None else finished.spec if finished is not None else None
        if existing is not None and existing != spec:
            differs = [name for name in _COMPARED if getattr(existing, name) != getattr(spec, name)]
            shown = f"bots {','.join(existing.bots)}, seed {existing.seed}"
            await context.abort(
                grpc.StatusCode.ALREADY_EXISTS,
                f"match id {spec.match_id!r} belongs to a different match ({shown}); "
                f"this request differs in {', '.join(differs)}",
            )
        return host

    async def _spec(self, request: control_pb2.PlayMatchRequest, context: _PlayMatchContext) -> MatchSpec:
        bots = tuple(request.bots)
        limit = self.arena.settings.max_id_chars
        rules_strings = [
            (f"rules.{field.name}", value)
            for field, value in request.rules.ListFields()
            if isinstance(value, str)
        ]
        fields = [
            ("match_id", request.match_id),
            *((f"bots[{i}]", b) for i, b in enumerate(bots)),
            *rules_strings,
        ]
        problem = first_too_long(fields, limit) or _request_problem(request, bots)
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        try:
            config = codec.rules_from(request.rules, len(bots))
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
    ) -> AsyncIterator[control_pb2.SpectatorEvent | bytes]:
        await self._authorise(context)
        settings = self.arena.settings
        problem = too_long("match_id", request.match_id, settings.max_id_chars)
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        host = self.arena.running.get(request.match_id)
        if host is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no running match {request.match_id!r}")
            return
        full = self._spectators_full(host)
        if full:
            log.info("Spectate of %s refused: %s", request.match_id, full,
                     extra={"match_id": host.spec.match_id})  # fmt: skip
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, full)
        spectator = Spectator(settings.spectator_backlog)
        so_far = host.spectated_so_far()  # the same bytes for every stream that starts now
        host.spectators.append(spectator)
        try:
            yield so_far
            del so_far  # a stream keeps no copy of what it has written
            while (batch := await spectator.next()) is not None:
                yield batch
        finally:
            host.spectators.remove(spectator)
        if spectator.fell_behind:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this Spectate stream fell {settings.spectator_backlog} batches behind the match "
                "(read faster, or ask again: a new stream starts with every event so far)",
            )

    def _spectators_full(self, host: MatchHost) -> str | None:
        """Why a new Spectate stream of `host`'s match is refused (its cap, or the server's), or None."""
        settings = self.arena.settings
        if len(host.spectators) >= settings.max_spectators_per_match:
            return (f"match {host.spec.match_id!r} has {len(host.spectators)} Spectate streams, the most "
                    "one match may have (uno-arena server --max-spectators-per-match)")  # fmt: skip
        streams = sum(len(running.spectators) for running in self.arena.running.values())
        if streams >= settings.max_spectators:
            return (f"the server has {streams} Spectate streams open, the most it allows (uno-arena server "
                    "--max-spectators)")  # fmt: skip
        return None


def _request_problem(request: control_pb2.PlayMatchRequest, bots: tuple[str, ...]) -> str | None:
    if not request.match_id:
        return "match_id: required"
    if len(set(bots)) != len(bots):
        return "bots: a bot may take only one seat"
    if not MIN_PLAYERS <= len(bots) <= MAX_PLAYERS:
        return f"bots: {MIN_PLAYERS} to {MAX_PLAYERS} seats, got {len(bots)}"
    if request.HasField("decision_timeout_ms") and request.decision_timeout_ms < 1:
        return "decision_timeout_ms: must be >= 1 when set (unset: the server's default)"
    if request.HasField("max_strikes") and request.max_strikes < 1:
        return "max_strikes: must be >= 1 when set (unset: the server's default)"
    return None


_COMPARED = ("bots", "seed", "config", "decision_timeout", "max_strikes", "disconnect_grace")  # MatchSpec's


def _given(present: bool, value: int, default: int) -> int:
    """A limit of a PlayMatch request: the value when the caller set it (0 included), else the default."""
    return value if present else default
