"""This server's place in its pool of match servers: its heartbeat in Redis (`uno_arena.records.pool`).

Every `heartbeat_ms` the server writes who it is, its load (matches running or waiting for their bots,
actions applied per second, its CPU) and the free match slots of every bot connected to it (those that
changed; all of them every `pool.WHOLE_EVERY` heartbeats; and, between heartbeats, its load and the
slots that changed as soon as a match starts or ends), and
reads which servers of the pool take new matches, which it tells the bots that follow the pool. The
entry expires `pool_entry_ttl_ms` after the last write, so a server that dies or loses Redis
disappears from placement by itself. Redis being away never affects the matches: the heartbeat
says so in the log once and tries again at the next beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time

import redis
import redis.asyncio as aioredis

from uno_arena.records import pool
from uno_arena.server.arena import Arena

log = logging.getLogger(__name__)

WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})


def advertised_address(listen: str, port: int, advertise: str = "") -> str:
    """The address workers and bots reach this server at: `advertise` if given (a port 0 in it becomes
    the port bound), else the address listened on, with the machine's name for a wildcard host."""
    if advertise:
        host, _, wanted = advertise.rpartition(":")
        return f"{host}:{port}" if wanted == "0" else advertise
    host = listen.rpartition(":")[0]
    if host in WILDCARDS:
        host = socket.getfqdn()
    return f"{host}:{port}"


class Membership:
    """Keeps the server's entry in its pool alive while it serves; `stop` takes it out."""

    def __init__(self, arena: Arena, client: aioredis.Redis, address: str, version: str = "") -> None:
        settings = arena.settings
        self.arena, self.client, self.address, self.version = arena, client, address, version
        self.keys = pool.PoolKeys(settings.key_prefix, pool.check_pool_name(settings.pool))
        self.interval = settings.heartbeat_ms / 1000
        self.ttl_ms = settings.pool_entry_ttl_ms
        self.started = time.time()
        self.beats = 0  # heartbeats written
        self._failing = False
        self._written: dict[str, int] = {}  # the bots' free slots as last written
        self._whole_due = True  # the next heartbeat writes them whole
        self._task: asyncio.Task[None] | None = None
        self._writing = asyncio.Lock()  # one write at a time: each compares with `_written`
        self._changed = False  # slots changed since the last write
        self._updater: asyncio.Task[None] | None = None
        self._last = (time.monotonic(), time.process_time(), 0)  # wall, CPU, actions at the last beat
        arena.address = address

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="pool heartbeat")
        self.arena.gateway.on_slots_changed = self.slots_changed

    def slots_changed(self) -> None:
        """A match started or ended, a bot came, went or drained: write what changed now (one write at a
        time; changes meanwhile go in the next)."""
        self._changed = True
        if self._updater is None or self._updater.done():
            self._updater = asyncio.create_task(self._update(), name="pool update")

    async def _update(self) -> None:
        while self._changed and not self._failing and not self._whole_due:
            self._changed = False
            async with self._writing:
                arena, written = self.arena, self._written
                slots = arena.gateway.free_slots()
                changed = {name: n for name, n in slots.items() if written.get(name) != n}
                gone = [name for name in written if name not in slots]
                try:
                    await pool.update(self.client, self.keys, self.address, arena.load(), len(arena.running),
                                      changed, gone, self.ttl_ms)  # fmt: skip
                except (redis.RedisError, OSError):
                    self._whole_due = True  # the next heartbeat writes everything, or says Redis is away
                    return
                self._written = slots

    async def _run(self) -> None:
        while True:
            await self.beat()
            await asyncio.sleep(self.interval)

    async def beat(self) -> None:
        """Write the entry now (and read the pool's open servers); Redis away: logged, tried next time."""
        async with self._writing:
            await self._beat()

    async def _beat(self) -> None:
        arena = self.arena
        wall, cpu, actions = time.monotonic(), time.process_time(), arena.actions_applied()
        last_wall, last_cpu, last_actions = self._last
        elapsed = max(wall - last_wall, 1e-6)
        self._last = (wall, cpu, actions)
        entry = pool.Entry(
            address=self.address, host=socket.gethostname(), pid=os.getpid(), started=self.started,
            load=arena.load(), running=len(arena.running), bots=len(arena.gateway.connections()),
            actions_per_s=(actions - last_actions) / elapsed, cpu=(cpu - last_cpu) / elapsed,
            draining=arena.draining, heartbeat=time.time(), version=self.version,
        )  # fmt: skip
        slots = arena.gateway.free_slots()
        whole = self._whole_due or self.beats % pool.WHOLE_EVERY == 0
        written = self._written
        changed = slots if whole else {name: n for name, n in slots.items() if written.get(name) != n}
        gone = [] if whole else [name for name in written if name not in slots]
        try:
            beat = await pool.heartbeat(self.client, self.keys, entry, changed, gone, whole, self.ttl_ms)
        except (redis.RedisError, OSError) as error:
            if not self._failing:
                log.warning("cannot write this server's entry in pool %s (it drops out of placement once "
                            "the entry expires; matches go on): %s", self.keys.name, error)  # fmt: skip
            self._failing = self._whole_due = True
            return
        self._written = slots
        self._whole_due = bool(slots) and not beat.bots_kept  # the hash was gone (expired, Redis restarted)
        servers = beat.servers
        if self._failing:
            log.info("Redis answers again: this server is back in pool %s", self.keys.name)
            self._failing = False
        if self.beats == 0:
            taking = f"{len(servers)} server{'' if len(servers) == 1 else 's'} taking matches"
            log.info("in pool %s as %s (%s)", self.keys.name, self.address, taking)
        self.beats += 1
        arena.set_pool(servers)

    async def drain(self) -> None:
        """No new matches here: out of the pool's open servers at once (workers still attach here)."""
        with contextlib.suppress(redis.RedisError, OSError):
            await pool.close_to_new_matches(self.client, self.keys, self.address)

    async def stop(self) -> None:
        """Stop the heartbeat and leave the pool."""
        self.arena.gateway.on_slots_changed = None
        for task in (self._task, self._updater):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._updater = None
        try:
            await pool.leave(self.client, self.keys, self.address)
        except (redis.RedisError, OSError) as error:
            log.warning("cannot leave pool %s (the entry expires by itself): %s", self.keys.name, error)
