"""Options shared by several commands: where Redis is and the key prefix."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    import redis

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"

redis_url = click.option(
    "--redis-url",
    envvar="UNO_ARENA_REDIS_URL",
    default=DEFAULT_REDIS_URL,
    show_default=True,
    help="Redis holding bot identities (env UNO_ARENA_REDIS_URL).",
)
key_prefix = click.option(
    "--key-prefix",
    envvar="UNO_ARENA_KEY_PREFIX",
    default="uno-arena",
    show_default=True,
    help="Namespace of every Redis key (env UNO_ARENA_KEY_PREFIX).",
)


def with_redis(command: Callable[..., Any]) -> Callable[..., Any]:
    return redis_url(key_prefix(command))


def connect(url: str) -> redis.Redis:
    """A Redis client that has answered a PING, or a clear error."""
    import redis  # here: a command that reads only files (`replay FILE`) runs without the platform

    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.RedisError as error:
        raise click.ClickException(f"cannot reach Redis at {url}: {error}") from None
    return client
