"""The arena: the running matches of one server, the bot gateway and the settings.

Matches are tasks owned by the arena, not by the control call that asked for
them, so a caller that goes away does not abort a match; a retried PlayMatch
for the same id attaches to it (or gets its result, if it finished recently).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

import redis.asyncio as aioredis

from uno_arena.server.gateway import Gateway
from uno_arena.server.match_host import MatchHost, MatchSpec
from uno_arena.server.settings import ServerSettings
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb

log = logging.getLogger(__name__)


class Arena:
    def __init__(self, settings: ServerSettings, redis: aioredis.Redis) -> None:
        self.settings = settings
        self.redis = redis
        self.gateway = Gateway()
        self.running: dict[str, MatchHost] = {}
        self.finished: OrderedDict[str, list[control_pb2.MatchProgress]] = OrderedDict()  # id -> ending
        self.draining = False
        self._tasks: set[asyncio.Task[None]] = set()

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
            log.exception("match %s crashed", host.spec.match_id)  # a bug of ours, never a bot's
            host.finish(None if host.match.result is not None else pb.MATCH_END_ABORTED)
        finally:
            await self.gateway.release(host.spec.bots)
            self.running.pop(host.spec.match_id, None)
            if host.ending is not None:
                self.finished[host.spec.match_id] = host.ending
                while len(self.finished) > self.settings.finished_matches_kept:
                    self.finished.popitem(last=False)

    async def drain(self, timeout: float) -> None:
        """Refuse new matches, let running ones finish (up to `timeout` s), then abort the rest."""
        self.draining = True
        if self._tasks:
            log.info("draining %d running matches", len(self._tasks))
            _, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
