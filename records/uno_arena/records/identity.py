"""Bot and control identities: tokens stored only as hashes in Redis.

Keys (under the configured prefix):
- `{prefix}:bot:{name}`: hash with `token_sha256` and `created` (unix seconds).
- `{prefix}:control-token:{sha256}`: string `created`; one key per control token.

Tokens are 32 random bytes (URL-safe base64), so a plain SHA-256 is enough to
store them; comparisons use `hmac.compare_digest`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time

import redis
import redis.asyncio as aioredis

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


class IdentityError(ValueError):
    """A bad bot name, or a name that is already taken."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bot_key(prefix: str, name: str) -> str:
    return f"{prefix}:bot:{name}"


def control_token_key(prefix: str, token: str) -> str:
    return f"{prefix}:control-token:{_digest(token)}"


def check_name(name: str) -> str:
    if not NAME.match(name):
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


def create_control_token(client: redis.Redis, prefix: str) -> str:
    token = secrets.token_urlsafe(32)
    client.set(control_token_key(prefix, token), str(int(time.time())))
    return token


async def bot_token_valid(client: aioredis.Redis, prefix: str, name: str, token: str) -> bool:
    """Constant-time check of a bot's token (False for unknown bots)."""
    if not NAME.match(name):
        return False
    stored = await client.hget(bot_key(prefix, name), "token_sha256")
    expected = stored.decode() if isinstance(stored, bytes) else (stored or "")
    return hmac.compare_digest(expected.encode(), _digest(token).encode()) and bool(stored)


async def control_token_valid(client: aioredis.Redis, prefix: str, token: str) -> bool:
    """Whether `token` is a control token; bot tokens are stored elsewhere, so never."""
    return bool(token) and bool(await client.exists(control_token_key(prefix, token)))
