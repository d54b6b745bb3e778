"""Bot and control identities: tokens stored only as hashes in Redis.

Keys (under the configured prefix):
- `{prefix}:bot:{name}`: hash with `token_sha256` and `created` (unix seconds).
- `{prefix}:control-token:{sha256}`: string `created`; one key per control token.

Tokens are 32 random bytes (URL-safe base64), so a plain SHA-256 is enough to
store them; comparisons use `hmac.compare_digest`. A match server re-reads the
hashes of its connected bots every few seconds, so replacing (`register_bot(...,
replace=True)`) or revoking (`revoke_bot`) a token also ends the live connection
that used the old one.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: replay files and the base install need no Redis client
    import redis
    import redis.asyncio as aioredis

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")


class IdentityError(ValueError):
    """A bad bot name, or a name that is already taken."""


@dataclass(frozen=True, slots=True)
class RegisteredBot:
    name: str
    created: int  # unix seconds of the registration (or of the last --replace)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_digest(token: str) -> str:
    """What is stored of a token (and what a server remembers of a connection's)."""
    return _digest(token)


def same_digest(stored: str | None, digest: str) -> bool:
    """Constant-time comparison; a missing (revoked) registration matches nothing."""
    return bool(stored) and bool(digest) and hmac.compare_digest((stored or "").encode(), digest.encode())


def bot_key(prefix: str, name: str) -> str:
    return f"{prefix}:bot:{name}"


def control_token_key(prefix: str, token: str) -> str:
    return f"{prefix}:control-token:{_digest(token)}"


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise IdentityError(
            f"bad bot name {name!r}: 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    return name


def register_bot(client: redis.Redis, prefix: str, name: str, *, replace: bool = False) -> str:
    """Create (or with `replace`, re-key) a bot; return its token, which is not stored."""
    check_name(name)
    token = secrets.token_urlsafe(32)
    digest, created = _digest(token), str(int(time.time()))
    key = bot_key(prefix, name)
    if replace:
        client.hset(key, mapping={"token_sha256": digest, "created": created})
    elif not client.hsetnx(key, "token_sha256", digest):
        raise IdentityError(f"bot {name!r} is already registered (--replace issues a new token)")
    else:
        client.hset(key, "created", created)
    return token


def revoke_bot(client: redis.Redis, prefix: str, name: str) -> bool:
    """Delete bot `name`'s registration (its token stops working); False if it was not registered."""
    check_name(name)
    return bool(client.delete(bot_key(prefix, name)))


def registered_bots(client: redis.Redis, prefix: str) -> list[RegisteredBot]:
    """Every registered bot under `prefix`, by name."""
    start = bot_key(_glob_escape(prefix), "")
    keys = [
        k.decode() if isinstance(k, bytes) else str(k) for k in client.scan_iter(match=f"{start}*", count=500)
    ]
    names = sorted(n for n in (k[len(bot_key(prefix, "")) :] for k in keys) if NAME.fullmatch(n))
    with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hmget(bot_key(prefix, name), "token_sha256", "created")
        stored = pipe.execute()
    return [
        RegisteredBot(name, int(created or 0))
        for name, (digest, created) in zip(names, stored, strict=True)
        if digest  # gone meanwhile: revoked
    ]


def _glob_escape(text: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)


def create_control_token(client: redis.Redis, prefix: str) -> str:
    token = secrets.token_urlsafe(32)
    client.set(control_token_key(prefix, token), str(int(time.time())))
    return token


async def bot_token_valid(client: aioredis.Redis, prefix: str, name: str, token: str) -> bool:
    """Constant-time check of a bot's token (False for unknown bots)."""
    if not NAME.fullmatch(name):
        return False
    stored = await client.hget(bot_key(prefix, name), "token_sha256")
    expected = stored.decode() if isinstance(stored, bytes) else (stored or "")
    return hmac.compare_digest(expected.encode(), _digest(token).encode()) and bool(stored)


async def bot_token_digests(client: aioredis.Redis, prefix: str, names: list[str]) -> list[str | None]:
    """The stored token hash of each bot (None: not registered), in one round trip."""
    async with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hget(bot_key(prefix, name), "token_sha256")
        stored = await pipe.execute()
    return [s.decode() if isinstance(s, bytes) else s for s in stored]


async def control_token_valid(client: aioredis.Redis, prefix: str, token: str) -> bool:
    """Whether `token` is a control token; bot tokens are stored elsewhere, so never."""
    return bool(token) and bool(await client.exists(control_token_key(prefix, token)))
