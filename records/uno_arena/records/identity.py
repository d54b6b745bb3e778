"""Bot and control identities: tokens stored only as hashes in Redis.

Keys (under the configured prefix):
- `{prefix}:bot:{name}`: hash with `token_sha256` and `created` (unix seconds).
- `{prefix}:bot-name:{canonical}`: string, the bot name that holds this canonical form (`canonical_name`).
- `{prefix}:control-token:{sha256}`: string `created`; one key per control token.

Bot names are unique without regard to case and punctuation: `Greedy`, `GREEDY`, `greedy.` and
`gree-dy` are all `greedy` (`canonical_name`), so a second bot cannot pass for the first in a table or a
log. Registration checks every registered name (registrations from before the check included, which keep
working as they are), and claims the canonical form, so two registrations at once cannot both win.
Tokens are compared exactly, as sent.

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


def canonical_name(name: str) -> str:
    """What a bot name is unique as: lower case, without `_`, `.` and `-` (`Greedy_Bot.` is `greedybot`)."""
    return name.lower().replace("_", "").replace(".", "").replace("-", "")


def bot_name_key(prefix: str, name: str) -> str:
    """The key that says which bot holds `name`'s canonical form."""
    return f"{prefix}:bot-name:{canonical_name(name)}"


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise IdentityError(
            f"bad bot name {name!r}: 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    return name


def register_bot(client: redis.Redis, prefix: str, name: str, *, replace: bool = False) -> str:
    """Create (or with `replace`, re-key) a bot; return its token, which is not stored.

    A new name that differs from a registered one only in case or punctuation is refused, naming the
    registered one; `replace` of a name registered as it is always works (as before the check)."""
    check_name(name)
    key = bot_key(prefix, name)
    if not (replace and client.exists(key)):
        _claim_name(client, prefix, name)
    token = secrets.token_urlsafe(32)
    digest, created = _digest(token), str(int(time.time()))
    if replace:
        client.hset(key, mapping={"token_sha256": digest, "created": created})
    elif not client.hsetnx(key, "token_sha256", digest):
        raise IdentityError(f"bot {name!r} is already registered (--replace issues a new token)")
    else:
        client.hset(key, "created", created)
    return token


def _claim_name(client: redis.Redis, prefix: str, name: str) -> None:
    """Take `name`'s canonical form for it, or raise `IdentityError` naming the bot that has it."""
    wanted = canonical_name(name)
    similar = [n for n in _registered_names(client, prefix) if n != name and canonical_name(n) == wanted]
    claim = bot_name_key(prefix, name)
    if not similar and not client.set(claim, name, nx=True):  # claimed: by this name, or by a rival
        holder = _text(client.get(claim))
        if holder and holder != name and client.exists(bot_key(prefix, holder)):
            similar = [holder]
        else:  # this name's own claim, or a claim left by a bot since revoked
            client.set(claim, name)
    if similar:
        raise IdentityError(
            f"bot name {name!r} is taken: it differs from the registered bot {similar[0]!r} only in case or "
            "'_', '.', '-' (bot names are unique without them, so that no bot passes for another)"
        )


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def revoke_bot(client: redis.Redis, prefix: str, name: str) -> bool:
    """Delete bot `name`'s registration (its token stops working); False if it was not registered.
    Its canonical form is free again."""
    check_name(name)
    existed = bool(client.delete(bot_key(prefix, name)))
    claim = bot_name_key(prefix, name)
    if _text(client.get(claim)) == name:
        client.delete(claim)
    return existed


def registered_bots(client: redis.Redis, prefix: str) -> list[RegisteredBot]:
    """Every registered bot under `prefix`, by name."""
    names = _registered_names(client, prefix)
    with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hmget(bot_key(prefix, name), "token_sha256", "created")
        stored = pipe.execute()
    return [
        RegisteredBot(name, int(created or 0))
        for name, (digest, created) in zip(names, stored, strict=True)
        if digest  # gone meanwhile: revoked
    ]


def _registered_names(client: redis.Redis, prefix: str) -> list[str]:
    """The names of the bot keys under `prefix` (a key scan: their hashes are not read), sorted."""
    start = bot_key(_glob_escape(prefix), "")
    keys = [_text(k) for k in client.scan_iter(match=f"{start}*", count=500)]
    return sorted(n for n in (k[len(bot_key(prefix, "")) :] for k in keys) if NAME.fullmatch(n))


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
