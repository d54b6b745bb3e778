"""The bot gateway: authenticated bot connections, their match slots and pending decisions.

One `BotConnection` per connected bot name. A second connection under the same
name replaces the first (the first stream ends with ABORTED), and the matches
of the first continue on the second: that is how a bot reconnects.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from uno_arena.v1 import bot_pb2

log = logging.getLogger(__name__)


class Disconnected(Exception):
    """The bot's connection ended while a decision was pending."""


@dataclass(eq=False)
class PendingDecision:
    match_id: str
    future: asyncio.Future[int]


@dataclass(eq=False)
class BotConnection:
    """A connected bot: what it announced, its outbox, its pending decision requests."""

    name: str
    max_matches: int
    ask_single: bool
    client: str = ""
    connected_at: float = field(default_factory=time.monotonic)
    outbox: asyncio.Queue[bot_pb2.ServerMessage | bytes | None] = field(default_factory=asyncio.Queue)
    pending: dict[str, PendingDecision] = field(default_factory=dict)
    closed: bool = False
    close_reason: str = ""
    expired: deque[str] = field(default_factory=lambda: deque(maxlen=256))  # recently timed-out request ids

    def send(self, message: bot_pb2.ServerMessage | bytes) -> None:
        """Queue a message (or a serialized `ServerMessage`) for the bot."""
        if not self.closed:
            self.outbox.put_nowait(message)

    def close(self, reason: str) -> None:
        """End the stream and fail every pending decision with `Disconnected`."""
        if self.closed:
            return
        self.closed, self.close_reason = True, reason
        self.outbox.put_nowait(None)
        for pending in self.pending.values():
            if not pending.future.done():
                pending.future.set_exception(Disconnected(reason))
        self.pending.clear()

    def expire(self, request_id: str) -> None:
        """Forget a request that timed out; a late answer to it is then known as late."""
        self.pending.pop(request_id, None)
        self.expired.append(request_id)

    def answer(self, request_id: str, action_id: int) -> bool:
        """Resolve a pending request; False if the id is unknown (or already answered)."""
        pending = self.pending.pop(request_id, None)
        if pending is None or pending.future.done():
            return False
        pending.future.set_result(action_id)
        return True


class Gateway:
    """Connected bots by name, and their match slots."""

    def __init__(self) -> None:
        self._bots: dict[str, BotConnection] = {}
        self._active: dict[str, int] = {}  # matches in progress per bot name (survives reconnects)
        self._changed = asyncio.Condition()

    def connection(self, name: str) -> BotConnection | None:
        return self._bots.get(name)

    def connections(self) -> list[BotConnection]:
        return list(self._bots.values())

    def active_matches(self, name: str) -> int:
        return self._active.get(name, 0)

    async def attach(self, connection: BotConnection) -> None:
        """Register a new connection; an older one under the same name is replaced."""
        old = self._bots.get(connection.name)
        self._bots[connection.name] = connection
        if old is not None:
            log.info("bot %s reconnected: the older connection is replaced", connection.name)
            old.close("replaced by a newer connection of the same bot")
        await self._notify()

    async def detach(self, connection: BotConnection, reason: str) -> None:
        connection.close(reason)
        if self._bots.get(connection.name) is connection:
            del self._bots[connection.name]
        await self._notify()

    async def reserve(self, names: Iterable[str], timeout: float) -> None:
        """Take one match slot of each bot, waiting until all are connected with a free slot.

        Raises `TimeoutError` with a message naming the first bot that is missing.
        """
        wanted = list(names)
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: self._missing(wanted) is None), timeout)
            except TimeoutError:
                raise TimeoutError(self._missing(wanted) or "bots became unavailable") from None
            for name in wanted:
                self._active[name] = self._active.get(name, 0) + 1

    def _missing(self, names: list[str]) -> str | None:
        for name in names:
            connection = self._bots.get(name)
            if connection is None:
                return f"bot {name!r} is not connected"
            if self._active.get(name, 0) >= connection.max_matches:
                return f"bot {name!r} has no free match slot ({connection.max_matches} in use)"
        return None

    async def release(self, names: Iterable[str]) -> None:
        for name in names:
            self._active[name] = max(0, self._active.get(name, 0) - 1)
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

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()
