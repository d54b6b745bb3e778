"""Building and running the match server: `create_server` for tests, `serve` for the CLI."""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import os
import signal
import socket
import stat

import grpc
import redis.asyncio as aioredis
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from uno_arena.records import connection
from uno_arena.rules import build
from uno_arena.server.arena import Arena
from uno_arena.server.membership import Membership, advertised_address
from uno_arena.server.metrics import ServerMetrics
from uno_arena.server.servicers import SERVER_NAME, BotServicer, ControlServicer
from uno_arena.server.settings import ServerSettings
from uno_arena.server.tls import server_credentials
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1.channels import PlaintextRefused, is_loopback

log = logging.getLogger(__name__)

# The collector's thresholds while serving (Python's default: 700, 10, 10). A youngest-generation
# pass walks every young object alive, and under load most of those are gRPC's in-flight reads and
# writes, a few thousand of them, while a match keeps only a few objects per decision (its events and
# request records): at 700 the passes came every ~85 decisions and cost ~15 us of CPU a decision, at
# 20,000 every few thousand decisions and ~3 us, a pass then taking a few ms (docs/performance.md).
GC_THRESHOLDS = (20_000, 10, 10)


def grpc_options(settings: ServerSettings) -> list[tuple[str, int]]:
    """Message limits, HTTP/2 keepalive pings so a dead bot is noticed within seconds, and no
    SO_REUSEPORT: a second server on a taken address would otherwise share it and take half the calls.

    The keepalive: a ping to every bot every `keepalive_ms`, and a transport whose ping is not answered
    within `keepalive_ms` is closed. `grpc.keepalive_timeout_ms` alone does not close it in the gRPC
    releases we use: a bot behind a link that held every byte stayed connected for minutes (issue 30),
    until `grpc.http2.ping_timeout_ms`, gRPC's timeout for any ping (default 1 min), ran out. So that
    one is set too (it covers gRPC's own flow-control pings as well: a link whose round trip exceeds
    it is as good as dead). tests/server/test_keepalive.py holds the bound."""
    return [
        ("grpc.so_reuseport", 0),
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.keepalive_time_ms", settings.keepalive_ms),
        ("grpc.keepalive_timeout_ms", settings.keepalive_ms),
        ("grpc.http2.ping_timeout_ms", settings.keepalive_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_ping_interval_without_data_ms", 1000),
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 1000),
    ]


def _serialized(message: Message | bytes) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


_HANDLERS = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


def add_service(servicer: object, service: ServiceDescriptor, server: grpc.aio.Server) -> None:
    """As a generated `add_*Servicer_to_server`, but a method may also write or yield a message
    already serialized: decision requests are built as bytes, and a match's log is sent so."""
    handlers = {}
    for method in service.methods:
        request = message_factory.GetMessageClass(method.input_type)
        handlers[method.name] = _HANDLERS[(method.client_streaming, method.server_streaming)](
            getattr(servicer, method.name),
            request_deserializer=request.FromString,
            response_serializer=_serialized,
        )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
    server.add_registered_method_handlers(service.full_name, handlers)


