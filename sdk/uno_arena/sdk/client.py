"""The connection loop: connect, say Hello, answer decisions, reconnect with backoff, stop cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeAlias

import grpc

from uno_arena.sdk.actions import Action
from uno_arena.sdk.bot import Bot
from uno_arena.sdk.events import MatchInfo, event_from, hand_result_from, match_result_from
from uno_arena.sdk.observation import Observation, observation_from
from uno_arena.v1 import bot_pb2, bot_pb2_grpc

log = logging.getLogger(__name__)

# the bot's stream (the generated stub module is untyped)
_Call: TypeAlias = grpc.aio.StreamStreamCall[bot_pb2.BotMessage, bot_pb2.ServerMessage]

KEEPALIVE = [
    ("grpc.keepalive_time_ms", 5000),
    ("grpc.keepalive_timeout_ms", 5000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]


# How the server ends the stream of a connection that another one of the same bot replaced
# (ABORTED, with these words): the replaced copy stops, so two copies never take turns forever.
REPLACED_BY_ANOTHER = "replaced by a newer connection"


class BotRefused(Exception):
    """The server refused the bot's name or token (or the token was replaced or revoked while
    connected); retrying would not help."""


class BotReplaced(BotRefused):
    """Another copy of this bot connected under the same name; this one stops."""


@dataclass(frozen=True, slots=True)
class ClientSettings:
    max_matches: int = 4
    ask_single: bool = False
    deadline_margin: float = 0.15  # answer the safe default this many seconds before the deadline
    backoff_initial: float = 0.5  # first wait before reconnecting; doubles per failed attempt ...
    backoff_max: float = 5.0  # ... up to this; back to `backoff_initial` once the server welcomed us


class BotClient:
    """Runs one `Bot` on one connection until `stop()`; reconnects whenever the stream is lost."""

    def __init__(
        self, bot: Bot, server: str, name: str, token: str, settings: ClientSettings | None = None
    ) -> None:
        self.bot, self.server, self.name, self.token = bot, server, name, token
        self.settings = settings or ClientSettings()
        self._stop = asyncio.Event()
        self._call: _Call | None = None
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self.connected = asyncio.Event()
        self.connections = 0  # times the server welcomed this client (reconnects included)
        self._welcomes = asyncio.Condition()

    def stop(self) -> None:
        self._stop.set()

    async def wait_connected(self, count: int = 1) -> None:
        """Until the server has welcomed this client `count` times (reconnects included)."""
        async with self._welcomes:
            await self._welcomes.wait_for(lambda: self.connections >= count)

    async def _welcomed(self) -> None:
        async with self._welcomes:
            self._welcomes.notify_all()

    async def run(self) -> None:
        """Connect and play until stopped; reconnects whenever the stream is lost.

        Raises `BotRefused` if the token is refused (or replaced or revoked meanwhile), and its
        subclass `BotReplaced` if another copy of this bot connected under the same name.
        """
        backoff = self.settings.backoff_initial
        while not self._stop.is_set():
            welcomed = self.connections
            try:
                await self._session()
            except grpc.aio.AioRpcError as error:
                self._raise_if_final(error)
                log.warning("connection to %s lost: %s %s", self.server, error.code().name, error.details())
            finally:
                self.connected.clear()
            if self._stop.is_set():
                break
            if self.connections > welcomed:
                backoff = self.settings.backoff_initial  # it was up: a restart, not a server that is down
            delay = min(backoff, self.settings.backoff_max) * random.uniform(0.8, 1.2)
            log.info("reconnecting in %.1f s", delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
            backoff = min(backoff * 2, self.settings.backoff_max)

    def _raise_if_final(self, error: grpc.aio.AioRpcError) -> None:
        """Stop for good when reconnecting cannot help: a refused token or Hello (e.g. a name over the
        length limit: the same Hello would be refused again), or another copy took over."""
        details = error.details() or ""
        if error.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INVALID_ARGUMENT):
            log.error("the server refused bot %s: %s", self.name, details or "refused")
            raise BotRefused(details or "refused") from None
        if error.code() == grpc.StatusCode.ABORTED and REPLACED_BY_ANOTHER in details:
            message = f"another copy of bot {self.name} connected; this one stops"
            log.error(message)
            raise BotReplaced(message) from None

    async def _session(self) -> None:
        async with grpc.aio.insecure_channel(self.server, options=KEEPALIVE) as channel:
            call: _Call = bot_pb2_grpc.BotServiceStub(channel).Connect()
            self._call = call
            hello = bot_pb2.Hello(bot_name=self.name, token=self.token, max_matches=self.settings.max_matches,
                                  ask_single=self.settings.ask_single, client="uno-arena-sdk")  # fmt: skip
            await call.write(bot_pb2.BotMessage(hello=hello))
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
                        return
                    message = reading.result()
                    if not isinstance(message, bot_pb2.ServerMessage):  # grpc.aio.EOF: the stream ended
                        return
                    try:
                        self._handle(message)
                    except Exception:  # never drop the connection over one message
                        log.exception("could not handle a %s message", message.WhichOneof("kind"))
            finally:
                stopper.cancel()
                for task in list(self._tasks):
                    task.cancel()

    def _handle(self, message: bot_pb2.ServerMessage) -> None:
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            self.connections += 1
            self.connected.set()
            self._spawn(self._welcomed())
            log.info(
                "%s connected to %s (%d matches at once)", self.name, self.server, message.welcome.max_matches
            )
        elif kind == "match_started":
            started = message.match_started
            rules = {d.name: v for d, v in started.rules.ListFields()}
            info = MatchInfo(started.match_id, started.seat, tuple(started.bots), rules,
                             started.decision_timeout_ms / 1000)  # fmt: skip
            self._hook(self.bot.on_match_start, info)
        elif kind == "events":
            events = [event_from(e) for e in message.events.events]
            self._hook(self.bot.on_events, message.events.match_id, events)
        elif kind == "decision_request":
            self._spawn(self._decide(message.decision_request))
        elif kind == "hand_result":
            self._hook(self.bot.on_hand_end, hand_result_from(message.hand_result))
        elif kind == "match_finished":
            self._hook(self.bot.on_match_end, match_result_from(message.match_finished.result))
        elif kind == "fault":
            fault = message.fault
            log.warning("fault in match %s: %s", fault.match_id, fault.detail)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _hook(self, hook: Callable[..., object], *args: object) -> None:
        try:
            hook(*args)
        except Exception:
            log.exception("%s raised in the bot's code", getattr(hook, "__name__", "hook"))

    async def _decide(self, request: bot_pb2.DecisionRequest) -> None:
        if request.events:
            self._hook(self.bot.on_events, request.match_id, [event_from(e) for e in request.events])
        observation = observation_from(request.match_id, request)
        budget = max(request.deadline_ms / 1000 - self.settings.deadline_margin, 0.01)
        action = await self._choose(observation, budget)
        async with self._write_lock:
            decision = bot_pb2.Decision(request_id=request.request_id, action_id=action.id)
            if self._call is not None:
                await self._call.write(bot_pb2.BotMessage(decision=decision))

    async def _choose(self, observation: Observation, budget: float) -> Action:
        """The bot's action, or the safe default if it raises, returns nonsense or runs out of time."""
        legal = observation.legal
        try:
            if inspect.iscoroutinefunction(self.bot.decide):
                action = await asyncio.wait_for(self.bot.decide(observation), budget)
            else:
                action = await asyncio.wait_for(asyncio.to_thread(self.bot.decide, observation), budget)
        except TimeoutError:
            log.warning("decide() took longer than %.2f s: answering %s (observation: %s)", budget,
                        legal.safe_default(), observation)  # fmt: skip
            return legal.safe_default()
        except Exception:
            log.exception(
                "decide() raised: answering %s (observation: %s)", legal.safe_default(), observation
            )
            return legal.safe_default()
        if not isinstance(action, Action) or action not in legal:
            log.error(
                "decide() returned %r, not one of the legal actions: answering %s",
                action,
                legal.safe_default(),
            )
            return legal.safe_default()
        return action


async def run_bot(
    bot: Bot, server: str, name: str, token: str, settings: ClientSettings | None = None
) -> None:
    """Play until cancelled or refused: the simplest way to run a bot."""
    await BotClient(bot, server, name, token, settings).run()
