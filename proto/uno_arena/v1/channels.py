"""The one place a client turns a server address and its TLS settings into a gRPC channel.

Every client of the match server (the SDK's bots, the workers and their live-feed follower, the CLI's
control commands, bench/) builds its channels here, synchronous (`channel`) or asyncio (`aio_channel`),
from one frozen value, `ClientTLS`. Each of those channels carries a secret (a bot's token, a control
token), so a channel in plaintext is refused to any address off this machine unless the caller said
`insecure`: nothing secret crosses a network in clear by accident. Loopback (127.0.0.0/8, ::1,
localhost, a Unix socket) stays plaintext and simple.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

# The environment variables every client reads its TLS settings from (the CLI's options read the same
# ones, so `--tls-ca FILE` and UNO_ARENA_TLS_CA=FILE are one setting); a worker hands them to its jobs.
TLS_VARIABLE = "UNO_ARENA_TLS"
TLS_CA_VARIABLE = "UNO_ARENA_TLS_CA"
TLS_CLIENT_CERT_VARIABLE = "UNO_ARENA_TLS_CLIENT_CERT"
TLS_CLIENT_KEY_VARIABLE = "UNO_ARENA_TLS_CLIENT_KEY"
INSECURE_VARIABLE = "UNO_ARENA_INSECURE"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})
MAX_PEM_BYTES = 1024 * 1024  # a PEM file larger than this is refused: certificates are a few KiB


class TLSError(ValueError):
    """The TLS settings cannot be used (a missing or unreadable file, a certificate without its key)."""


class PlaintextRefused(TLSError):
    """A secret would cross a network in clear: plaintext to an address off this machine, not allowed."""


def is_loopback(address: str) -> bool:
    """Whether a gRPC target (`host:port`, `[v6]:port`, `dns:///host:port`, `ipv4:...`, `unix:...`)
    stays on this machine: 127.0.0.0/8, ::1, `localhost`, or a Unix socket. Other names are not
    resolved: a name is off this machine unless it is `localhost`."""
    target = address.strip()
    if target.startswith(("unix:", "unix-abstract:")):
        return True
    if target.startswith("dns:"):  # dns:///host:port or dns://authority/host:port
        target = target[4:]
        if target.startswith("//"):
            target = target[2:].partition("/")[2]
    for scheme in ("ipv4:", "ipv6:"):
        if target.startswith(scheme):  # a comma-separated list of addresses: every one must be loopback
            return all(is_loopback(part) for part in target[len(scheme) :].split(","))
    host = host_of(target)
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_of(address: str) -> str:
    """The host of `host:port` or `[v6]:port` (an IPv6 address alone, without a port, is its own host)."""
    if address.startswith("["):
        return address[1:].partition("]")[0]
    if address.count(":") > 1:  # a bare IPv6 address
        return address
    return address.rpartition(":")[0] if ":" in address else address


@dataclass(frozen=True, slots=True)
class ClientTLS:
    """How a client reaches the match server: plaintext (the default, to loopback only unless
    `insecure`), or TLS verified against the system's roots (`tls`) or a private CA (`ca_file`).

    `cert_file` and `key_file` (PEM) are the client's own certificate, for a server that asks for one
    (`uno-arena server --tls-client-ca`). Any of `ca_file` and `cert_file` turns TLS on by itself.
    """

    tls: bool = False  # TLS, the server's certificate checked against the system's roots
    ca_file: str | None = None  # TLS, the server's certificate checked against this CA (PEM) instead
    cert_file: str | None = None  # the client's certificate chain (PEM), for a server that asks for one
    key_file: str | None = None  # its private key (PEM, not encrypted)
    insecure: bool = False  # plaintext to an address off this machine is allowed (tokens cross in clear)

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise TLSError("a client certificate needs its key: give both --tls-client-cert and "
                           "--tls-client-key, or neither")  # fmt: skip

    @property
    def enabled(self) -> bool:
        """Whether the channel speaks TLS."""
        return self.tls or self.ca_file is not None or self.cert_file is not None

    def describe(self) -> str:
        """For a log line: what the channel trusts."""
        if not self.enabled:
            return "plaintext"
        trusted = f"CA {self.ca_file}" if self.ca_file else "the system's roots"
        return f"TLS ({trusted}{', client certificate' if self.cert_file else ''})"

    def check(self, address: str) -> None:
        """Raise `PlaintextRefused` when a channel to `address` would carry secrets in clear off this
        machine; before any connection is made."""
        if not self.enabled and not self.insecure and not is_loopback(address):
            raise PlaintextRefused(
                f"refusing to send a token in clear to {address}, which is not on this machine: connect "
                f"with TLS (--tls, or --tls-ca FILE / {TLS_CA_VARIABLE} for a private CA), or pass "
                "--insecure if the network between is private"
            )

    def credentials(self) -> grpc.ChannelCredentials:
        """The channel's TLS credentials, the files read now (a clear `TLSError` if one cannot be)."""
        root = read_pem(self.ca_file, "--tls-ca") if self.ca_file else None
        key = read_pem(self.key_file, "--tls-client-key") if self.key_file else None
        chain = read_pem(self.cert_file, "--tls-client-cert") if self.cert_file else None
        return grpc.ssl_channel_credentials(root_certificates=root, private_key=key, certificate_chain=chain)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ClientTLS:
        """The settings the environment gives (what `to_env` writes; unset or empty: not given)."""
        env = os.environ if environ is None else environ
        return cls(
            tls=_flag(env, TLS_VARIABLE),
            ca_file=env.get(TLS_CA_VARIABLE) or None,
            cert_file=env.get(TLS_CLIENT_CERT_VARIABLE) or None,
            key_file=env.get(TLS_CLIENT_KEY_VARIABLE) or None,
            insecure=_flag(env, INSECURE_VARIABLE),
        )

    def to_env(self) -> dict[str, str]:
        """The environment variables that give these settings (every one, empty when not given): what a
        worker hands to the jobs it forks."""
        return {
            TLS_VARIABLE: "1" if self.tls else "",
            TLS_CA_VARIABLE: self.ca_file or "",
            TLS_CLIENT_CERT_VARIABLE: self.cert_file or "",
            TLS_CLIENT_KEY_VARIABLE: self.key_file or "",
            INSECURE_VARIABLE: "1" if self.insecure else "",
        }


