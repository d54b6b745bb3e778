"""Failed authentications, limited per peer address: what keeps a token guesser from taking a core.

Tokens are 32 random bytes, so guessing one is hopeless; what a guesser costs is the server's time (a
stream, a Redis read and a hash per guess). Each peer address has a token bucket of failures: a burst,
then `per_s` a second. A peer whose bucket is empty is refused with RESOURCE_EXHAUSTED and how long to
wait, before anything is read or checked, and the refusal is held back for up to `hold_s` first (`hold`):
a client that retries at once then makes one attempt a `hold_s`, not a thousand a second, each costing
the server a stream it did not have to read. Only failures take from the bucket, and it is keyed by
address, never by bot name: a bot whose token is right, connecting from anywhere else, never feels
someone else's guesses at its name.

IPv6 peers count per /64 (one host usually holds a whole /64). A peer's address is what gRPC reports,
so behind a proxy every client is the proxy, unless the proxy is trusted (`client_address`): then the
last entry of the `x-forwarded-for` metadata it sends counts. The table holds at most `peers` addresses,
the least recently failed forgotten first (a forgotten peer starts again with a full burst).
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass


def peer_host(peer: str) -> str:
    """The address a gRPC peer string names, without its port: `ipv4:10.0.0.7:5555` is `10.0.0.7`,
    `ipv6:[2001:db8::1]:5555` is `2001:db8::/64`; anything else (a Unix socket) as it is."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return peer
    return address_key(urllib.parse.unquote(rest).rpartition(":")[0].strip("[]")) or peer


def client_address(peer: str, metadata: Iterable[tuple[str, str | bytes]], trusted: Collection[str]) -> str:
    """Whom a call counts against: its peer's address (`peer_host`), or, from a `trusted` proxy (keyed as
    `address_key` keys them), the client it names last in `x-forwarded-for` (nginx:
    `grpc_set_header X-Forwarded-For $remote_addr;`)."""
    host = peer_host(peer)
    if host not in trusted:
        return host
    forwarded = next((str(v) for k, v in metadata if k == "x-forwarded-for" and isinstance(v, str)), "")
    return address_key(forwarded.rpartition(",")[2].strip()) or host


def address_key(host: str) -> str:
    """What an address counts as: itself (an IPv4-mapped IPv6 one as IPv4), an IPv6 one as its /64; ""
    for what is not an address."""
    try:
        address = ipaddress.ip_address(host.partition("%")[0])  # without an IPv6 zone (`%eth0`)
    except ValueError:
        return ""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped
        if mapped is not None:
            return str(mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class FailureLimiter:
    """Failures per peer address: `burst` at once, then `per_s` a second (0 turns the limit off); a refusal
    is held for up to `hold_s`, at most `max_held` at once (more are answered at once)."""

    def __init__(
        self, burst: int, per_s: float, peers: int, hold_s: float = 1.0, max_held: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self.burst, self.per_s, self.peers, self.clock = burst, per_s, max(1, peers), clock
        self.hold_s, self.max_held = hold_s, max_held
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()  # least recently failed first
        self.refused = 0  # calls refused (for tests and logs)
        self.held = 0  # refusals being held now

    @property
    def enabled(self) -> bool:
        return self.burst > 0 and self.per_s > 0

    def wait(self, peer: str) -> float:
        """Seconds `peer` must wait before its next attempt is taken (0: take it now)."""
        if not self.enabled:
            return 0.0
        bucket = self._refilled(peer)
        if bucket is None or bucket.tokens >= 1:
            return 0.0
        self.refused += 1
        return (1 - bucket.tokens) / self.per_s

    async def hold(self, wait: float) -> float:
        """Hold a refusal for `hold_s` (or `wait`, if shorter) before it is sent: a client retrying at once
        is slowed to an attempt a `hold_s`. With `max_held` held already, none. Returns the time held."""
        if self.held >= self.max_held or self.hold_s <= 0:
            return 0.0
        held = min(wait, self.hold_s)
        self.held += 1
        try:
            await asyncio.sleep(held)
        finally:
            self.held -= 1
        return held

    def failed(self, peer: str) -> None:
        """`peer`'s attempt failed: it takes one from the bucket."""
        if not self.enabled:
            return
        bucket = self._refilled(peer)
        if bucket is None:
            while len(self._buckets) >= self.peers:
                self._buckets.popitem(last=False)
            bucket = self._buckets[peer] = _Bucket(float(self.burst), self.clock())
        bucket.tokens -= 1
        self._buckets.move_to_end(peer)

    def __len__(self) -> int:
        return len(self._buckets)

    def _refilled(self, peer: str) -> _Bucket | None:
        """The peer's bucket, refilled for the time passed; None (and forgotten) once full again."""
        bucket = self._buckets.get(peer)
        if bucket is None:
            return None
        now = self.clock()
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.updated) * self.per_s)
        bucket.updated = now
        if bucket.tokens >= self.burst:
            del self._buckets[peer]
            return None
        return bucket


def say_wait(seconds: float) -> str:
    """`1 s`, `3 s`: a wait rounded up to whole seconds, for a status message."""
    return f"{max(1, math.ceil(seconds))} s"
