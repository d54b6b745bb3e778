"""The connection loop: connect, say Hello, answer decisions, reconnect with backoff, stop cleanly.

The channel is TLS when `ClientTLS` says so (`uno_arena.v1.channels`); a plaintext one is refused to an
address off this machine (the Hello carries the bot's token) unless `ClientTLS(insecure=True)`.

Two ways to stop: `drain()` (the first Ctrl-C of `uno-arena bot run`) tells the server to start no
new match, plays the running ones to their end and returns once the server ends the stream OK;
`stop()` (the second Ctrl-C) ends the stream at once, and the running matches are forfeited.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import inspect
import logging
import random
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import grpc

from uno_arena.rules import Action, Observation
from uno_arena.sdk import _bot_errors
from uno_arena.sdk.bot import Bot
from uno_arena.sdk.decision_threads import DecisionThreads
from uno_arena.sdk.messages import FaultKind, fault_from, hand_result_from, match_info_from
from uno_arena.sdk.round_trip import RoundTrip
from uno_arena.v1 import bot_pb2, channels, codec
from uno_arena.v1.channels import ClientTLS
from uno_arena.v1.names import close_reason_of, name_of

log = logging.getLogger(__name__)

# The bot's stream. Its ServerMessages arrive as bytes: decision requests are decoded by the codec's
# DecisionDecoder straight from them, every other kind by `bot_pb2.ServerMessage.FromString`.
_Call: TypeAlias = grpc.aio.StreamStreamCall[bot_pb2.BotMessage, bytes]
_CONNECT: Final = f"/{bot_pb2.DESCRIPTOR.services_by_name['BotService'].full_name}/Connect"

# The client's own keepalive: a ping every 5 s, and a connection whose ping is not answered within 5 s
# is dropped, and the client reconnects. `grpc.http2.ping_timeout_ms` is what drops it in the gRPC
# releases we use (`grpc.keepalive_timeout_ms` alone does not: a dead link went unnoticed for a minute,
# gRPC's default for it; uno_arena.server.app.grpc_options says more). The server's pings, every 2 s,
# need no permission from a client.
KEEPALIVE = [
    ("grpc.keepalive_time_ms", 5000),
    ("grpc.keepalive_timeout_ms", 5000),
    ("grpc.http2.ping_timeout_ms", 5000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]


class CloseReason(enum.StrEnum):
    """Why the server ended the bot's stream: the protocol's `CloseReason` (bot.proto), which the
    server sends beside the status; its plain name (`replaced` for `CLOSE_REASON_REPLACED`)."""

    REPLACED = "replaced"  # another copy of the bot connected under the same name
    TOKEN_REVOKED = "token_revoked"  # the token was replaced or revoked while connected
    TOKEN_REFUSED = "token_refused"  # unknown bot name, or a wrong token
    NO_HELLO = "no_hello"
    FIELD_TOO_LONG = "field_too_long"  # a Hello field over its length limit
    NOT_A_BOT_MESSAGE = "not_a_bot_message"
    OUTBOX_FULL = "outbox_full"  # the client did not read its messages
    STRAY_FLOOD = "stray_flood"
    SERVER_STOPPING = "server_stopping"
    TOKEN_CHECK_FAILED = "token_check_failed"  # the server could not check tokens right now
    DRAINED = "drained"  # after Drain, the last match finished
    RATE_LIMITED = "rate_limited"  # too many failed Hellos from this address lately: retried with backoff
    DUPLICATE_LINK = "duplicate_link"  # a pool client reached this server by a second address: one stops


def close_reason(error: grpc.aio.AioRpcError) -> CloseReason | None:
    """The reason the server sent beside the status that ended a stream; None when it sent none (a
    server older than the reason, or gRPC's own end, e.g. a lost connection)."""
    number = close_reason_of(error.trailing_metadata())
    return CloseReason(name_of(bot_pb2.CloseReason, number)) if number else None


class BotRefused(Exception):
    """The server refused the bot's name, token or Hello (or the token was replaced or revoked while
    connected); retrying would not help. `reason` says which, as the server sent it (None from a
    server older than the reason); the message is the server's, for people."""

    def __init__(self, message: str, reason: CloseReason | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class BotReplaced(BotRefused):
    """Another copy of this bot connected under the same name (`reason` REPLACED); this one stops."""


class DuplicateLink(Exception):
    """The server has this client (`instance`) connected already on another of its links: the same
    server reached by a second address. This link stops; the other plays (`PoolClient` handles it)."""


@dataclass(frozen=True, slots=True)
class ClientSettings:
    max_matches: int = 4
    ask_single: bool = False
    # The safe default goes out this far before the deadline plus the measured round trip
    # (`uno_arena.sdk.round_trip`); until the first Pong, and with `rtt_probe_s` 0, this many seconds before.
    deadline_margin: float = 0.15
    rtt_probe_s: float = 1.0  # a Ping every this many seconds measures the round trip; 0: never
    backoff_initial: float = 0.5  # first wait before reconnecting; doubles per failed attempt ...
    backoff_max: float = 5.0  # ... up to this; back to `backoff_initial` once the server welcomed us
    # While draining, how long to keep trying to get back to running matches after the stream is lost
    # (the server forfeits them once its disconnect grace, 10 s by default, has passed).
    drain_reconnect_s: float = 15.0


class BotClient:
    """Runs one `Bot` on one connection until `stop()` or a finished `drain()`; reconnects whenever
    the stream is lost (while draining, only to finish running matches).

    `tls` says how to reach the server (default: plaintext, to loopback only). Raises `PlaintextRefused`
    at once, before connecting, when the token would cross a network in clear, and `TLSError` when a TLS
    file cannot be read.

    One server only; `PoolClient` (`uno_arena.sdk.pool`) runs one of these per server of a pool and
    gives each an `on_pool`, called with the pool's servers whenever the server tells them (Welcome,
    PoolChanged), and its `instance` and `link` ids (bot.proto, Hello).
    """

    def __init__(
        self,
        bot: Bot,
        server: str,
        name: str,
        token: str,
        settings: ClientSettings | None = None,
        tls: ClientTLS | None = None,
        *,
        on_pool: Callable[[BotClient, list[str]], None] | None = None,
        instance: str = "",
        link: str = "",
    ) -> None:
        self.bot, self.server, self.name, self.token = bot, server, name, token
        self.on_pool, self.instance, self.link = on_pool, instance, link
        self.address = ""  # the server's own address in its pool, as its last Welcome said ("": none)
        self.settings = settings or ClientSettings()
        self.tls = tls or ClientTLS()
        self.tls.check(server)
        if self.tls.enabled:
            self.tls.credentials()  # its files are readable now, not found missing at the first connection
        self._stop = asyncio.Event()
        self._call: _Call | None = None
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self.connected = asyncio.Event()
        self.connections = 0  # times the server welcomed this client (reconnects included)
        self._welcomes = asyncio.Condition()
        self._drain = asyncio.Event()  # drain() was called
        self._wake = asyncio.Event()  # ends a wait before reconnecting early (drain() was called)
        self.drain_reason = ""
        self.drained = False  # the server ended the stream OK after our Drain: every match finished
        self.running: set[str] = set()  # ids of the matches started and not finished, as last told
        self.round_trip = RoundTrip(initial=self.settings.deadline_margin)  # kept across reconnects
        self._ping: tuple[int, float] | None = None  # the Ping awaiting its Pong: nonce, monotonic time sent
        self._nonce = 0
        self._decoder = codec.DecisionDecoder()  # the connection's: a new one for each stream

    def stop(self) -> None:
        """Stop at once: the stream ends, and the server forfeits the running matches."""
        self._stop.set()

    @property
    def draining(self) -> bool:
        return self._drain.is_set()

    @property
    def running_matches(self) -> int:
        return len(self.running)

    def drain(self, reason: str = "") -> None:
        """Finish the running matches, take no new one, then let `run()` return.

        Sends Drain (again after each reconnect); the server ends the stream OK once the last
        running match has finished. Safe from a signal handler; a second call changes nothing.
        """
        if self._drain.is_set():
            return
        self.drain_reason = reason
        self._drain.set()
        self._wake.set()
        if self._call is not None:
            self._spawn(self._send_drain(self._call))

    async def _send_drain(self, call: _Call) -> None:
        async with self._write_lock:
            # A stream that ended meanwhile raises (grpc's own error types); the next one says Drain.
            with contextlib.suppress(Exception):
                await call.write(bot_pb2.BotMessage(drain=bot_pb2.Drain(reason=self.drain_reason)))

    async def wait_connected(self, count: int = 1) -> None:
        """Until the server has welcomed this client `count` times (reconnects included)."""
        async with self._welcomes:
            await self._welcomes.wait_for(lambda: self.connections >= count)

    async def _welcomed(self) -> None:
        async with self._welcomes:
            self._welcomes.notify_all()

    async def run(self) -> None:
        """Connect and play until stopped or drained; reconnects whenever the stream is lost.

        While draining, a lost stream is reconnected only if matches were running (the server
        resumes them; Drain is sent again right after Hello), and for at most
        `ClientSettings.drain_reconnect_s`; with none running, `run()` returns.

        Raises `BotRefused` if the token is refused (or replaced or revoked meanwhile), and its
        subclass `BotReplaced` if another copy of this bot connected under the same name.
        """
        backoff = self.settings.backoff_initial
        lost_at: float | None = None  # when the stream was lost, while not welcomed since
        unanswered = False  # said that no server answers, and none has since
        while not self._stop.is_set() and not self._drain_over(lost_at):
            welcomed = self.connections
            ended_ok = False
            try:
                ended_ok = await self._session()
            except grpc.aio.AioRpcError as error:
                self._raise_if_final(error)
                code = error.code()
                if self.connections > welcomed or code is not grpc.StatusCode.UNAVAILABLE:
                    log.warning("connection to %s lost: %s %s", self.server, code.name, error.details())
                elif not unanswered:  # nothing listening (yet, or any more): said once, not every retry
                    await self._say_unanswered(error)
                else:
                    log.debug("still no match server at %s: %s", self.server, error.details())
                never_up = self.connections == welcomed and code is grpc.StatusCode.UNAVAILABLE
                unanswered = unanswered or never_up
            finally:
                self.connected.clear()
            if self._stop.is_set():
                break
            if ended_ok and self._drain.is_set():
                self.drained = True
                log.info("%s drained: its matches finished", self.name)
                break
            if self.connections > welcomed or lost_at is None:
                lost_at = time.monotonic()
            if self.connections > welcomed:
                backoff = self.settings.backoff_initial  # it was up: a restart, not a server that is down
                unanswered = False
            if self._drain_over(lost_at):
                break
            delay = min(backoff, self.settings.backoff_max) * random.uniform(0.8, 1.2)
            log.info("reconnecting in %.1f s", delay)
            self._wake.clear()
            waits = {asyncio.ensure_future(self._stop.wait()), asyncio.ensure_future(self._wake.wait())}
            await asyncio.wait(waits, timeout=delay, return_when=asyncio.FIRST_COMPLETED)
            for waiting in waits:
                waiting.cancel()
            backoff = min(backoff * 2, self.settings.backoff_max)

    async def _say_unanswered(self, error: grpc.aio.AioRpcError) -> None:
        """No gRPC connection was made: nothing listens, or something does but the connection failed
        (TLS against plaintext, a certificate not trusted), which retrying alone will not mend."""
        host, port = channels.host_of(self.server), self.server.rpartition(":")[2]
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 2)
        except (OSError, ValueError, TimeoutError):
            log.warning("no match server answers at %s; retrying until one does", self.server)
            return
        writer.close()
        hint = ("is it a TLS server, and did the CA given (--tls-ca) sign its certificate?"
                if self.tls.enabled else "if it serves TLS, connect with --tls or --tls-ca FILE")  # fmt: skip
        log.warning("the match server at %s takes connections, but no gRPC connection was made with %s: %s "
                    "(%s); retrying", self.server, self.tls.describe(), error.details(), hint)  # fmt: skip

    def _drain_over(self, lost_at: float | None) -> bool:
        """Draining, and reconnecting would not finish any match: none runs, or too late for them."""
        if not self._drain.is_set():
            return False
        if not self.running:
            log.info("%s draining with no match running: stopping", self.name)
            return True
        if lost_at is not None and time.monotonic() - lost_at > self.settings.drain_reconnect_s:
            log.warning("%s draining: not reconnected within %g s; its %d running matches will be forfeited",
                        self.name, self.settings.drain_reconnect_s, len(self.running))  # fmt: skip
            return True
        return False

    def _raise_if_final(self, error: grpc.aio.AioRpcError) -> None:
        """Stop for good when reconnecting cannot help: a refused token or Hello (e.g. a name over the
        length limit: the same Hello would be refused again), or another copy took over.

        Read from the reason the server sends beside the status, never from its message's words; a
        server that sends none (older than the reason) is read by the status code alone, as the
        protocol has always said: ABORTED is a replacement.
        """
        code, details, reason = error.code(), error.details() or "", close_reason(error)
        if reason is CloseReason.DUPLICATE_LINK:
            raise DuplicateLink(details) from None
        if reason is CloseReason.REPLACED or (reason is None and code == grpc.StatusCode.ABORTED):
            message = f"another copy of bot {self.name} connected; this one stops"
            log.error(message)
            raise BotReplaced(message, reason) from None
        if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INVALID_ARGUMENT):
            log.error("the server refused bot %s: %s", self.name, details or "refused")
            raise BotRefused(details or "refused", reason) from None

    async def _session(self) -> bool:
        """One stream, until it ends: True when the server ended it OK, False when stopped."""
        async with channels.aio_channel(self.server, self.tls, options=KEEPALIVE) as channel:
            # no response deserializer: the ServerMessages arrive as bytes
            connect: grpc.aio.StreamStreamMultiCallable[bot_pb2.BotMessage, bytes] = channel.stream_stream(
                _CONNECT, request_serializer=bot_pb2.BotMessage.SerializeToString, response_deserializer=None
            )
            call: _Call = connect()
            self._decoder = codec.DecisionDecoder()
            hello = bot_pb2.Hello(bot_name=self.name, token=self.token, max_matches=self.settings.max_matches,
                                  ask_single=self.settings.ask_single, client="uno-arena-sdk",
                                  follow_pool=self.on_pool is not None, instance=self.instance,
                                  link=self.link)  # fmt: skip
            async with self._write_lock:
                await call.write(bot_pb2.BotMessage(hello=hello))
                if self._drain.is_set():  # reconnected to finish running matches: still draining
                    await call.write(bot_pb2.BotMessage(drain=bot_pb2.Drain(reason=self.drain_reason)))
                self._call = call  # from now on drain() writes Drain itself
                self._ping = None  # a Pong of the last stream never comes
            stopper = asyncio.create_task(self._stop.wait())
            try:
                while True:
                    reading = asyncio.ensure_future(call.read())
                    done, _ = await asyncio.wait({reading, stopper}, return_when=asyncio.FIRST_COMPLETED)
                    if stopper in done:
                        reading.cancel()
                        # Half-closing fails if the call ended meanwhile (grpc raises its internal
                        # ExecuteBatchError); either way the call is cancelled next, so a stop never fails.
                        with contextlib.suppress(Exception):
                            await call.done_writing()
                        call.cancel()
                        return False
                    message = reading.result()
                    if not isinstance(message, bytes):  # grpc.aio.EOF: the stream ended OK
                        return True
                    try:
                        self._receive(message, time.monotonic())
                    except Exception:  # never drop the connection over one message
                        log.exception("could not handle a %s message", _kind(message))
            finally:
                self._call = None
                stopper.cancel()
                for task in list(self._tasks):
                    task.cancel()

    def _receive(self, data: bytes, arrived: float) -> None:
        """A serialized ServerMessage read at `arrived` (monotonic): a decision request is decoded from
        the bytes directly, any other kind parsed first."""
        request = self._decoder.server_message(data)
        if request is not None:
            self._spawn(self._decide(request, arrived))
        else:
            self._handle(bot_pb2.ServerMessage.FromString(data))

    def _handle(self, message: bot_pb2.ServerMessage) -> None:
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            welcome = message.welcome
            self.running.clear()  # the server tells each running match again (MatchStarted)
            self.address = welcome.address
            self.connections += 1
            self.connected.set()
            self._spawn(self._welcomed())
            if self.settings.rtt_probe_s > 0 and self._call is not None:
                self._spawn(self._probe(self._call))
            log.info("%s connected to %s (%d matches at once)", self.name, self.server, welcome.max_matches)
            if self.on_pool is not None and welcome.pool:  # a server older than pools lists none
                self.on_pool(self, list(welcome.pool))
        elif kind == "pool_changed":
            if self.on_pool is not None:
                self.on_pool(self, list(message.pool_changed.servers))
        elif kind == "match_started":
            started = message.match_started
            self.running.add(started.match_id)
            self._hook(self.bot.on_match_start, match_info_from(started))
        elif kind == "events":
            events = codec.events_from(message.events.events)
            self._hook(self.bot.on_events, message.events.match_id, events)
        elif kind == "decision_request":
            request = self._decoder.decision_request(message.decision_request.SerializeToString())
            self._spawn(self._decide(request, time.monotonic()))
        elif kind == "pong":
            if self._ping is not None and message.pong.nonce == self._ping[0]:
                self.round_trip.observe(time.monotonic() - self._ping[1])
                self._ping = None
        elif kind == "hand_result":
            self._hook(self.bot.on_hand_end, hand_result_from(message.hand_result))
        elif kind == "draining":
            log.info("%s draining: the server starts no new match; %d running matches finish first",
                     self.name, message.draining.running_matches)  # fmt: skip
        elif kind == "match_finished":
            self.running.discard(message.match_finished.result.match_id)
            self._hook(self.bot.on_match_end, codec.match_result_from(message.match_finished.result))
        elif kind == "fault":
            fault = fault_from(message.fault)
            applied = message.fault.applied.text if message.fault.HasField("applied") else "nothing"
            # A BOT_ERROR echoes what the SDK already logged at ERROR: one line per failure is enough.
            level = logging.DEBUG if fault.kind is FaultKind.BOT_ERROR else logging.WARNING
            log.log(level, "the server recorded a %s fault in match %s: %s (it applied %s; strikes %d%s)",
                        fault.kind.value, fault.match_id or "-", fault.detail, applied, fault.strikes,
                        ", the seat forfeits" if fault.forfeited else "")  # fmt: skip
            self._hook(self.bot.on_fault, fault)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _hook(self, hook: Callable[..., object], *args: object) -> None:
        try:
            hook(*args)
        except Exception:
            log.exception("%s raised in the bot's code", getattr(hook, "__name__", "hook"))

    def deadline_margin(self, deadline: float) -> float:
        """How long before a `deadline` (seconds after the request arrived) the answer must leave."""
        unanswered = time.monotonic() - self._ping[1] if self._ping is not None else 0.0
        return self.round_trip.margin(deadline, unanswered)

    async def _probe(self, call: _Call) -> None:
        """A Ping now and every `rtt_probe_s` while the last one has had its Pong: the round trip it
        measures (the Pong queues in the server's outbox like a request) sets the deadline margin."""
        while True:
            if self._ping is None:
                self._nonce += 1
                async with self._write_lock:
                    self._ping = (self._nonce, time.monotonic())
                    try:
                        await call.write(bot_pb2.BotMessage(ping=bot_pb2.Ping(nonce=self._nonce)))
                    except Exception:  # the stream ended (grpc's own error types): the next one probes
                        return
            await asyncio.sleep(self.settings.rtt_probe_s)

    async def _decide(self, request: codec.DecodedRequest, arrived: float) -> None:
        """`arrived`: when the request was read (monotonic); its deadline counts from then."""
        deadline = request.deadline_ms / 1000
        due = arrived + deadline - self.deadline_margin(deadline)  # when the answer must leave
        if request.events:
            self._hook(self.bot.on_events, request.match_id, list(request.events))
        observation = request.observation
        budget = max(due - time.monotonic(), 0.01)
        action, failure = await self._choose(observation, budget)
        async with self._write_lock:
            decision = bot_pb2.Decision(request_id=request.request_id, action_id=action.id)
            if self._call is not None:
                if failure is not None:  # before the answer: the last answer of a match may end it
                    report = bot_pb2.BotError(request_id=request.request_id, detail=failure)
                    await self._call.write(bot_pb2.BotMessage(bot_error=report))
                await self._call.write(bot_pb2.BotMessage(decision=decision))

    async def _choose(self, observation: Observation, budget: float) -> tuple[Action, str | None]:
        """The bot's action; or the safe default if it raises, returns something that is not a legal
        action (with what to report to the server: a BotError) or runs out of time (the server
        counts that itself). Each failure is one log line; a traceback only at DEBUG level."""
        legal = observation.legal
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            if inspect.iscoroutinefunction(self.bot.decide):
                action = await asyncio.wait_for(self.bot.decide(observation), budget)
            else:
                running = _DECISION_THREADS.submit(self.bot.decide, observation)
                action = await asyncio.wait_for(asyncio.wrap_future(running), budget)
        except Exception as error:
            if isinstance(error, TimeoutError) and loop.time() - started >= budget:  # not the bot's own
                log.warning("decide() took longer than %.2f s: answering %s", budget, legal.safe_default())
                return legal.safe_default(), None
            failure = _bot_errors.raised(error)
            log.error("decide() raised %s: answering %s", failure, legal.safe_default())
            log.debug("decide() raised in match %s", observation.match_id, exc_info=error)
            return legal.safe_default(), failure
        if not isinstance(action, Action) or action not in legal:
            failure = _bot_errors.returned(action)
            log.error("%s: answering %s", failure, legal.safe_default())
            return legal.safe_default(), failure
        return action, None


_DECISION_THREADS = DecisionThreads()


def _kind(data: bytes) -> str:
    """The kind of a serialized ServerMessage, for a log line."""
    try:
        return bot_pb2.ServerMessage.FromString(data).WhichOneof("kind") or "empty"
    except Exception:  # protobuf's DecodeError, or anything a broken message makes it raise
        return "malformed"
