"""A private CA made in the test (trustme), its certificates as PEM files, a match server serving them,
nginx run as a real process, and the certificate a new TLS connection is shown."""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import trustme

from tests.conftest import free_port
from tests.provision import nginx
from tests.workers.harness import wait_until


@dataclass
class Certificates:
    """A private CA (its certificate in `ca_file`) and the server's certificate and key files, for
    127.0.0.1, ::1 and localhost."""

    folder: Path
    ca: trustme.CA
    ca_file: Path
    cert_file: Path
    key_file: Path

    def issue(self, name: str, *identities: str) -> tuple[Path, Path]:
        """A certificate this CA signs (for `identities`, default `name`), as (chain file, key file)."""
        leaf = self.ca.issue_cert(*(identities or (name,)))
        chain, key = self.folder / f"{name}.pem", self.folder / f"{name}.key"
        chain.write_bytes(b"".join(pem.bytes() for pem in leaf.cert_chain_pems))
        leaf.private_key_pem.write_to_path(str(key))
        return chain, key

    def renew_server_certificate(self) -> bytes:
        """Replace the server's files by a new certificate (and key) the way a renewal does: each file
        written beside and renamed over the old one. Returns the new certificate (PEM)."""
        chain, key = self.issue("renewed", *SERVER_NAMES)
        os.replace(chain, self.cert_file)
        os.replace(key, self.key_file)
        return self.cert_file.read_bytes()


SERVER_NAMES = ("localhost", "127.0.0.1", "::1")


@pytest.fixture
def certificates(tmp_path: Path) -> Certificates:
    folder = tmp_path / "tls"
    folder.mkdir()
    ca = trustme.CA()
    ca_file = folder / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    made = Certificates(folder, ca, ca_file, folder / "server.pem", folder / "server.key")
    chain, key = made.issue("first", *SERVER_NAMES)
    os.replace(chain, made.cert_file)
    os.replace(key, made.key_file)
    return made


def served_certificate(port: int, ca_file: Path, host: str = "127.0.0.1") -> bytes:
    """The certificate (PEM) a new TLS connection to `port` is shown, checked against `ca_file`."""
    context = ssl.create_default_context(cafile=str(ca_file))
    context.set_alpn_protocols(["h2"])  # as a gRPC client says it
    with socket.create_connection((host, port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname=host) as wrapped:  # fmt: skip
        der = wrapped.getpeercert(binary_form=True)
    assert der is not None
    return ssl.DER_cert_to_PEM_cert(der).encode()


def same_certificate(first: bytes, second: bytes) -> bool:
    """Whether two PEM texts hold the same (first) certificate."""
    return ssl.PEM_cert_to_DER_cert(first.decode()) == ssl.PEM_cert_to_DER_cert(second.decode())


@contextlib.contextmanager
def running_nginx(folder: Path, http: str) -> Iterator[subprocess.Popen[bytes]]:
    """nginx (Debian's package) in the foreground, one process, its pid, logs and temp files under
    `folder`, with `http` as its http block's content; stopped at the end. Skips (fails under CI) when
    nginx is not installed. The caller waits for its own ports."""
    binary = nginx()
    folder.mkdir(parents=True, exist_ok=True)
    temp = " ".join(f"{kind}_temp_path {folder}/{kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                       "uwsgi", "scgi"))  # fmt: skip
    conf = folder / "nginx.conf"
    conf.write_text(f"""daemon off;
master_process off;
pid {folder}/nginx.pid;
error_log {folder}/error.log info;
events {{ worker_connections 256; }}
http {{
  access_log {folder}/access.log;
  {temp}
{http}
}}
""")
    command = [binary, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield process
    finally:
        process.terminate()
        process.wait(10)


def wait_listening(process: subprocess.Popen[bytes], port: int, folder: Path) -> None:
    def listening() -> bool:
        assert process.poll() is None, (folder / "error.log").read_text()  # it exited: why
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        return False

    wait_until(listening, 10, "nginx to listen")


__all__ = ["Certificates", "certificates", "free_port"]
