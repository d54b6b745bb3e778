"""The bot gateway: authenticated bot connections, their match slots and pending decisions.

One `BotConnection` per connected bot name. A second connection under the same
name replaces the first (the first stream ends with ABORTED and the reason
CLOSE_REASON_REPLACED), and the matches of the first continue on the second:
that is how a bot reconnects. Every end the server decides carries its
`CloseReason` (bot.proto) beside the status, for clients to read instead of words.

Nothing a bot sends makes the server hold more than a fixed amount for it: its
outbox is bounded by messages and bytes (a bot that does not read is
disconnected, not buffered), replies to its stray messages are rate-limited,
and the request ids it answered are remembered in a bounded window.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final, Protocol

import grpc
from google.protobuf.message import DecodeError

from uno_arena.server.metrics import ServerMetrics
from uno_arena.server.settings import ServerSettings
from uno_arena.v1 import bot_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.printable import printable

log = logging.getLogger(__name__)

REPLACED = "replaced by a newer connection of the same bot"  # for people: clients read CLOSE_REASON_REPLACED
TOKEN_REVOKED = "token replaced or revoked"
DRAINED = "drained: its last match finished"
DRAIN_REASON_CHARS = 256  # Drain.reason is cut to this (it only goes to the log)
ANSWERED, LATE = "answered", "late"  # what became of a request that is no longer pending
BOT_ERROR_DETAIL_CHARS = 512  # BotError.detail is cut to this (bot.proto)

UNKNOWN_REQUEST: Final = -2  # answered() sentinel: the bot answered a request id we never sent

# What takes a bot's BotError in a running match: (connection, request id, detail) -> None when
# recorded, else why it was ignored (answered as a stray).
BotErrorSink = Callable[["BotConnection", str, str], "str | None"]


def too_long(field: str, value: str, limit: int) -> str | None:
    """The refusal of an over-long id or name: names the field and the limit, never echoes the value."""
    if len(value) <= limit:
        return None
    return f"{field}: at most {limit} characters, got {len(value)}"


class BotStream(Protocol):
    """What the gateway reads a bot's stream with (gRPC's servicer context of `Connect`)."""

    async def read(self) -> object:
        """The next BotMessage, or `grpc.aio.EOF` once the bot's side has ended."""


class NoNewMatches(Exception):
    """The server is draining: `Gateway.reserve` gives no slot to anyone any more."""


class DuplicateLink(Exception):
    """The bot's client is connected to this server already on another of its links (`Gateway.attach`)."""


class PendingDecision(Protocol):
    """A decision request sent on a connection and not answered yet (a match's `Asked`).

    Its answer is handed over at once, by the task that read it: no future, no task wake-up
    per decision. The connection's loss is handed over soon after, never inside `close`, which
    runs in the midst of other work.
    """

    match_id: str
    held: bool  # past its deadline, with nothing heard from the bot since it was asked (`heard_from`)

    def answered(self, action_id: int) -> None:
        """The bot answered with `action_id` (`UNKNOWN_REQUEST`: with an id of no pending request)."""

    def lost(self, reason: str) -> None:
        """The connection ended first, for `reason`."""

    def heard_from(self) -> None:
        """(Held only.) The bot sent something: its connection is alive, and the decision is late."""


class StrayVerdict(enum.Enum):
    """What `StrayLimiter.take` allows for one stray message."""

    REPLY = "reply"  # answer it with a no-strike INVALID fault
    DROP = "drop"  # over the rate: no reply (counted)
    FLOOD = "flood"  # so many dropped in one burst that the bot is disconnected


