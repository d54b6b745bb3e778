"""Options shared by several commands: where Redis is, the key prefix, where the match server is and
how to reach it (TLS)."""

from __future__ import annotations

import contextlib
import functools
import socket
from collections.abc import Callable, Iterator
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
