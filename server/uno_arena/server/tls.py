"""The server's TLS credentials, re-read when the certificate files change: a renewed certificate
(certbot, a private CA's rotation) is served to every new connection without a restart, while the
connections already made keep theirs.

gRPC's dynamic server credentials ask `CertificateFiles.fetch` at each new TLS handshake whether the
configuration changed; it looks at the files' stat (cheap), and re-reads them only when that changed.
A half-written replacement (a certificate that does not match its key yet, a truncated file) is not
taken: the previous configuration stays, with one warning, until the files make a whole pair again.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from collections.abc import Callable

import grpc

from uno_arena.server.settings import ServerTLS
from uno_arena.v1.channels import TLSError, read_pem

log = logging.getLogger(__name__)

_Stamp = tuple[tuple[int, int, int], ...]


class CertificateFiles:
    """The server's PEM files and the configuration last read from them."""

    def __init__(self, tls: ServerTLS) -> None:
        self.tls = tls
        self._lock = threading.Lock()  # gRPC may ask from several threads at once
        self._stamp = self._stat()
        self.config = self._load()  # the files must be usable at start: a clear error otherwise
        self._refused: _Stamp | None = None  # files already found unusable: warned once
        self.reloads = 0

    def _paths(self) -> list[tuple[str, str]]:
        paths = [(self.tls.cert_file, "--tls-cert"), (self.tls.key_file, "--tls-key")]
        if self.tls.client_ca_file is not None:
            paths.append((self.tls.client_ca_file, "--tls-client-ca"))
        return paths

    def _stat(self) -> _Stamp:
        stamps = []
        for path, what in self._paths():
            try:
                stat = os.stat(path)
            except OSError as error:
                raise TLSError(f"cannot read {what} {path}: {error.strerror or error}") from None
            stamps.append((stat.st_mtime_ns, stat.st_size, stat.st_ino))
        return tuple(stamps)

    def _load(self) -> grpc.ServerCertificateConfiguration:
        tls = self.tls
        chain, key = read_pem(tls.cert_file, "--tls-cert"), read_pem(tls.key_file, "--tls-key")
        check = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:  # the standard library checks the pair: gRPC would only fail the handshakes later
            check.load_cert_chain(tls.cert_file, tls.key_file, password=_no_password)
        except (ssl.SSLError, OSError) as error:
            raise TLSError(f"--tls-cert {tls.cert_file} and --tls-key {tls.key_file} are not a certificate "
                           f"and its key: {error}") from None  # fmt: skip
        client_ca = None
        if tls.client_ca_file is not None:
            client_ca = read_pem(tls.client_ca_file, "--tls-client-ca")
            try:
                check.load_verify_locations(tls.client_ca_file)
            except (ssl.SSLError, OSError) as error:
                raise TLSError(f"--tls-client-ca {tls.client_ca_file} holds no usable CA certificate: "
                               f"{error}") from None  # fmt: skip
        return grpc.ssl_server_certificate_configuration([(key, chain)], root_certificates=client_ca)

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """gRPC's question at each new handshake: a new configuration, or None to keep the current one."""
        with self._lock:
            stamp: _Stamp | None = None
            try:
                stamp = self._stat()
                if stamp == self._stamp or stamp == self._refused:
                    return None
                config = self._load()
            except TLSError as error:  # a file missing (mid-replacement), unreadable, or not a pair
                if (stamp or ()) != self._refused:  # said once per state of the files
                    log.warning("the TLS files changed but cannot be used (still serving the previous "
                                "certificate): %s", error)  # fmt: skip
                    self._refused = stamp or ()
                return None
            except Exception:  # never let an unexpected failure reach gRPC's handshake
                log.exception("re-reading the TLS files failed; still serving the previous certificate")
                return None
            self._stamp, self.config, self._refused = stamp, config, None
            self.reloads += 1
        log.info("TLS certificate re-read from %s: new connections get it", self.tls.cert_file)
        return config


def _no_password() -> str:
    raise TLSError("the key is encrypted: give the server a key without a passphrase (file mode 0600)")


def server_credentials(tls: ServerTLS) -> tuple[grpc.ServerCredentials, CertificateFiles]:
    """Credentials that re-read `tls`'s files when they change, and the files' watcher."""
    files = CertificateFiles(tls)
    # the stubs say the fetcher returns a configuration; gRPC's documentation: None keeps the current one
    fetch: Callable[[], grpc.ServerCertificateConfiguration] = files.fetch  # type: ignore[assignment]
    credentials = grpc.dynamic_ssl_server_credentials(
        files.config, fetch, require_client_authentication=tls.client_ca_file is not None
    )
    return credentials, files