@dataclass(eq=False)
class StrayLimiter:
    """A token bucket for replies to stray messages; a burst ends when the bucket is full again."""

    rate: float
    burst: int
    flood: int
    tokens: float = 0.0
    updated: float = field(default_factory=time.monotonic)
    dropped: int = 0  # in the current burst
    dropped_total: int = 0

    def __post_init__(self) -> None:
        self.tokens = float(self.burst)

    def take(self) -> StrayVerdict:
        """REPLY, DROP (over the rate) or FLOOD (so many dropped in one burst: disconnect)."""
        now = time.monotonic()
        self.tokens = min(float(self.burst), self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= self.burst:
            self.dropped = 0  # it calmed down: a new burst may begin
        if self.tokens >= 1:
            self.tokens -= 1
            return StrayVerdict.REPLY
        self.dropped += 1
        self.dropped_total += 1
        return StrayVerdict.FLOOD if self.dropped >= self.flood else StrayVerdict.DROP


@dataclass(eq=False)
class BotConnection:
    """A connected bot: what it announced, its outbox, its pending decision requests."""

    name: str
    max_matches: int
    ask_single: bool
    client: str = ""
    token_sha256: str = ""  # of the token it said Hello with: re-checked against Redis
    settings: ServerSettings = field(default_factory=ServerSettings)
    connected_at: float = field(default_factory=time.monotonic)
    pending: dict[str, PendingDecision] = field(default_factory=dict)
    closed: bool = False
    close_reason: str = ""  # for people and logs: the status message
    close_code: grpc.StatusCode | None = None  # None: the stream ends OK after what is queued
    close_why: bot_pb2.CloseReason = bot_pb2.CLOSE_REASON_UNSPECIFIED  # sent beside the status, for clients
    # ends the stream at once, with (code, message, reason)
    on_forced_close: Callable[[grpc.StatusCode, str, bot_pb2.CloseReason], None] | None = None
    queued_bytes: int = 0
    peak_messages: int = 0  # the most messages / bytes ever queued (for tests and logs)
    peak_bytes: int = 0
    draining: bool = False  # the bot sent Drain: no new match; the stream ends OK after its last one
    drain_reason: str = ""
    heard: int = 0  # messages read from the bot so far: a decision asked at `heard` == n hears of none
    holding: int = 0  # its decisions held past their deadline for the keepalive's verdict (`held`)
    follow_pool: bool = False  # Hello.follow_pool: told of every change of the pool (PoolChanged)
    instance: str = ""  # Hello.instance and Hello.link: which client, and which of its connections
    link: str = ""

    def __post_init__(self) -> None:
        self._outbox: deque[bytes] = deque()
        self._writer: asyncio.Future[None] | None = None  # the writer, waiting for a message
        self._loop: asyncio.AbstractEventLoop | None = None  # the writer's (get_running_loop() calls getpid)
        self._finished: OrderedDict[str, tuple[str, str]] = OrderedDict()  # request id -> (fate, match id)
        settings = self.settings
        self.strays = StrayLimiter(settings.stray_replies_per_s, settings.stray_burst, settings.stray_flood)

    # --- the outbox ---------------------------------------------------------

    def send(self, message: bot_pb2.ServerMessage | bytes) -> None:
        """Queue a message (or a serialized `ServerMessage`); one too many disconnects the bot."""
        if self.closed:
            return
        data = message if isinstance(message, bytes) else message.SerializeToString()
        limits = self.settings
        if (
            len(self._outbox) >= limits.outbox_max_messages
            or self.queued_bytes + len(data) > limits.outbox_max_bytes
        ):
            self.close(
                f"the bot does not read its messages: {len(self._outbox)} messages "
                f"({self.queued_bytes} bytes) wait for it; the limit is {limits.outbox_max_messages} "
                f"messages or {limits.outbox_max_bytes} bytes",
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                bot_pb2.CLOSE_REASON_OUTBOX_FULL,
            )
            return
        outbox = self._outbox
        outbox.append(data)
        self.queued_bytes += len(data)
        if len(outbox) > self.peak_messages:
            self.peak_messages = len(outbox)
        if self.queued_bytes > self.peak_bytes:
            self.peak_bytes = self.queued_bytes
        self._wake_writer()

    def _wake_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None and not writer.done():
            writer.set_result(None)

    async def next_message(self) -> bytes | None:
        """The next message to write; None once closed and drained (a forced close drops the rest)."""
        while not self._outbox:
            if self.closed:
                return None
            # one future while the outbox is empty, rather than an Event's per message
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            self._writer = loop.create_future()
            await self._writer
        data = self._outbox.popleft()
        self.queued_bytes -= len(data)
        return data

    def queued(self) -> int:
        return len(self._outbox)

    def close(
        self,
        reason: str,
        code: grpc.StatusCode | None = None,
        why: bot_pb2.CloseReason = bot_pb2.CLOSE_REASON_UNSPECIFIED,
    ) -> None:
        """End the stream; every pending decision is told it is lost (soon after).

        With a `code`, the stream ends at once with that status (what is queued is dropped, a
        write the bot does not take is abandoned); without, it ends OK after what is queued.
        `reason` is the status message, for people; `why` goes beside it as the stream's
        `CloseReason`, what clients act on.
        """
        if self.closed:
            return
        self.closed, self.close_reason, self.close_code, self.close_why = True, reason, code, why
        if self.pending:
            loop = asyncio.get_running_loop()
            for pending in self.pending.values():
                loop.call_soon(pending.lost, reason)
            self.pending.clear()
        if code is not None:
            self._outbox.clear()
            self.queued_bytes = 0
            if self.on_forced_close is not None:
                self.on_forced_close(code, reason, why)
        self._wake_writer()

    # --- answers ------------------------------------------------------------

    def _remember(self, request_id: str, fate: str, match_id: str) -> None:
        self._finished[request_id] = (fate, match_id)
        while len(self._finished) > self.settings.answered_kept:
            self._finished.popitem(last=False)

    def expire(self, request_id: str) -> None:
        """Forget a request that timed out; a late answer to it is then known as late."""
        pending = self.pending.pop(request_id, None)
        self._remember(request_id, LATE, pending.match_id if pending is not None else "")

    def answer(self, request_id: str, action_id: int) -> bool:
        """Hand the answer to its pending request; False if the id is unknown (or already answered)."""
        pending = self.pending.pop(request_id, None)
        if pending is None:
            return False
        self._remember(request_id, ANSWERED, pending.match_id)
        pending.answered(action_id)
        return True

    def fate(self, request_id: str) -> str | None:
        """ANSWERED or LATE for a request no longer pending (among the recent ones), else None."""
        finished = self._finished.get(request_id)
        return finished[0] if finished is not None else None

    def match_of(self, request_id: str) -> str | None:
        """The match of a request sent on this connection, pending or recent; None if unknown."""
        pending = self.pending.get(request_id)
        if pending is not None:
            return pending.match_id
        finished = self._finished.get(request_id)
        return finished[1] if finished is not None and finished[1] else None

    def stray(self, match_id: str, detail: str) -> None:
        """Tell the bot about a message that affected no match (no strike), within the rate limit."""
        verdict = self.strays.take()
        if verdict is StrayVerdict.REPLY:
            fault = pb.Fault(match_id=match_id, kind=pb.FAULT_KIND_INVALID, detail=detail)
            self.send(bot_pb2.ServerMessage(fault=fault))
            return
        limiter = self.strays
        if limiter.dropped == 1:
            log.warning(
                "bot %s sends stray messages faster than %g/s: replies dropped until it calms down (%s)",
                self.name, limiter.rate, printable(detail), extra={"bot": self.name},
            )  # fmt: skip
        if verdict is StrayVerdict.FLOOD:
            self.close(
                f"too many stray messages: {limiter.dropped} in one burst over {limiter.rate:g}/s "
                "(late, duplicate or unknown answers)",
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                bot_pb2.CLOSE_REASON_STRAY_FLOOD,
            )


class Gateway:
    """Connected bots by name, and their match slots; `metrics` counts what happens to them (a new
    `ServerMetrics` unless given)."""

    def __init__(self, metrics: ServerMetrics | None = None) -> None:
        self.metrics = metrics if metrics is not None else ServerMetrics()
        self._bots: dict[str, BotConnection] = {}
        self._active: dict[str, int] = {}  # matches in progress per bot name (survives reconnects)
        self._changed = asyncio.Condition()
        self._endings: set[asyncio.Task[None]] = set()  # streams being ended with a status
        self._wakes: set[asyncio.Task[None]] = set()  # `wake`'s notifications under way
        self.refusing: str | None = None  # why no new match starts (the server drains), or None
        self.reserving = 0  # PlayMatch calls waiting in `reserve` for their bots
        self._bot_error_sinks: dict[str, BotErrorSink] = {}  # running match id -> its BotError taker
        # told whenever a bot's free match slots may have changed (its pool entry is written then:
        # `uno_arena.server.membership`)
        self.on_slots_changed: Callable[[], None] | None = None

    def connection(self, name: str) -> BotConnection | None:
        return self._bots.get(name)

    def connections(self) -> list[BotConnection]:
        return list(self._bots.values())

    def connected(self) -> int:
        """How many bots are connected (read from the metrics' thread too: one atomic `len`)."""
        return len(self._bots)

    def active_matches(self, name: str) -> int:
        return self._active.get(name, 0)

    async def attach(self, connection: BotConnection) -> None:
        """Register a new connection; an older one under the same name is replaced, unless it is the
        same client's (Hello.instance) on another of its links (Hello.link): then the new one is
        refused with `DuplicateLink` (the client reached this server by two addresses)."""
        old = self._bots.get(connection.name)
        if (old is not None and not old.closed and connection.instance and old.instance == connection.instance
                and old.link != connection.link):  # fmt: skip
            raise DuplicateLink(
                f"bot {connection.name} is connected to this server already by the same client (its link "
                f"{printable(old.link)!r}); this link stays unused"
            )
        self._bots[connection.name] = connection
        if old is not None:
            log.info(
                "bot %s reconnected: the older connection is replaced",
                connection.name,
                extra={"bot": connection.name},
            )
            old.close(REPLACED, grpc.StatusCode.ABORTED, bot_pb2.CLOSE_REASON_REPLACED)
        await self._notify()

    async def detach(self, connection: BotConnection, reason: str) -> None:
        connection.close(reason)
        if connection.close_why == bot_pb2.CLOSE_REASON_OUTBOX_FULL:  # counted once, as its stream ends
            self.metrics.outbox_cutoffs.inc()
        if self._bots.get(connection.name) is connection:
            del self._bots[connection.name]
        await self._notify()

    # --- BotError: routed by request id, like a Decision ---------------------

    def take_bot_errors(self, match_id: str, sink: BotErrorSink) -> None:
        """A running match takes the BotErrors quoting its requests (until `drop_bot_errors`)."""
        self._bot_error_sinks[match_id] = sink

    def drop_bot_errors(self, match_id: str) -> None:
        self._bot_error_sinks.pop(match_id, None)

    def bot_error(self, connection: BotConnection, report: bot_pb2.BotError) -> None:
        """Hand a bot's report of its own failure to the running match whose request it quotes.

        The request must have been sent on this connection and still be pending or among the
        recently answered (or timed out) ones; anything else is a stray (no strike), as is a
        second report of the same request, which the match refuses.
        """
        request_id = report.request_id
        problem = too_long("request_id", request_id, connection.settings.max_id_chars)
        if problem:
            connection.stray("", f"BotError.{problem}: ignored")
            return
        match_id = connection.match_of(request_id)
        sink = self._bot_error_sinks.get(match_id) if match_id is not None else None
        if match_id is None or sink is None:
            connection.stray(match_id or "", f"BotError for no recent request {request_id!r} of a running "
                                             "match: ignored")  # fmt: skip
            return
        # one line in every log, and nothing a terminal acts on (ESC, BEL ... escaped, not sent on raw)
        detail = printable(" ".join(report.detail[:BOT_ERROR_DETAIL_CHARS].split()))
        ignored = sink(connection, request_id, detail)
        if ignored is not None:
            connection.stray(match_id, ignored)

    # --- what a bot sends after Hello -------------------------------------------

    async def read(self, connection: BotConnection, context: BotStream) -> None:
        """Take the bot's messages until its side of the stream ends (or the connection closes).

        Part of the decision path: compiled with it (the servicer, interpreted, only starts it).
        """
        try:
            while True:
                message: object = await context.read()
                if not isinstance(message, bot_pb2.BotMessage):  # grpc.aio.EOF: the bot's side ended
                    break
                if connection.closed:
                    return
                connection.heard += 1
                if connection.holding:
                    self._heard(connection)
                kind = message.WhichOneof("kind")
                if kind == "decision":
                    decision = message.decision
                    self.answer(connection, decision.request_id, decision.action_id)
                elif kind == "ping":
                    connection.send(bot_pb2.ServerMessage(pong=bot_pb2.Pong(nonce=message.ping.nonce)))
                elif kind == "bot_error":
                    self.bot_error(connection, message.bot_error)
                elif kind == "drain":
                    self.drain(connection, message.drain.reason)
                else:
                    connection.stray("", f"unexpected {kind or 'empty'} message after Hello: ignored")
            # gRPC reads the same end for a bot that closed its side and for a connection that died
            # (reset, or closed by the keepalive): the words say both
            connection.close("the bot's stream ended (closed by the bot, or its connection lost)")
        except asyncio.CancelledError:
            raise
        except DecodeError:
            connection.close("the bot sent bytes that are not a BotMessage", grpc.StatusCode.INVALID_ARGUMENT,
                             bot_pb2.CLOSE_REASON_NOT_A_BOT_MESSAGE)  # fmt: skip
        except Exception as error:  # a broken stream: reset, or ended by the server meanwhile
            connection.close(f"stream error: {error}", grpc.StatusCode.UNKNOWN)

    def _heard(self, connection: BotConnection) -> None:
        """The bot's connection carried a message: the decisions held for the keepalive's verdict are
        late, not lost (before the message itself is taken: a late answer is then a stray)."""
        for pending in list(connection.pending.values()):
            if pending.held:
                pending.heard_from()

    def answer(self, connection: BotConnection, request_id: str, action_id: int) -> None:
        """Resolve a decision; anything else is a stray (no strike), except an unknown id of a match
        with a decision due, which makes that decision INVALID. A repeated answer changes nothing."""
        problem = too_long("request_id", request_id, connection.settings.max_id_chars)
        if problem:
            connection.stray("", f"Decision.{problem}: ignored")
            return
        if connection.answer(request_id, action_id):
            return
        match_id = request_id.rpartition("#")[0]
        fate = connection.fate(request_id)
        if fate == ANSWERED:
            connection.stray(match_id, f"duplicate answer to {request_id!r}: ignored (it was answered)")
        elif fate == LATE:
            connection.stray(match_id, f"late answer to {request_id!r}: its deadline had passed")
        elif waiting := [rid for rid, p in connection.pending.items() if p.match_id == match_id]:
            connection.answer(waiting[0], UNKNOWN_REQUEST)  # a wrong id while a decision is due: INVALID
        else:
            connection.stray(match_id, f"no pending request {request_id!r} (late or unknown)")

    def free_slots(self) -> dict[str, int]:
        """Bot name -> match slots it has free, of every connected bot that takes new matches (not one
        draining, nor one whose link may be dead: `holding`)."""
        return {name: max(connection.max_matches - self._active.get(name, 0), 0)
                for name, connection in self._bots.items()
                if not connection.closed and not connection.draining and not connection.holding}  # fmt: skip

    def tell_pool(self, servers: Iterable[str]) -> None:
        """Send PoolChanged to every connection that follows the pool."""
        message = bot_pb2.ServerMessage(pool_changed=bot_pb2.PoolChanged(servers=list(servers)))
        data = message.SerializeToString()
        for connection in self._bots.values():
            if connection.follow_pool:
                connection.send(data)

    def track_ending(self, ending: asyncio.Task[None]) -> None:
        """A task ending a stream with a status (see `close_all`)."""
        self._endings.add(ending)
        ending.add_done_callback(self._endings.discard)

    async def close_all(
        self, reason: str, code: grpc.StatusCode, why: bot_pb2.CloseReason, timeout: float
    ) -> None:
        """End every bot's stream with `code` and `why`, and wait (up to `timeout` s) until all are
        gone and their statuses went out (a server stopped before would end them with its own)."""
        deadline = asyncio.get_running_loop().time() + timeout
        for connection in self.connections():
            connection.close(reason, code, why)
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: not self._bots), timeout)
            except TimeoutError:
                log.warning("%d bot streams did not end within %g s", len(self._bots), timeout)
        if self._endings:
            await asyncio.wait(
                set(self._endings), timeout=max(deadline - asyncio.get_running_loop().time(), 0)
            )

    async def reserve(self, names: Iterable[str], timeout: float) -> None:
        """Take one match slot of each bot, waiting until all are connected with a free slot.

        Raises `TimeoutError` with a message naming the first bot that is missing, and
        `NoNewMatches` once the server drains (a call waiting then gives up at once).
        """
        wanted = list(names)

        def ready() -> bool:
            return self.refusing is not None or self._missing(wanted) is None

        async with self._changed:
            self.reserving += 1
            try:
                await asyncio.wait_for(self._changed.wait_for(ready), timeout)
            except TimeoutError:
                raise TimeoutError(self._missing(wanted) or "bots became unavailable") from None
            finally:
                self.reserving -= 1
            if self.refusing is not None:
                raise NoNewMatches(self.refusing)
            for name in wanted:
                self._active[name] = self._active.get(name, 0) + 1
        self._slots_changed()

    def _missing(self, names: list[str]) -> str | None:
        for name in names:
            connection = self._bots.get(name)
            if connection is None or connection.closed:
                return f"bot {name!r} is not connected"
            if connection.draining:  # it finishes its matches and takes no new one
                return f"bot {name!r} is draining (it takes no new match)"
            if connection.holding:  # its link may be dead: the keepalive says within `dead_link_s`
                return f"bot {name!r} is not answering: nothing heard from it since a decision was due"
            if self._active.get(name, 0) >= connection.max_matches:
                return f"bot {name!r} has no free match slot ({connection.max_matches} in use)"
        return None

    async def refuse_new_matches(self, reason: str) -> None:
        """From now on `reserve` fails with `NoNewMatches(reason)`, including calls waiting in it."""
        self.refusing = reason
        await self._notify()

    def drain(self, connection: BotConnection, reason: str) -> None:
        """The bot's Drain: no new match for this connection; its stream ends OK after its last one.

        Answered once with Draining (a repeated Drain changes nothing). A reconnect is a new
        connection, not draining unless it says Drain again.
        """
        if connection.draining or connection.closed:
            return
        connection.draining, connection.drain_reason = True, printable(reason[:DRAIN_REASON_CHARS])
        running = self._active.get(connection.name, 0) if self._bots.get(connection.name) is connection else 0
        matches = "match" if running == 1 else "matches"
        log.info("bot %s draining: %d %s left (%s)", connection.name, running, matches,
                 connection.drain_reason or "no reason given", extra={"bot": connection.name})  # fmt: skip
        connection.send(bot_pb2.ServerMessage(draining=bot_pb2.Draining(running_matches=running)))
        self._slots_changed()
        if not running:
            connection.close(DRAINED, None, bot_pb2.CLOSE_REASON_DRAINED)

    async def release(self, names: Iterable[str]) -> None:
        for name in names:
            self._active[name] = max(0, self._active.get(name, 0) - 1)
            if not self._active[name]:
                del self._active[name]  # bounded by the bots in matches, not by every name ever seen
                connection = self._bots.get(name)
                if connection is not None and connection.draining:
                    # OK, once its MatchFinished (queued already) went out
                    connection.close(DRAINED, None, bot_pb2.CLOSE_REASON_DRAINED)
        await self._notify()

    async def wait_for_connection(self, name: str, timeout: float) -> BotConnection | None:
        """The bot's live connection, waiting up to `timeout` seconds for it to come back."""
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: self._live(name) is not None), timeout)
            except TimeoutError:
                return None
            return self._live(name)

    def _live(self, name: str) -> BotConnection | None:
        connection = self._bots.get(name)
        return connection if connection is not None and not connection.closed else None

    def wake(self) -> None:
        """Have `reserve` look again (from code that cannot wait: a match settling a decision)."""
        task = asyncio.get_running_loop().create_task(self._notify())
        self._wakes.add(task)
        task.add_done_callback(self._wakes.discard)

    async def _notify(self) -> None:
        self._slots_changed()
        async with self._changed:
            self._changed.notify_all()

    def _slots_changed(self) -> None:
        if self.on_slots_changed is not None:
            self.on_slots_changed()
