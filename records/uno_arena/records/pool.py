"""The pool of match servers in Redis: who serves, how loaded, which bots each has; and placement.

Every `uno-arena server` registers in a pool (`--pool NAME`, default "default") of its Redis and key
prefix and keeps its entry alive with a heartbeat; a server that stops heartbeating (killed, cut off
from Redis) disappears when its entry expires, a server that drains leaves the pool's open set at
once, and one that stops cleanly removes itself. A worker playing a tournament whose spec names a
pool (`pool = "NAME"`) asks `place` which server plays each match. docs/scale.md has the design.

Keys, all under the prefix (docs/redis.md lists them with the rest):
- `{p}:pool:{name}:live`: sorted set, server address -> when its entry expires (unix ms): every
  server alive, draining or not. Members past their time are removed by the next heartbeat.
- `{p}:pool:{name}:open`: sorted set, the same for the servers taking new matches (not draining).
- `{p}:pool:{name}:server:{address}`: hash, expiring: the server's load and who it is (`Entry`).
- `{p}:pool:{name}:bots:{address}`: hash, expiring: bot name -> free match slots on that server,
  for every bot connected to it.
- `{p}:tournament:{id}:placed`: hash, match index -> the address of the server it was placed on
  (`records.tournament.Keys.placed`), so a later attempt attaches to the match where it runs.

A heartbeat rewrites the server's entry whole and its bots' slots by change (one MULTI/EXEC), and the
bots whole every `WHOLE_EVERY` heartbeats; between heartbeats, each time a match starts or ends, the
server writes its load and the slots that changed (`update`). So what placement guessed (below) is
replaced by the truth as soon as the server knows better, and within `WHOLE_EVERY` heartbeats at most.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from uno_arena.records.identity import NAME

if TYPE_CHECKING:  # annotations only: the base install needs no Redis client
    import redis
    import redis.asyncio as aioredis

DEFAULT_POOL = "default"
HEARTBEAT_MS = 1000  # a server writes its entry this often
ENTRY_TTL_MS = 5000  # ... and it lives this long after the last write: a dead server is gone by then
WHOLE_EVERY = 10  # its bots' free slots are written whole every this many heartbeats, by change between


class PoolError(ValueError):
    """A pool name or server address that cannot be used."""


def check_pool_name(name: str) -> str:
    """The name if a pool may have it (a bot name's shape: it becomes part of Redis keys)."""
    if not NAME.fullmatch(name):
        raise PoolError(f"pool name {name!r}: 1-63 letters, digits, '_', '.' or '-', starting with a letter "
                        "or digit")  # fmt: skip
    return name


def check_address(address: str) -> str:
    """HOST:PORT (or [V6]:PORT) with a port from 1 to 65535: a server's address in its pool."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in address):
        raise PoolError(f"server address {address!r}: expected HOST:PORT")
    return address


@dataclass(frozen=True, slots=True)
class PoolKeys:
    """The Redis keys of one pool."""

    prefix: str
    name: str

    @property
    def base(self) -> str:
        return f"{self.prefix}:pool:{self.name}:"

    @property
    def live(self) -> str:
        return f"{self.base}live"

    @property
    def open(self) -> str:
        return f"{self.base}open"

    def server(self, address: str) -> str:
        return f"{self.base}server:{address}"

    def bots(self, address: str) -> str:
        return f"{self.base}bots:{address}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One server's entry: who it is and how loaded it was at its last heartbeat.

    `load` is the matches it runs or waits to start (their bots being waited for), plus the matches
    placed on it since that heartbeat; placement compares servers by it.
    """

    address: str
    host: str = ""
    pid: int = 0
    started: float = 0.0  # unix seconds
    load: int = 0
    running: int = 0  # matches running at the heartbeat
    bots: int = 0  # bots connected
    actions_per_s: float = 0.0  # actions applied per second over the last heartbeat's interval
    cpu: float = 0.0  # the process's CPU time over that interval, per second of it (1.0: one core busy)
    draining: bool = False
    heartbeat: float = 0.0  # unix seconds of its last heartbeat
    version: str = ""

    def fields(self) -> dict[str, str]:
        return {"address": self.address, "host": self.host, "pid": str(self.pid),
                "started": f"{self.started:.3f}", "load": str(self.load), "running": str(self.running),
                "bots": str(self.bots), "actions_per_s": f"{self.actions_per_s:.1f}",
                "cpu": f"{self.cpu:.3f}", "draining": "1" if self.draining else "0",
                "heartbeat": f"{self.heartbeat:.3f}", "version": self.version}  # fmt: skip

    @classmethod
    def from_fields(cls, raw: dict[bytes, bytes] | dict[str, str]) -> Entry:
        values = {_text(k): _text(v) for k, v in raw.items()}

        def number(name: str) -> float:
            try:
                return float(values.get(name, 0) or 0)
            except ValueError:
                return 0.0

        return cls(address=values.get("address", ""), host=values.get("host", ""), pid=int(number("pid")),
                   started=number("started"), load=int(number("load")), running=int(number("running")),
                   bots=int(number("bots")), actions_per_s=number("actions_per_s"), cpu=number("cpu"),
                   draining=values.get("draining") == "1", heartbeat=number("heartbeat"),
                   version=values.get("version", ""))  # fmt: skip


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _now_ms() -> int:
    return int(time.time() * 1000)


# --- the server's side: heartbeat, drain, leave ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """What a heartbeat read back: the open servers' addresses, and whether the server's bots hash
    was there to keep alive (if not, and it should be, the next heartbeat writes it whole)."""

    servers: list[str]
    bots_kept: bool


async def heartbeat(client: aioredis.Redis, keys: PoolKeys, entry: Entry, slots: Mapping[str, int],
                    gone: Sequence[str] = (), whole: bool = True,
                    ttl_ms: int = ENTRY_TTL_MS) -> Heartbeat:  # fmt: skip
    """Write the server's entry and its bots' free slots, keep both alive for `ttl_ms`, and drop the
    members whose time passed; return the open servers' addresses.

    The entry is written whole each time. The bots: `whole`, `slots` is every connected bot and
    replaces the hash (what placement guessed included); otherwise `slots` are the bots whose free
    slots changed since the last write and `gone` those no longer connected (a heartbeat of a server
    with 10,000 bots then costs Redis little: docs/scale.md)."""
    now = _now_ms()
    expires = now + ttl_ms
    address = entry.address
    server, bots = keys.server(address), keys.bots(address)
    async with client.pipeline(transaction=True) as pipe:
        pipe.delete(server)
        pipe.hset(server, mapping=entry.fields())  # type: ignore[arg-type]
        pipe.pexpire(server, ttl_ms)
        if whole:
            pipe.delete(bots)
        elif gone:
            pipe.hdel(bots, *gone)
        if slots:
            pipe.hset(bots, mapping=slots)  # type: ignore[arg-type]
        kept_at = len(pipe)
        pipe.pexpire(bots, ttl_ms)
        pipe.zadd(keys.live, {address: expires})
        if entry.draining:
            pipe.zrem(keys.open, address)
        else:
            pipe.zadd(keys.open, {address: expires})
        pipe.zremrangebyscore(keys.live, "-inf", now)
        pipe.zremrangebyscore(keys.open, "-inf", now)
        pipe.zrangebyscore(keys.open, f"({now}", "+inf")
        replies = await pipe.execute()
    kept = bool(replies[kept_at])  # the bots hash's PEXPIRE: 0 when there was no hash to keep
    return Heartbeat(sorted(_text(a) for a in replies[-1]), kept)


async def update(client: aioredis.Redis, keys: PoolKeys, address: str, load: int, running: int,
                 slots: Mapping[str, int], gone: Sequence[str] = (),
                 ttl_ms: int = ENTRY_TTL_MS) -> None:  # fmt: skip
    """Between heartbeats, as matches start and end: the server's load and the free slots of the bots
    whose slots changed (`gone`: no longer taking matches there), so that placement sees them within a
    round trip rather than at the next heartbeat. An entry that expired meanwhile gains nothing a
    placement could use: the server is in neither set until its next heartbeat."""
    server, bots = keys.server(address), keys.bots(address)
    async with client.pipeline(transaction=True) as pipe:
        pipe.hset(server, mapping={"load": str(load), "running": str(running)})
        pipe.pexpire(server, ttl_ms)
        if gone:
            pipe.hdel(bots, *gone)
        if slots:
            pipe.hset(bots, mapping=slots)  # type: ignore[arg-type]
        pipe.pexpire(bots, ttl_ms)
        await pipe.execute()


async def close_to_new_matches(client: aioredis.Redis, keys: PoolKeys, address: str) -> None:
    """The server drains: out of the open set now (placement and bots stop choosing it); its entry
    stays alive, so workers still attach to the matches it finishes."""
    async with client.pipeline(transaction=True) as pipe:
        pipe.zrem(keys.open, address)
        pipe.hset(keys.server(address), "draining", "1")
        await pipe.execute()


async def leave(client: aioredis.Redis, keys: PoolKeys, address: str) -> None:
    """The server stops: its entry and membership are removed at once."""
    async with client.pipeline(transaction=True) as pipe:
        pipe.zrem(keys.open, address)
        pipe.zrem(keys.live, address)
        pipe.delete(keys.server(address), keys.bots(address))
        await pipe.execute()


# --- a worker's side ----------------------------------------------------------------------------


def set_aside(client: redis.Redis, keys: PoolKeys, address: str) -> None:
    """A worker could not play a match on the server at `address` (unreachable, or refusing): out of
    the open set until its next heartbeat puts it back (a live server's, within `HEARTBEAT_MS`), so
    that other matches are not placed on a dead server while its entry has yet to expire."""
    client.zrem(keys.open, address)


# --- reading the pool ---------------------------------------------------------------------------


def servers(client: redis.Redis, keys: PoolKeys) -> list[Entry]:
    """The live servers' entries (draining ones included), by address."""
    now = _now_ms()
    members: list[bytes] = client.zrangebyscore(keys.live, f"({now}", "+inf")  # type: ignore[assignment]
    addresses = sorted(_text(a) for a in members)
    with client.pipeline(transaction=False) as pipe:
        for address in addresses:
            pipe.hgetall(keys.server(address))
        raws = pipe.execute()
    return [Entry.from_fields(raw) for raw in raws if raw]


def connected_bots(client: redis.Redis, keys: PoolKeys, address: str) -> dict[str, int]:
    """Bot name -> free match slots, of the bots connected to the server at `address`."""
    return {_text(k): int(v) for k, v in client.hgetall(keys.bots(address)).items()}


# --- placement ----------------------------------------------------------------------------------

# KEYS: the pool's open and live sets, the tournament's placed hash.
# ARGV: now (ms), the match index, the pool's key base, the number of excluded addresses, those
# addresses, then the seats' bot names.
# The match's earlier placement is kept while its server is alive (draining too: it finishes the
# matches it runs) and not excluded: a later attempt attaches there. Otherwise the open servers are
# ranked by how well they seat the match (each seat whose bot is connected counts 1, and 1 more
# with a free slot) and then by load (fewest first), then CPU; the chosen one's load and its seats'
# free slots are counted at once, so a worker placing the next match a moment later sees them.
_PLACE = """
local now = tonumber(ARGV[1])
local base = ARGV[3]
local excluded = {}
local count = tonumber(ARGV[4])
for i = 1, count do excluded[ARGV[4 + i]] = true end
local seats = {}
for i = 5 + count, #ARGV do seats[#seats + 1] = ARGV[i] end
local previous = redis.call('HGET', KEYS[3], ARGV[2])
if previous and not excluded[previous] then
  local expires = redis.call('ZSCORE', KEYS[2], previous)
  if expires and tonumber(expires) > now then return {previous, 0} end
end
local best, best_fit, best_load, best_cpu = false, -1, 0, 0
for _, address in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')) do
  if not excluded[address] then
    local entry = redis.call('HMGET', base .. 'server:' .. address, 'draining', 'load', 'cpu')
    if entry[1] == '0' then
      local fit = 0
      if #seats > 0 then
        for _, slots in ipairs(redis.call('HMGET', base .. 'bots:' .. address, unpack(seats))) do
          if slots then
            fit = fit + 1
            if tonumber(slots) > 0 then fit = fit + 1 end
          end
        end
      end
      local load, cpu = tonumber(entry[2]) or 0, tonumber(entry[3]) or 0
      local lighter = load < best_load or (load == best_load and cpu < best_cpu)
      if fit > best_fit or (fit == best_fit and lighter) then
        best, best_fit, best_load, best_cpu = address, fit, load, cpu
      end
    end
  end
end
if not best then return {false, 0} end
redis.call('HINCRBY', base .. 'server:' .. best, 'load', 1)
local bots = base .. 'bots:' .. best
for _, bot in ipairs(seats) do
  if redis.call('HEXISTS', bots, bot) == 1 then redis.call('HINCRBY', bots, bot, -1) end
end
redis.call('HSET', KEYS[3], ARGV[2], best)
return {best, 1 + best_fit}
"""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a match plays: `server`'s address, and whether it was `kept` (placed there before: a
    later attempt attaches to it) and, for a new placement, whether every seat's bot is connected
    there (`seated`; if not, the server waits for them as it always does)."""

    server: str
    kept: bool
    seated: bool


def place(client: redis.Redis, keys: PoolKeys, placed_key: str, index: int, seats: Sequence[str],
          excluded: Sequence[str] = ()) -> Placement | None:  # fmt: skip
    """The server of the pool that plays match `index` (of the tournament whose `placed` hash is
    `placed_key`), chosen and counted in one script (one round trip): None when no open server is
    left once `excluded` are set aside."""
    reply = client.eval(_PLACE, 3, keys.open, keys.live, placed_key, _now_ms(), index, keys.base,
                        len(excluded), *excluded, *seats)  # fmt: skip
    server, how = reply[0], int(reply[1])
    if not server:
        return None
    return Placement(_text(server), kept=how == 0, seated=how - 1 >= 2 * len(seats))