async def create_server(
    address: str, redis_client: aioredis.Redis, settings: ServerSettings | None = None,
    metrics: ServerMetrics | None = None,
) -> tuple[grpc.aio.Server, int, Arena]:  # fmt: skip
    """A started server bound to `address` ("127.0.0.1:0" picks a free port) and its arena, counting in
    `metrics` (a `ServerMetrics` of its own unless given: `arena.metrics`).

    With `settings.tls` it speaks TLS only (its certificate re-read when the files change); without, it
    listens in plaintext on a loopback address only, unless `settings.insecure`: tokens cross in clear.
    Raises `PlaintextRefused` or `TLSError` (both ValueError) for settings that cannot be used, OSError
    when the address cannot be listened on.
    """
    settings = settings or ServerSettings()
    credentials = None
    if settings.tls is not None:
        credentials, _ = server_credentials(settings.tls)  # the files are read and checked now
    elif not settings.insecure and not is_loopback(address):
        raise PlaintextRefused(
            f"refusing to listen on {address} in plaintext: bots' and control tokens would cross the "
            "network in clear. Give the server a certificate (--tls-cert FILE --tls-key FILE), listen on "
            "127.0.0.1 behind a TLS-terminating proxy (docs/deployment.md), or pass --insecure if the "
            "network is private"
        )
    arena = Arena(settings, redis_client, metrics)
    server = grpc.aio.server(options=grpc_options(settings))
    add_service(BotServicer(arena), bot_pb2.DESCRIPTOR.services_by_name["BotService"], server)
    add_service(ControlServicer(arena), control_pb2.DESCRIPTOR.services_by_name["ControlService"], server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [
        bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name,
        control_pb2.DESCRIPTOR.services_by_name["ControlService"].full_name,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    ]
    reflection.enable_server_reflection(names, server)
    try:
        if credentials is not None:
            port = server.add_secure_port(address, credentials)
        else:
            port = server.add_insecure_port(address)
    except RuntimeError:  # grpc says only "Failed to bind": ask the system why
        raise _bind_error(address) from None
    if port == 0:
        raise _bind_error(address)
    if settings.unix_socket is not None:
        _listen_on_unix_socket(server, settings.unix_socket)
    await server.start()
    if settings.unix_socket is not None:
        os.chmod(settings.unix_socket, 0o666)  # as open as a loopback port: the sandboxed bots' way in
    for name in ["", *names[:2]]:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port, arena


def _listen_on_unix_socket(server: grpc.aio.Server, path: str) -> None:
    """Listen on the Unix socket `path` too (a stale socket file left by a killed server is replaced)."""
    if os.path.exists(path):
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            raise OSError(f"cannot listen on unix:{path}: it exists and is not a socket")
        os.unlink(path)
    if server.add_insecure_port(f"unix:{path}") == 0:
        raise OSError(f"cannot listen on unix:{path}")


def _bind_error(address: str) -> OSError:
    """Why `address` cannot be listened on, as an OSError (EADDRINUSE: "address already in use")."""
    host, _, port = address.rpartition(":")
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM)
        for family, kind, protocol, _, where in infos:
            with socket.socket(family, kind, protocol) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(where)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return OSError(f"cannot listen on {address}: address already in use")
        return OSError(f"cannot listen on {address}: {error.strerror or error}")
    except ValueError:
        return OSError(f"cannot listen on {address}: expected HOST:PORT")
    return OSError(f"cannot listen on {address}")


def redis_client(url: str, connections: int = 32) -> aioredis.Redis:
    """A client whose pool makes callers wait for a free connection instead of failing.

    Many bots connecting at once would otherwise exhaust the pool. The URL may name an ACL user, its
    password and TLS (`uno_arena.records.connection`; the server's least rights: docs/deployment.md).
    """
    return connection.async_client(url, connections, wait_s=30)


async def serve(
    address: str, redis_url: str, settings: ServerSettings, metrics: ServerMetrics | None = None
) -> None:
    """Run until SIGINT/SIGTERM; then drain running matches and stop (a second signal stops at once).
    `metrics`: what to count in (the caller serves its registry: `uno-arena server --metrics`).

    While it serves, the server keeps its entry in its pool (`settings.pool`, `membership`): it leaves
    the pool's open servers as it starts draining, and the pool as it stops."""
    redis_client_ = redis_client(redis_url)
    try:
        await redis_client_.ping()
        server, port, arena = await create_server(address, redis_client_, settings, metrics)
    except BaseException:
        await redis_client_.aclose()
        raise
    tls = settings.tls
    security = "plaintext" if tls is None else f"TLS with {tls.cert_file}"
    if tls is not None and tls.client_ca_file:
        security += f", client certificates from {tls.client_ca_file} required"
    log.info("match server listening on %s (port %d), %s, %s", address, port, security, build.describe())
    membership = Membership(arena, redis_client_, advertised_address(address, port, settings.advertise),
                            SERVER_NAME)  # fmt: skip
    await membership.beat()  # in the pool before the first bot or worker could look for it
    membership.start()
    # What is loaded by now lives as long as the server: kept out of the collector's passes, which
    # then walk only what matches and connections allocate (docs/performance.md)
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, _on_signal, stop, arena)
    await stop.wait()
    await membership.drain()
    running = len(arena.running)
    log.info(
        "stopping: no new matches; %d running %s first, up to %g s "
        "(Ctrl-C again to stop at once: they are aborted)",
        running, "match finishes" if running == 1 else "matches finish", settings.drain_timeout_ms / 1000,
    )  # fmt: skip
    drain = asyncio.create_task(arena.drain(settings.drain_timeout_ms / 1000))
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, drain.cancel)
    try:
        aborted = await drain
    except asyncio.CancelledError:
        log.warning("stopping at once: %d unfinished matches are aborted", len(arena.running))
        await arena.drain(0)
    else:
        if aborted:
            log.warning(
                "%d matches did not finish in %g s: aborted", aborted, settings.drain_timeout_ms / 1000
            )
        elif running:
            log.info("the running matches finished")
    await membership.stop()  # out of the pool before the bots are told: none comes back here
    await arena.stop_bots(timeout=2)  # their streams end now (UNAVAILABLE), so the stop below is prompt
    await server.stop(grace=1)
    await redis_client_.aclose()
    log.info("match server stopped")


def _on_signal(stop: asyncio.Event, arena: Arena) -> None:
    arena.draining = True
    stop.set()
