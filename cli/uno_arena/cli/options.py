"""Options shared by several commands: where Redis is (and as whom), the key prefix, where the match
server is and how to reach it (TLS)."""

from __future__ import annotations

import contextlib
import functools
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from uno_arena.v1 import DEFAULT_SERVER
from uno_arena.v1.channels import (
    INSECURE_VARIABLE,
    TLS_CA_VARIABLE,
    TLS_CLIENT_CERT_VARIABLE,
    TLS_CLIENT_KEY_VARIABLE,
    TLS_VARIABLE,
    ClientTLS,
    TLSError,
    host_of,
)

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


_PEM_FILE = click.Path(exists=True, dir_okay=False)
_TLS_OPTIONS = (
    click.option("--tls", "tls_on", is_flag=True, envvar=TLS_VARIABLE,
                 help=f"Connect with TLS, trusting the system's CA roots (env {TLS_VARIABLE}=1)."),
    click.option("--tls-ca", type=_PEM_FILE, envvar=TLS_CA_VARIABLE, metavar="FILE",
                 help=f"Connect with TLS, trusting this CA (PEM): a private CA (env {TLS_CA_VARIABLE})."),
    click.option("--tls-client-cert", type=_PEM_FILE, envvar=TLS_CLIENT_CERT_VARIABLE, metavar="FILE",
                 help="This client's certificate (PEM), for a server started with --tls-client-ca "
                      f"(env {TLS_CLIENT_CERT_VARIABLE})."),
    click.option("--tls-client-key", type=_PEM_FILE, envvar=TLS_CLIENT_KEY_VARIABLE, metavar="FILE",
                 help=f"Its private key (PEM) (env {TLS_CLIENT_KEY_VARIABLE})."),
    click.option("--insecure", is_flag=True, envvar=INSECURE_VARIABLE,
                 help="Allow plaintext to a server off this machine: the token crosses the network in "
                      f"clear (env {INSECURE_VARIABLE}=1). Loopback needs no TLS."),
)  # fmt: skip


def tls_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--tls`, `--tls-ca FILE`, `--tls-client-cert FILE`, `--tls-client-key FILE` and `--insecure` (each
    also from its UNO_ARENA_* variable), handed to the command as one `tls: ClientTLS`."""

    @functools.wraps(command)
    def with_tls(*args: Any, tls_on: bool, tls_ca: str | None, tls_client_cert: str | None,
                 tls_client_key: str | None, insecure: bool, **kwargs: Any) -> Any:  # fmt: skip
        try:
            tls = ClientTLS(tls_on, tls_ca, tls_client_cert, tls_client_key, insecure)
        except TLSError as error:
            raise click.UsageError(str(error)) from None
        return command(*args, tls=tls, **kwargs)

    decorated: Callable[..., Any] = with_tls
    for option in reversed(_TLS_OPTIONS):
        decorated = option(decorated)
    return decorated


def unreachable(server: str) -> str:
    return (
        f"no match server answers at {server} (is `uno-arena server` running? --server or {SERVER_VARIABLE})"
    )


def rpc_failure(
    error: grpc.RpcError, channel: grpc.Channel, server: str, tls: ClientTLS | None = None
) -> str:
    """One line for a failed call: nothing listening is said plainly, not as gRPC's "failed to connect to
    all addresses"; a port that takes connections but no gRPC connection is made on (TLS against
    plaintext, a certificate not trusted) is said so, with what to check; a server that answered and
    refused (e.g. UNAVAILABLE while it drains) is quoted."""
    import grpc

    code = error.code()
    if code is grpc.StatusCode.UNAVAILABLE and not _answers(channel):
        if not _port_open(server):
            return unreachable(server)
        tls = tls or ClientTLS()
        hint = (
            "is it a TLS server, and does --tls-ca name the CA that signed its certificate "
            "(or --tls-client-cert, if it requires one)?"
            if tls.enabled
            else "if it serves TLS, connect with --tls or --tls-ca FILE"
        )
        return (
            f"the match server at {server} takes connections, but no gRPC connection was made with "
            f"{tls.describe()}: {error.details()} ({hint})"
        )
    return f"{code.name}: {error.details()}"


def _port_open(server: str) -> bool:
    """Whether something accepts TCP connections at `server` (HOST:PORT)."""
    host, port = host_of(server), server.rpartition(":")[2]
    try:
        with socket.create_connection((host, int(port)), timeout=ANSWER_PROBE_S):
            return True
    except (OSError, ValueError):
        return False


def _answers(channel: grpc.Channel) -> bool:
    """Whether the channel connects: a server that refused a call still does; a dead port does not."""
    import grpc

    try:
        grpc.channel_ready_future(channel).result(timeout=ANSWER_PROBE_S)
    except grpc.FutureTimeoutError:
        return False
    return True


@contextlib.contextmanager
def dial(server: str, tls: ClientTLS | None = None) -> Iterator[grpc.Channel]:
    """A channel to the match server (TLS as `tls` says; plaintext off this machine refused unless
    `tls.insecure`); a call failing on it ends the command with one clear line."""
    import grpc

    from uno_arena.v1.channels import channel as new_channel

    try:
        opened = new_channel(server, tls)
    except TLSError as error:
        raise click.ClickException(str(error)) from None
    with opened as channel:
        try:
            yield channel
        except grpc.RpcError as error:
            raise click.ClickException(rpc_failure(error, channel, server, tls)) from None
