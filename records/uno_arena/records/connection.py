"""Redis clients made from a URL, for every component: the one place that reads a Redis URL.

A URL names everything a component needs to reach a secured Redis (docs/deployment.md, "Redis: TLS,
passwords and least rights"):

- `redis://USER:PASSWORD@HOST:PORT/DB`: an ACL user and its password (`redis://:PASSWORD@...` for the
  `default` user with `requirepass`); characters such as `@`, `:` or `/` in them are percent-encoded;
- `rediss://...` for TLS, with query options for a private CA and client certificates:
  `?ssl_ca_certs=CA.pem` (the CA that signed Redis's certificate; default: the system's roots),
  `ssl_certfile=CERT.pem&ssl_keyfile=KEY.pem` (when Redis asks clients for a certificate),
  `ssl_ca_path`, `ssl_password` (the key file's passphrase), `ssl_cert_reqs`, `ssl_check_hostname`.

These are redis-py's own URL options (its `from_url`), so `rq worker -u URL` reads the same URL. What is
added here: a URL is checked before any connection (`options`: an unknown option, a TLS option on a
plaintext `redis://` URL, or a certificate file that cannot be read is a `RedisUrlError` saying which),
a URL is shown only without its password (`redact`), and a failure to connect is one line saying what to
check (`explain`), not redis-py's bare "Connection reset by peer".
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Callable
from typing import Any, cast

import redis
import redis.asyncio as aioredis
from redis.connection import URL_QUERY_ARGUMENT_PARSERS, parse_url

HIDDEN = "***"  # what a password (or a key's passphrase) is shown as

# The TLS options a `rediss://` URL may carry, and which of them name a file or a folder to check.
TLS_FILES = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile")
TLS_FOLDERS = ("ssl_ca_path",)
TLS_OPTIONS = frozenset(
    {*TLS_FILES, *TLS_FOLDERS, "ssl_password", "ssl_cert_reqs", "ssl_check_hostname", "ssl_min_version",
     "ssl_ciphers"}
)  # fmt: skip
SECRET_OPTIONS = ("ssl_password",)
CERT_REQS = ("none", "optional", "required")
_parse_url = cast(Callable[[str], dict[str, Any]], parse_url)  # redis-py's own reading (untyped)


class RedisUrlError(ValueError):
    """A Redis URL that cannot work, and why (its password never in the message)."""


def options(url: str) -> dict[str, Any]:
    """The connection options `url` gives redis-py, once checked: every query option is one redis-py
    knows, TLS options come with `rediss://` only, and the files they name can be read."""
    shown = redact(url)
    try:
        parsed = _parse_url(url)
    except ValueError as error:
        raise RedisUrlError(f"Redis URL {shown}: {error}") from None
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    unknown = sorted(set(query) - set(URL_QUERY_ARGUMENT_PARSERS) - TLS_OPTIONS)
    if unknown:
        raise RedisUrlError(f"Redis URL {shown}: unknown option {', '.join(unknown)} (the TLS options are "
                            f"{', '.join(sorted(TLS_OPTIONS))})")  # fmt: skip
    tls = sorted(TLS_OPTIONS & set(query))
    if tls and not url.startswith("rediss://"):
        raise RedisUrlError(
            f"Redis URL {shown}: {', '.join(tls)} need TLS: the URL must start with rediss://"
        )
    for name in TLS_FILES + TLS_FOLDERS:
        path = parsed.get(name)
        if path is None:
            continue
        wanted, kind = (os.path.isdir, "folder") if name in TLS_FOLDERS else (os.path.isfile, "file")
        if not wanted(path) or not os.access(path, os.R_OK):
            raise RedisUrlError(f"Redis URL {shown}: {name}: no readable {kind} {path}")
    reqs = parsed.get("ssl_cert_reqs")
    if reqs is not None and reqs not in CERT_REQS:
        raise RedisUrlError(f"Redis URL {shown}: ssl_cert_reqs must be one of {', '.join(CERT_REQS)}")
    return parsed


def client(url: str, **settings: Any) -> redis.Redis:
    """A client for `url` (checked by `options`), with redis-py's `settings` (timeouts, retry) where the
    URL does not set them."""
    options(url)
    return redis.Redis.from_url(url, **settings)


def async_client(url: str, connections: int, wait_s: float) -> aioredis.Redis:
    """An asyncio client for `url` whose pool of `connections` makes a caller wait up to `wait_s` for a
    free connection instead of failing (many bots connecting at once would otherwise exhaust it)."""
    options(url)
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=connections, timeout=wait_s)
    return aioredis.Redis(connection_pool=pool)


def with_password(url: str, password: str) -> str:
    """`url` with `password` in it (replacing any there), for a password kept in a file, not a URL."""
    parts = urllib.parse.urlsplit(url)
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    secret = urllib.parse.quote(password, safe="")
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:{secret}@{host}"))


def redact(url: str) -> str:
    """`url` as it may be shown or logged: its password, and a key's passphrase, as `***`."""
    try:
        parts = urllib.parse.urlsplit(url)
        password = parts.password
    except ValueError:  # not a URL (e.g. an unclosed "[" of an IPv6 address): show only its scheme
        return f"{url.partition('://')[0]}://{HIDDEN}"
    netloc = parts.netloc
    if password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:{HIDDEN}@{host}"
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    if any(name in SECRET_OPTIONS for name, _ in query):
        shown = [(name, HIDDEN if name in SECRET_OPTIONS else value) for name, value in query]
        parts = parts._replace(query=urllib.parse.urlencode(shown, safe="/*"))
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def address(client: redis.Redis | aioredis.Redis) -> str:
    """Where a client's Redis is, and as whom, for messages: `rediss://USER@HOST:PORT/DB` (no password)."""
    where = client.connection_pool.connection_kwargs
    user = f"{where['username']}@" if where.get("username") else ""
    if "path" in where:
        return f"unix://{user}{where['path']}?db={where.get('db', 0)}"
    tls = issubclass(client.connection_pool.connection_class, redis.SSLConnection | aioredis.SSLConnection)
    scheme = "rediss" if tls else "redis"
    return f"{scheme}://{user}{where.get('host', 'localhost')}:{where.get('port', 6379)}/{where.get('db', 0)}"


