"""The arena: the running matches of one server, the bot gateway and the settings.

Matches are tasks owned by the arena, not by the control call that asked for
them, so a caller that goes away does not abort a match; a retried PlayMatch
for the same id attaches to it (or gets its result, if it finished within the
retention window), and one for the same id naming a different match is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import redis
import redis.asyncio as aioredis

from uno_arena.records import identity
from uno_arena.server.gateway import TOKEN_REVOKED, BotConnection, Gateway
from uno_arena.server.match_host import MatchHost, MatchSpec, Progress
from uno_arena.server.metrics import ServerMetrics
from uno_arena.server.settings import ServerSettings
from uno_arena.server.throttle import FailureLimiter
from uno_arena.v1 import bot_pb2
from uno_arena.v1 import game_pb2 as pb

log = logging.getLogger(__name__)

SERVER_DRAINING = "the server is draining: it finishes its running matches and starts no new one"
SERVER_STOPPING = "the server is stopping"


@dataclass(frozen=True, slots=True)
class FinishedEntry:
    """A finished match kept for retried PlayMatch calls: its spec (to refuse a different match
    under the same id), its ending messages, when it finished and their encoded size."""

    spec: MatchSpec
    ending: list[Progress]
    finished_at: float
    size: int


class FinishedMatches:
    """Finished results by match id, kept for a time and within a byte budget, oldest dropped first."""

    def __init__(
        self, keep_seconds: float, max_bytes: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.keep_seconds, self.max_bytes, self.clock = keep_seconds, max_bytes, clock
        self._entries: OrderedDict[str, FinishedEntry] = OrderedDict()
        self.bytes = 0

    def add(self, spec: MatchSpec, ending: list[Progress]) -> None:
        size = sum(len(m) if isinstance(m, bytes) else m.ByteSize() for m in ending)
        replaced = self._entries.pop(spec.match_id, None)
        if replaced is not None:
            self.bytes -= replaced.size
        self._entries[spec.match_id] = FinishedEntry(spec, ending, self.clock(), size)
        self.bytes += size
        self._prune()

    def get(self, match_id: str) -> FinishedEntry | None:
        self._prune()
        return self._entries.get(match_id)

    def __contains__(self, match_id: object) -> bool:
        return isinstance(match_id, str) and self.get(match_id) is not None

    def __len__(self) -> int:
        return len(self._entries)

    def _prune(self) -> None:
        expired = self.clock() - self.keep_seconds
        while self._entries:
            oldest = next(iter(self._entries.values()))
            if oldest.finished_at > expired and self.bytes <= self.max_bytes:
                return
            self._entries.popitem(last=False)
            self.bytes -= oldest.size


class Arena:
    def __init__(
        self, settings: ServerSettings, redis: aioredis.Redis, metrics: ServerMetrics | None = None
    ) -> None:
        self.settings = settings
        self.redis = redis
        self.metrics = metrics if metrics is not None else ServerMetrics()
        self.gateway = Gateway(self.metrics)
        self.running: dict[str, MatchHost] = {}
        self.metrics.watch(self.gateway.connected, self.running.__len__)
        self.finished = FinishedMatches(settings.finished_keep_ms / 1000, settings.finished_max_bytes)
        self.draining = False  # no new matches
        self.stopping = False  # no new bot connections either
        # Its pool (`uno_arena.server.membership` keeps them): this server's address there, the name,
        # and the pool's servers taking new matches as last read (told to bots in Welcome and
        # PoolChanged)
        self.address = ""
        self.pool_name = settings.pool
        self.pool: tuple[str, ...] = ()
        self.actions_done = 0  # actions applied in the matches finished so far (for actions per second)
        self._tasks: set[asyncio.Task[None]] = set()
        self._token_watch: asyncio.Task[None] | None = None
        self.token_checks = 0  # rounds of the token watch, answered by Redis or not
        # failed authentications per peer address: refused Hellos, and control calls' wrong tokens
        self.hello_failures = self._failure_limiter()
        self.control_failures = self._failure_limiter()

    def _failure_limiter(self) -> FailureLimiter:
        settings = self.settings
        return FailureLimiter(settings.auth_failure_burst, settings.auth_failures_per_s,
                              settings.auth_failure_peers, settings.auth_refusal_hold_ms / 1000,
                              settings.auth_refusals_held)  # fmt: skip

    def start(self, spec: MatchSpec) -> MatchHost:
        """Run a match whose bots' slots are already reserved."""
        host = MatchHost(spec, self.gateway)
        self.running[spec.match_id] = host
        task = asyncio.create_task(self._run(host), name=f"match {spec.match_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return host

    async def _run(self, host: MatchHost) -> None:
        try:
            await host.run()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception(
                "match %s crashed",
                host.spec.match_id,  # a bug of ours, never a bot's
                extra={"match_id": host.spec.match_id},
            )
            host.finish(None if host.match.result is not None else pb.MATCH_END_ABORTED)
        finally:
            await self.gateway.release(host.spec.bots)
            self.running.pop(host.spec.match_id, None)
            self.actions_done += len(host.match.actions)
            if host.ending is not None:
                self.finished.add(host.spec, host.ending)

    def actions_applied(self) -> int:
        """Actions applied in every match so far, the running ones' included."""
        return self.actions_done + sum(len(host.match.actions) for host in self.running.values())

    def load(self) -> int:
        """What placement compares servers by: the matches running and those waiting for their bots."""
        return len(self.running) + self.gateway.reserving

    def set_pool(self, servers: list[str]) -> None:
        """The pool's open servers as just read: a change is told to the bots that follow the pool."""
        pool = tuple(servers)
        if pool != self.pool:
            self.pool = pool
            self.gateway.tell_pool(pool)

    async def drain(self, timeout: float) -> int:
        """Refuse new matches, let running ones finish (up to `timeout` s), then abort the rest.

        Returns how many were aborted.
        """
        self.draining = True
        await self.gateway.refuse_new_matches(SERVER_DRAINING)
        if not self._tasks:
            return 0
        _, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        return len(pending)

    # --- bot connections and their tokens -----------------------------------

    async def connect(self, connection: BotConnection) -> None:
        """Attach a bot whose token was checked; its token is re-checked while it stays."""
        await self.gateway.attach(connection)
        if self._token_watch is None or self._token_watch.done():
            self._token_watch = asyncio.create_task(self._watch_tokens(), name="token watch")

    async def disconnect(self, connection: BotConnection, reason: str) -> None:
        await self.gateway.detach(connection, reason)
        if not self.gateway.connections() and self._token_watch is not None:
            self._token_watch.cancel()  # nobody to watch: it lives only while bots are connected
            self._token_watch = None

    async def _watch_tokens(self) -> None:
        """End the connections whose token was replaced or revoked, every `token_check_ms`.

        Redis being unreachable disconnects nobody: the check is skipped until it answers.
        """
        interval, failing = self.settings.token_check_ms / 1000, False
        while True:
            await asyncio.sleep(interval)
            connections = [c for c in self.gateway.connections() if not c.closed]
            if not connections:
                continue
            try:
                digests = await identity.bot_token_digests(
                    self.redis, self.settings.key_prefix, [c.name for c in connections]
                )
            except (redis.RedisError, OSError) as error:
                self.token_checks += 1
                if not failing:
                    log.warning("cannot re-check bot tokens (connected bots stay connected): %s", error)
                failing = True
                continue
            self.token_checks += 1
            if failing:
                log.info("Redis answers again: bot tokens are re-checked")
                failing = False
            for connection, digest in zip(connections, digests, strict=True):
                if not identity.same_digest(digest, connection.token_sha256):
                    log.info(
                        "bot %s: its token was replaced or revoked; disconnecting it",
                        connection.name,
                        extra={"bot": connection.name},
                    )
                    connection.close(
                        TOKEN_REVOKED, grpc.StatusCode.UNAUTHENTICATED, bot_pb2.CLOSE_REASON_TOKEN_REVOKED
                    )

    async def stop_bots(self, timeout: float) -> None:
        """End every bot stream (UNAVAILABLE: the bots reconnect to the next server) before stopping."""
        self.stopping = True
        await self.gateway.close_all(
            SERVER_STOPPING, grpc.StatusCode.UNAVAILABLE, bot_pb2.CLOSE_REASON_SERVER_STOPPING, timeout
        )
        if self._token_watch is not None:
            self._token_watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._token_watch
            self._token_watch = None
