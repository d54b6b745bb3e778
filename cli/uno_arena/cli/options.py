"""Options shared by several commands: where Redis is, the key prefix, and where the match server is."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from uno_arena.v1 import DEFAULT_SERVER

if TYPE_CHECKING:
    import grpc
    import redis

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
SERVER_VARIABLE = "UNO_ARENA_SERVER"
ANSWER_PROBE_S = 0.5  # after UNAVAILABLE: how long a channel may take to connect before nothing answers

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


def server_option(
    help_text: str = "Match server HOST:PORT", default: str | None = DEFAULT_SERVER, note: str = ""
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--server HOST:PORT`, read from UNO_ARENA_SERVER when not given (the help says so, then `note`)."""
    return click.option(
        "--server",
        envvar=SERVER_VARIABLE,
        default=default,
        show_default=default is not None,
        metavar="HOST:PORT",
        help=f"{help_text} (env {SERVER_VARIABLE}{note}).",
    )


def unreachable(server: str) -> str:
    return (
        f"no match server answers at {server} (is `uno-arena server` running? --server or {SERVER_VARIABLE})"
    )


def rpc_failure(error: grpc.RpcError, channel: grpc.Channel, server: str) -> str:
    """One line for a failed call: nothing listening is said plainly, not as gRPC's "failed to connect to
    all addresses"; a server that answered and refused (e.g. UNAVAILABLE while it drains) is quoted."""
    import grpc

    code = error.code()
    if code is grpc.StatusCode.UNAVAILABLE and not _answers(channel):
        return unreachable(server)
    return f"{code.name}: {error.details()}"


def _answers(channel: grpc.Channel) -> bool:
    """Whether the channel connects: a server that refused a call still does; a dead port does not."""
    import grpc

    try:
        grpc.channel_ready_future(channel).result(timeout=ANSWER_PROBE_S)
    except grpc.FutureTimeoutError:
        return False
    return True


@contextlib.contextmanager
def dial(server: str) -> Iterator[grpc.Channel]:
    """A channel to the match server; a call failing on it ends the command with one clear line."""
    import grpc

    with grpc.insecure_channel(server) as channel:
        try:
            yield channel
        except grpc.RpcError as error:
            raise click.ClickException(rpc_failure(error, channel, server)) from None