def explain(error: redis.RedisError, url: str = "") -> str:
    """What a failure to talk to Redis means and what to check, in one line (no password in it)."""
    text = str(error)
    lowered = text.lower()
    plain = url.startswith(("redis://", "unix://"))
    if isinstance(error, redis.AuthenticationError):
        # Redis 7 answers a client that gave no user HELLO's or NOAUTH's message (redis-py drops "NOAUTH")
        if "client already authenticated" in lowered or "authentication required" in lowered:
            return ("Redis asks who connects: give a user and its password "
                    "(redis://USER:PASSWORD@HOST:PORT/DB, or --redis-password-file)")  # fmt: skip
        reason = text.rstrip(".")
        return f"Redis refused the user and password: {reason} (check both, and that the user is on)"
    if isinstance(error, redis.exceptions.NoPermissionError):
        return (f"the Redis user may not do this: {text} (docs/deployment.md lists the rights each "
                "component needs)")  # fmt: skip
    if isinstance(error, redis.ConnectionError):
        if "certificate verify failed" in lowered:
            return (f"Redis's TLS certificate is not trusted: {text} (give the CA that signed it: "
                    "rediss://...?ssl_ca_certs=CA.pem)")  # fmt: skip
        if "no certificate or crl found" in lowered:
            return f"a file of the URL holds no certificate (ssl_ca_certs must be PEM): {text}"
        if "wrong version number" in lowered or "record layer failure" in lowered:
            return f"TLS to a Redis port that speaks plaintext: {text} (use redis://, or Redis's TLS port)"
        if "eof occurred in violation of protocol" in lowered or "certificate required" in lowered:
            return (f"Redis ended the TLS handshake: {text} (does it require a client certificate? "
                    "rediss://...?ssl_certfile=CERT.pem&ssl_keyfile=KEY.pem)")  # fmt: skip
        if plain and ("reset by peer" in lowered or "closed by server" in lowered):
            return (f"Redis closed the connection: {text} (if that port speaks TLS, the URL must start "
                    "with rediss://)")  # fmt: skip
    if isinstance(error, redis.TimeoutError) and url.startswith("rediss://"):
        # a plaintext Redis waits for a command and never answers a TLS handshake
        return f"{text} (if that port speaks plaintext, the URL must start with redis://)"
    return text
