"""One bot on every match server of a pool: a connection (`BotClient`) to each, found from one address.

A pool is the match servers sharing a Redis and a pool name (docs/scale.md); a tournament on a pool
places each match on a server where all its seats are connected. So the bot keeps a connection to
every one of them: it is given one or more addresses to start from (`servers`, e.g. "host:50051" or
"a:50051,b:50051"), and each server tells it the pool's servers in its Welcome and again whenever
they change (PoolChanged, bot.proto); a connection is opened to each new one, and one to a server
that left the pool is closed once it plays nothing. The addresses given are always kept (a server
that restarts there is found again). A server older than pools lists none: then this is exactly
one `BotClient` per address given.

`max_matches` applies to each connection: a bot connected to a pool of N servers may play up to N
times that many matches at once. Every connection says Hello with the same `instance` id and its own
`link` id, so a server reached by two addresses (a name and an IP, a proxy) keeps one connection
and refuses the other (CLOSE_REASON_DUPLICATE_LINK), which then stops quietly.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Sequence

from uno_arena.sdk.bot import Bot
from uno_arena.sdk.client import BotClient, BotRefused, ClientSettings, DuplicateLink
from uno_arena.v1.channels import ClientTLS, PlaintextRefused

log = logging.getLogger(__name__)

PRUNE_S = 2.0  # how often connections to servers that left the pool are looked at
ABANDON_S = 30.0  # ... and how long one with matches running there is kept trying to get back to them


def server_list(servers: str | Sequence[str]) -> list[str]:
    """The addresses of `servers` ("a:1,b:2" or a list), in order, each once; ValueError if none."""
    given = servers.split(",") if isinstance(servers, str) else list(servers)
    found: list[str] = []
    for server in (s.strip() for s in given):
        if server and server not in found:
            found.append(server)
    if not found:
        raise ValueError("no match server address given")
    return found


class PoolClient:
    """Runs one `Bot` on a connection to every server of its pool until `stop()` or a finished `drain()`.

    The same interface as `BotClient` (run, drain, stop, running_matches, drained, wait_connected),
    over all its connections. With `follow_pool` off it connects to the addresses given only. Raises
    `PlaintextRefused` at once for an address given that would carry the token in clear (and
    ValueError for no address at all); an address a server lists that would is skipped, with an error
    in the log.
    `run()` raises what ends the bot for good on any connection (`BotRefused`, `BotReplaced`), having
    stopped the others.
    """

    def __init__(
        self,
        bot: Bot,
        servers: str | Sequence[str],
        name: str,
        token: str,
        settings: ClientSettings | None = None,
        tls: ClientTLS | None = None,
        *,
        follow_pool: bool = True,
    ) -> None:
        self.bot, self.name, self.token = bot, name, token
        self.follow_pool = follow_pool  # False: the addresses given only
        self.seeds = server_list(servers)
        self.settings = settings or ClientSettings()
        self.tls = tls or ClientTLS()
        for seed in self.seeds:
            self.tls.check(seed)
        if self.tls.enabled:
            self.tls.credentials()
        self.instance = secrets.token_hex(8)
        self.links: dict[str, BotClient] = {}  # dialled address -> its connection
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.duplicates: set[str] = set()  # addresses found to reach a server another link has
        self.refused: set[str] = set()  # addresses listed that would carry the token in clear
        self.pool: list[str] = []  # the pool's servers, as a server last told them
        self._stop = asyncio.Event()
        self._changed = asyncio.Condition()  # notified when links come, go or connect
        self.drain_reason = ""
        self._draining = False
        self._abandoned = 0  # matches still running on connections that ended (stopped)
        self._fatal: BaseException | None = None
        self._lost: dict[str, float] = {}  # address -> when its connection was first seen down

    # --- what BotClient offers ----------------------------------------------------------------

    @property
    def draining(self) -> bool:
        return self._draining

    @property
    def running(self) -> set[str]:
        return set().union(*(link.running for link in self.links.values()))

    @property
    def running_matches(self) -> int:
        return sum(link.running_matches for link in self.links.values())

    @property
    def connections(self) -> int:
        """Times a server welcomed one of the connections (reconnects included)."""
        return sum(link.connections for link in self.links.values())

    @property
    def drained(self) -> bool:
        """Draining, and every connection ended with its matches finished."""
        return self._draining and not self._abandoned and not self.links

    def connected_servers(self) -> list[str]:
        """The servers (their own addresses, else the address dialled) connected now."""
        return sorted(link.address or link.server for link in self.links.values() if link.connected.is_set())

    async def wait_connected(self, servers: int = 1) -> None:
        """Until at least `servers` servers are connected at once."""
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.connected_servers()) >= servers)

    def stop(self) -> None:
        """Stop at once: every connection ends, and the servers forfeit the running matches."""
        self._stop.set()
        for link in self.links.values():
            link.stop()

    def drain(self, reason: str = "") -> None:
        """Finish the running matches on every server, take no new one, then let `run()` return."""
        if self._draining:
            return
        self._draining, self.drain_reason = True, reason
        for link in self.links.values():
            link.drain(reason)

    async def run(self) -> None:
        """Connect to the addresses given and to every server they list; play until stopped, drained
        or refused for good."""
        for seed in self.seeds:
            self._open(seed)
        pruner = asyncio.create_task(self._prune_now_and_then())
        try:
            while self._tasks and self._fatal is None:
                await asyncio.wait(set(self._tasks.values()), return_when=asyncio.FIRST_COMPLETED)
        finally:
            pruner.cancel()
            for link in self.links.values():
                link.stop()
            if self._tasks:
                await asyncio.wait(set(self._tasks.values()))
        if self._fatal is not None:
            raise self._fatal

    # --- the connections ----------------------------------------------------------------------

    def _open(self, address: str) -> None:
        link = BotClient(self.bot, address, self.name, self.token, self.settings, self.tls,
                         on_pool=self._on_pool if self.follow_pool else None, instance=self.instance,
                         link=address)  # fmt: skip
        if self._draining:
            link.drain(self.drain_reason)
        self.links[address] = link
        self._tasks[address] = asyncio.create_task(self._run_link(address, link), name=f"link {address}")

    async def _run_link(self, address: str, link: BotClient) -> None:
        watch = asyncio.create_task(self._watch(link))
        try:
            await link.run()
        except DuplicateLink:
            log.info("%s: %s reaches a server this bot is connected to already; not using it",
                     self.name, address)  # fmt: skip
            self.duplicates.add(address)
        except BotRefused as final:  # refused, revoked or replaced: the same on every server
            if self._fatal is None:
                self._fatal = final
            self.stop()
        else:
            # another connection ended: an address that duplicated it may be the way back now
            self.duplicates.clear()
        finally:
            watch.cancel()
            self._abandoned += len(link.running)
            self.links.pop(address, None)
            self._tasks.pop(address, None)
            await self._notify()

    async def _watch(self, link: BotClient) -> None:
        """Tell `wait_connected` each time the link is welcomed."""
        seen = 0
        while True:
            await link.wait_connected(seen + 1)
            seen = link.connections
            await self._notify()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def _on_pool(self, link: BotClient, servers: list[str]) -> None:
        """A server told the pool's servers: open a connection to each new one."""
        self.pool = sorted(servers)
        if self._stop.is_set() or self._draining:
            return
        reached = {known.address or known.server for known in self.links.values()} | set(self.links)
        for server in self.pool:
            if server in reached or server in self.duplicates or server in self.refused:
                continue
            try:
                self.tls.check(server)
            except PlaintextRefused as refused:
                self.refused.add(server)
                log.error("%s: not connecting to %s, a server of the pool: %s", self.name, server, refused)
                continue
            log.info("%s: connecting to %s too, a server of its pool", self.name, server)
            self._open(server)

    async def _prune_now_and_then(self) -> None:
        while True:
            await asyncio.sleep(PRUNE_S)
            self._prune()

    def _prune(self) -> None:
        """Close the connections to servers that left the pool, once not connected: at once with no
        match running there, else after `ABANDON_S` (a draining server keeps its matches for a
        reconnect; a dead one lost them)."""
        now = time.monotonic()
        for address, link in list(self.links.items()):
            if link.connected.is_set():
                self._lost.pop(address, None)
                continue
            lost = self._lost.setdefault(address, now)
            listed = not self.pool or address in self.pool or (link.address or address) in self.pool
            if listed or address in self.seeds or (link.running and now - lost < ABANDON_S):
                continue
            log.info("%s: %s left the pool; closing its connection", self.name, address)
            self._lost.pop(address, None)
            link.stop()


async def run_bot(
    bot: Bot,
    server: str | Sequence[str],
    name: str,
    token: str,
    settings: ClientSettings | None = None,
    tls: ClientTLS | None = None,
) -> None:
    """Play until cancelled or refused: the simplest way to run a bot. `tls`: how to reach the server
    (`ClientTLS(ca_file=...)` for a private CA; plaintext is refused off this machine).

    `server` may name several addresses ("a:50051,b:50051"); the bot connects to every server of the
    pool they belong to (`PoolClient`), which for a lone server is that one."""
    await PoolClient(bot, server, name, token, settings, tls).run()
