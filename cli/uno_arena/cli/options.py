"""Options shared by several commands: where Redis is (and as whom), the key prefix, and where the match
server is."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from uno_arena.v1 import DEFAULT_SERVER

if TYPE_CHECKING:
    import grpc
    import redis

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
REDIS_URL_VARIABLE = "UNO_ARENA_REDIS_URL"
PASSWORD_FILE_VARIABLE = "UNO_ARENA_REDIS_PASSWORD_FILE"
PASSWORD_FILE_HINT = "'--redis-password-file'"
SERVER_VARIABLE = "UNO_ARENA_SERVER"
ANSWER_PROBE_S = 0.5  # after UNAVAILABLE: how long a channel may take to connect before nothing answers

redis_url = click.option(
    "--redis-url",
    envvar=REDIS_URL_VARIABLE,
    default=DEFAULT_REDIS_URL,
    show_default=True,
    metavar="URL",
    help=f"The platform's Redis (env {REDIS_URL_VARIABLE}): redis://USER:PASSWORD@HOST:PORT/DB, "
    "rediss://... for TLS (?ssl_ca_certs=CA.pem for a private CA); docs/deployment.md.",
)
redis_password_file = click.option(
    "--redis-password-file",
    envvar=PASSWORD_FILE_VARIABLE,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help=f"Read the Redis user's password from FILE (env {PASSWORD_FILE_VARIABLE}; its first line), "
    "in place of one in the URL, so that it is in no command line.",
)
key_prefix = click.option(
    "--key-prefix",
    envvar="UNO_ARENA_KEY_PREFIX",
    default="uno-arena",
    show_default=True,
    help="Namespace of every Redis key (env UNO_ARENA_KEY_PREFIX).",
)


def with_redis(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--redis-url`, `--redis-password-file` and `--key-prefix`: the command gets `redis_url` (with the
    file's password in it, if one was given) and `key_prefix`."""

    @functools.wraps(command)
    def with_password(*args: Any, redis_password_file: Path | None, **kwargs: Any) -> Any:
        if redis_password_file is not None:
            kwargs["redis_url"] = _with_password_of(kwargs["redis_url"], redis_password_file)
        return command(*args, **kwargs)

    return redis_url(redis_password_file(key_prefix(with_password)))


def _with_password_of(url: str, path: Path) -> str:
    from uno_arena.records.connection import with_password

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise click.BadParameter(f"cannot read {path}: {error}", param_hint=PASSWORD_FILE_HINT) from None
    if not lines or not lines[0]:
        raise click.BadParameter(
            f"{path} is empty: its first line must be the password", param_hint=PASSWORD_FILE_HINT
        )
    return with_password(url, lines[0])


def connect(url: str) -> redis.Redis:
    """A Redis client that has answered a PING, or a clear one-line error (the URL shown without its
    password)."""
    # here: a command that reads only files (`replay FILE`) runs without the platform (and redis)
    from uno_arena.records.connection import RedisUrlError, client

    try:
        made = client(url)
    except RedisUrlError as error:
        raise click.BadParameter(str(error), param_hint="'--redis-url'") from None
    ping(made, url)
    return made


def ping(client: redis.Redis, url: str) -> None:
    """Return once `client` answers a PING; else end the command with what to check, in one line."""
    import redis

    from uno_arena.records.connection import explain, redact

    try:
        client.ping()
    except redis.RedisError as error:
        raise click.ClickException(f"cannot use Redis at {redact(url)}: {explain(error, url)}") from None


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