def _flag(environ: Mapping[str, str], variable: str) -> bool:
    value = environ.get(variable, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise TLSError(f"{variable} must be 1 or 0 (true or false), got {value!r}")


def read_pem(path: str, what: str) -> bytes:
    """A PEM file's bytes, or a `TLSError` saying which option's file cannot be used and why."""
    try:
        with Path(path).open("rb") as file:
            data = file.read(MAX_PEM_BYTES + 1)
    except OSError as error:
        raise TLSError(f"cannot read {what} {path}: {error.strerror or error}") from None
    if len(data) > MAX_PEM_BYTES:
        raise TLSError(f"{what} {path} is over {MAX_PEM_BYTES // 1024} KiB: not a PEM certificate or key")
    if b"-----BEGIN " not in data:
        raise TLSError(f"{what} {path} holds no PEM block (-----BEGIN ...)")
    return data


Options = Sequence[tuple[str, Any]]


def channel(address: str, tls: ClientTLS | None = None, options: Options = ()) -> grpc.Channel:
    """A synchronous channel to `address`: TLS if `tls` says so, else plaintext (refused off this
    machine unless `tls.insecure`)."""
    tls = tls or ClientTLS()
    tls.check(address)
    if tls.enabled:
        return grpc.secure_channel(address, tls.credentials(), options=options)
    return grpc.insecure_channel(address, options=options)


def aio_channel(address: str, tls: ClientTLS | None = None, options: Options = ()) -> grpc.aio.Channel:
    """As `channel`, for asyncio (`grpc.aio`)."""
    tls = tls or ClientTLS()
    tls.check(address)
    if tls.enabled:
        return grpc.aio.secure_channel(address, tls.credentials(), options=options)
    return grpc.aio.insecure_channel(address, options=options)
