"""TLS on the match server's connections, with a private CA made in the test (trustme): SDK bots and
`uno-arena match play` play through it; a plaintext client is refused by a TLS server; no client sends its
token in clear off this machine, and the server does not listen in plaintext there; the certificate is
replaced under connected bots and new connections get the new one; client certificates required by
`--tls-client-ca`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import redis
from click.testing import CliRunner
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.conftest import REDIS_URL, RunningServer, start_server, stop_server
from tests.sdk.runner import BackgroundBot
from tests.tls import Certificates, certificates, same_certificate, served_certificate
from tests.workers.harness import WorkerProcess, wait_until
from uno_arena.cli.main import cli
from uno_arena.sdk import BotClient, ClientTLS, PlaintextRefused, TLSError, run_bot
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.server.app import create_server, redis_client
from uno_arena.server.settings import ServerSettings, ServerTLS
from uno_arena.v1 import channels, control_pb2, control_pb2_grpc
from uno_arena.workers.live import Follower

__all__ = ["certificates"]  # a fixture, used by name

OFF_MACHINE = "192.0.2.1:50051"  # TEST-NET-1: never routed, and never connected to here


@pytest.fixture
def tls_server(redis_prefix: tuple[redis.Redis, str], certificates: Certificates) -> Iterator[RunningServer]:
    """A real match server on 127.0.0.1 that speaks TLS only, with the test CA's certificate."""
    tls = ServerTLS(str(certificates.cert_file), str(certificates.key_file))
    running, thread = start_server(*redis_prefix, tls=tls, keepalive_ms=1000)
    yield running
    stop_server(running, thread)


def trusting(certificates: Certificates, **more: str) -> ClientTLS:
    return ClientTLS(ca_file=str(certificates.ca_file), **more)


def connected_bots(server: RunningServer, tls: ClientTLS, *names: str) -> list[BackgroundBot]:
    bots = [BackgroundBot(GreedyBot(), server.address, name, server.register(name), tls) for name in names]
    for bot in bots:
        bot.wait_connected()
    return bots


def match_play(server: RunningServer, *bots: str, options: tuple[str, ...] = ()) -> tuple[int, str]:
    command = ["match", "play", *bots, "--server", server.address, "--target", "60", "--no-replay", *options]
    result = CliRunner().invoke(cli, command, env={"UNO_ARENA_CONTROL_TOKEN": server.control_token})
    return result.exit_code, result.output


def test_sdk_bots_and_match_play_play_a_match_over_tls(tls_server: RunningServer,
                                                       certificates: Certificates) -> None:  # fmt: skip
    bots = connected_bots(tls_server, trusting(certificates), "tls-a", "tls-b")
    try:
        code, output = match_play(
            tls_server, "tls-a", "tls-b", options=("--tls-ca", str(certificates.ca_file))
        )
        assert code == 0, output
        assert "target_reached" in output and "(winner)" in output
        # the CA from the environment, as UNO_ARENA_TLS_CA, is the same setting
        command = ["match", "play", "tls-a", "tls-b", "--server", tls_server.address, "--target", "30",
                   "--no-replay", "--json"]  # fmt: skip
        env = {
            "UNO_ARENA_CONTROL_TOKEN": tls_server.control_token,
            "UNO_ARENA_TLS_CA": str(certificates.ca_file),
        }
        result = CliRunner().invoke(cli, command, env=env)
        assert result.exit_code == 0 and '"end": "target_reached"' in result.output, result.output
    finally:
        for bot in bots:
            bot.stop()
    assert [bot.client.connections for bot in bots] == [1, 1]  # one connection each, never lost


def test_a_plaintext_client_is_refused_by_a_tls_server(tls_server: RunningServer,
                                                       caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    with grpc.insecure_channel(tls_server.address) as plain, pytest.raises(grpc.RpcError) as refused:
        health_pb2_grpc.HealthStub(plain).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
    # the CLI says what is wrong, not that nothing answers
    code, output = match_play(tls_server, "nobody-a", "nobody-b")
    assert code == 1
    assert f"the match server at {tls_server.address} takes connections, but no gRPC connection" in output
    assert "if it serves TLS, connect with --tls or --tls-ca FILE" in output
    # a plaintext SDK bot is never welcomed, and says why once
    caplog.set_level(logging.WARNING, "uno_arena.sdk")
    bot = BackgroundBot(GreedyBot(), tls_server.address, "plain", tls_server.register("plain"))
    try:
        wait_until(
            lambda: "takes connections, but no gRPC connection" in caplog.text, 20, "the SDK's warning"
        )
        assert bot.client.connections == 0 and tls_server.arena.gateway.connection("plain") is None
    finally:
        bot.stop()


def test_a_client_trusting_another_ca_is_refused(tls_server: RunningServer, tmp_path: Path) -> None:
    other = tmp_path / "other-ca.pem"
    __import__("trustme").CA().cert_pem.write_to_path(str(other))
    code, output = match_play(tls_server, "a", "b", options=("--tls-ca", str(other)))
    assert code == 1 and "takes connections, but no gRPC connection was made with TLS (CA" in output, output
    # UNO_ARENA_TLS=1: TLS with the system's roots, which do not hold the test's private CA
    command = ["match", "play", "a", "b", "--server", tls_server.address]
    env = {"UNO_ARENA_CONTROL_TOKEN": tls_server.control_token, "UNO_ARENA_TLS": "1"}
    result = CliRunner().invoke(cli, command, env=env)
    assert result.exit_code == 1 and "was made with TLS (the system's roots)" in result.output, result.output


@pytest.mark.parametrize(
    ("address", "loopback"),
    [("127.0.0.1:50051", True), ("127.8.9.10:1", True), ("localhost:50051", True), ("[::1]:50051", True),
     ("::1", True), ("dns:///localhost:50051", True), ("ipv4:127.0.0.1:1,127.0.0.2:2", True),
     ("unix:/run/uno.sock", True), ("0.0.0.0:50051", False), ("[::]:50051", False), (":50051", False),
     ("192.0.2.1:50051", False), ("arena.example.org:443", False), ("localhost.example.org:1", False),
     ("dns:///arena.example.org:443", False), ("ipv4:127.0.0.1:1,192.0.2.1:2", False)],
)  # fmt: skip
def test_what_is_loopback(address: str, loopback: bool) -> None:
    assert channels.is_loopback(address) is loopback


def test_a_client_refuses_to_send_its_token_in_clear_off_this_machine(tmp_path: Path) -> None:
    """Refused before any connection is made (the address is never routed: nothing could answer)."""
    with pytest.raises(PlaintextRefused, match=r"refusing to send a token in clear to 192\.0\.2\.1:50051"):
        BotClient(GreedyBot(), OFF_MACHINE, "bot", "secret-token")
    with pytest.raises(PlaintextRefused):
        asyncio.run(asyncio.wait_for(run_bot(GreedyBot(), OFF_MACHINE, "bot", "secret-token"), 5))
    with pytest.raises(PlaintextRefused):
        channels.channel(OFF_MACHINE)
    BotClient(GreedyBot(), OFF_MACHINE, "bot", "token", tls=ClientTLS(insecure=True))  # said so: allowed
    BotClient(GreedyBot(), OFF_MACHINE, "bot", "token", tls=ClientTLS(tls=True))  # system roots

    env = {"UNO_ARENA_CONTROL_TOKEN": "secret", "UNO_ARENA_BOT_TOKEN": "secret"}
    for command in (["match", "play", "a", "b", "--server", OFF_MACHINE],
                    ["bot", "run", "uno_arena.sdk.examples.greedy_bot:GreedyBot", "--name", "a", "--server",
                     OFF_MACHINE]):  # fmt: skip
        result = CliRunner().invoke(cli, command, env=env)
        assert result.exit_code == 1, result.output
        assert "refusing to send a token in clear to 192.0.2.1:50051" in result.output
        assert "--tls-ca FILE" in result.output and "--insecure" in result.output
    # a TLS file that is not there is a usage error before anything starts
    missing = str(tmp_path / "missing.pem")
    result = CliRunner().invoke(cli, ["match", "play", "a", "b", "--tls-ca", missing], env=env)
    assert result.exit_code == 2 and "does not exist" in result.output
    with pytest.raises(TLSError, match="needs its key"):
        ClientTLS(cert_file="client.pem")


def test_a_worker_refuses_a_server_off_this_machine_in_plaintext(monkeypatch: pytest.MonkeyPatch) -> None:
    """The job fails the match with the reason, rather than send the control token in clear."""
    from uno_arena.records.spec import spec_from_dict
    from uno_arena.records.tournament import Keys, ScheduledMatch
    from uno_arena.workers import jobs
    from uno_arena.workers.settings import WorkerSettings

    spec = spec_from_dict({"name": "far", "bots": ["a", "b"], "server": OFF_MACHINE})
    match = ScheduledMatch(index=0, cycle=0, bots=("a", "b"), seed=1, dealer=0)
    with pytest.raises(jobs.MatchFailed, match=r"refusing to send a token in clear to 192\.0\.2\.1"):
        jobs._play(Keys("p", "far"), 0, match, spec, WorkerSettings("token"), lambda fault: None)
    monkeypatch.setenv("UNO_ARENA_TLS_CA", "/nowhere/ca.pem")
    monkeypatch.setenv("UNO_ARENA_CONTROL_TOKEN", "token")
    settings = WorkerSettings.from_env()
    assert settings.tls == ClientTLS(ca_file="/nowhere/ca.pem")
    with pytest.raises(jobs.MatchFailed, match=r"cannot read --tls-ca /nowhere/ca\.pem"):
        jobs._play(Keys("p", "far"), 0, match, spec, settings, lambda fault: None)


def test_the_server_listens_in_plaintext_on_loopback_only_unless_told(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    async def listen(address: str, settings: ServerSettings) -> int:
        client = redis_client(REDIS_URL)
        try:
            server, port, _ = await create_server(address, client, settings)
            await server.stop(None)
            return port
        finally:
            await client.aclose()

    with pytest.raises(PlaintextRefused, match=r"refusing to listen on 0\.0\.0\.0:0 in plaintext"):
        asyncio.run(listen("0.0.0.0:0", ServerSettings()))
    assert asyncio.run(listen("0.0.0.0:0", ServerSettings(insecure=True))) > 0
    assert asyncio.run(listen("localhost:0", ServerSettings())) > 0
    result = CliRunner().invoke(cli, ["server", "--listen", "0.0.0.0:0", "--redis-url", REDIS_URL,
                                      "--key-prefix", redis_prefix[1]])  # fmt: skip
    assert result.exit_code == 1
    assert "refusing to listen on 0.0.0.0:0 in plaintext" in result.output
    assert "--tls-cert FILE --tls-key FILE" in result.output and "--insecure" in result.output


def test_the_server_refuses_a_certificate_that_is_not_its_keys(
    redis_prefix: tuple[redis.Redis, str], certificates: Certificates
) -> None:
    _, other_key = certificates.issue("other")
    tls = ServerTLS(str(certificates.cert_file), str(other_key))

    async def listen() -> None:
        client = redis_client(REDIS_URL)
        try:
            await create_server("127.0.0.1:0", client, ServerSettings(tls=tls))
        finally:
            await client.aclose()

    with pytest.raises(TLSError, match="are not a certificate and its key"):
        asyncio.run(listen())


def test_a_replaced_certificate_is_served_to_new_connections_while_bots_stay_connected(
    tls_server: RunningServer, certificates: Certificates, caplog: pytest.LogCaptureFixture
) -> None:
    first = certificates.cert_file.read_bytes()
    assert same_certificate(served_certificate(tls_server.port, certificates.ca_file), first)
    bots = connected_bots(tls_server, trusting(certificates), "kept-a", "kept-b")
    try:
        caplog.set_level(logging.INFO, "uno_arena.server.tls")
        renewed = certificates.renew_server_certificate()
        assert not same_certificate(renewed, first)
        assert same_certificate(served_certificate(tls_server.port, certificates.ca_file), renewed)
        assert "TLS certificate re-read" in caplog.text
        # a half-done replacement (a certificate without its key) is not taken: the last good one stays
        certificates.cert_file.write_bytes(certificates.issue("half")[0].read_bytes())
        assert same_certificate(served_certificate(tls_server.port, certificates.ca_file), renewed)
        assert "cannot be used (still serving the previous certificate)" in caplog.text
        certificates.cert_file.write_bytes(renewed)
        # the bots connected before the change play on over their first connections, and a new one joins
        late = connected_bots(tls_server, trusting(certificates), "late")[0]
        bots.append(late)
        code, output = match_play(tls_server, "kept-a", "kept-b", "late",
                                  options=("--tls-ca", str(certificates.ca_file)))  # fmt: skip
        assert code == 0 and "target_reached" in output, output
    finally:
        for bot in bots:
            bot.stop()
    assert [bot.client.connections for bot in bots] == [1, 1, 1]


@pytest.fixture
def mutual_server(
    redis_prefix: tuple[redis.Redis, str], certificates: Certificates
) -> Iterator[RunningServer]:
    """A TLS server that requires a client certificate signed by the test CA."""
    tls = ServerTLS(str(certificates.cert_file), str(certificates.key_file), str(certificates.ca_file))
    running, thread = start_server(*redis_prefix, tls=tls, keepalive_ms=1000)
    yield running
    stop_server(running, thread)


def test_client_certificates_required_by_tls_client_ca(mutual_server: RunningServer,
                                                       certificates: Certificates) -> None:  # fmt: skip
    cert, key = certificates.issue("worker-1")
    with_cert = trusting(certificates, cert_file=str(cert), key_file=str(key))
    bots = connected_bots(mutual_server, with_cert, "mutual-a", "mutual-b")
    try:
        # a control client with a certificate passes ...
        request = control_pb2.ListBotsRequest()
        metadata = [("authorization", f"Bearer {mutual_server.control_token}")]
        with channels.channel(mutual_server.address, with_cert) as channel:
            listed = control_pb2_grpc.ControlServiceStub(channel).ListBots(
                request, metadata=metadata, timeout=10
            )
        assert sorted(bot.name for bot in listed.bots) == ["mutual-a", "mutual-b"]
        options = ("--tls-ca", str(certificates.ca_file), "--tls-client-cert", str(cert),
                   "--tls-client-key", str(key))  # fmt: skip
        code, output = match_play(mutual_server, "mutual-a", "mutual-b", options=options)
        assert code == 0 and "target_reached" in output, output
        # ... one without is refused in the handshake, before any token is read
        without = channels.channel(mutual_server.address, trusting(certificates))
        with without as channel, pytest.raises(grpc.RpcError) as refused:
            control_pb2_grpc.ControlServiceStub(channel).ListBots(request, metadata=metadata, timeout=10)
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        code, output = match_play(mutual_server, "mutual-a", "mutual-b",
                                  options=("--tls-ca", str(certificates.ca_file)))  # fmt: skip
        assert code == 1 and "no gRPC connection was made with TLS" in output, output
        # and a certificate from another CA is refused too
        stranger = __import__("trustme").CA().issue_cert("stranger")
        stranger_cert, stranger_key = certificates.folder / "s.pem", certificates.folder / "s.key"
        stranger.cert_chain_pems[0].write_to_path(str(stranger_cert))
        stranger.private_key_pem.write_to_path(str(stranger_key))
        code, output = match_play(mutual_server, "mutual-a", "mutual-b",
                                  options=(*options[:2], "--tls-client-cert", str(stranger_cert),
                                           "--tls-client-key", str(stranger_key)))  # fmt: skip
        assert code == 1, output
    finally:
        for bot in bots:
            bot.stop()


def test_bot_list_reaches_a_tls_server(tls_server: RunningServer, certificates: Certificates) -> None:
    bots = connected_bots(tls_server, trusting(certificates), "listed")
    try:
        command = ["bot", "list", "--server", tls_server.address, "--redis-url", REDIS_URL, "--key-prefix",
                   tls_server.prefix, "--json"]  # fmt: skip
        env = {"UNO_ARENA_CONTROL_TOKEN": tls_server.control_token}
        plain = CliRunner().invoke(cli, command, env=env)
        assert "connections not shown: the match server at" in plain.output, plain.output
        shown = CliRunner().invoke(cli, [*command, "--tls-ca", str(certificates.ca_file)], env=env)
        assert shown.exit_code == 0 and '"connected": true' in shown.output, shown.output
    finally:
        for bot in bots:
            bot.stop()


def test_a_worker_plays_and_follows_a_match_with_a_client_certificate(
    mutual_server: RunningServer, certificates: Certificates, tmp_path: Path
) -> None:
    """A real `uno-arena worker` whose options give its jobs (a fork) TLS and a client certificate: the
    match is played and recorded; the live-feed follower, as a job runs it, gets every public event."""
    from uno_arena.records.live import LiveFeed
    from uno_arena.records.tournament import Keys

    cert, key = certificates.issue("worker-1")
    tls = trusting(certificates, cert_file=str(cert), key_file=str(key))
    bots = connected_bots(mutual_server, tls, "w-a", "w-b")
    client, prefix = mutual_server.redis, mutual_server.prefix
    try:
        options = ("--tls-ca", str(certificates.ca_file), "--tls-client-cert", str(cert), "--tls-client-key",
                   str(key))  # fmt: skip
        output = play_a_tournament(mutual_server, tmp_path / "worker.log", options, recorded=True)
        assert "refusing" not in output and "cannot follow" not in output

        keys = Keys(prefix, "followed")
        follower = Follower(LiveFeed(client, keys, 0, ("w-a", "w-b")), mutual_server.address,
                            mutual_server.control_token, tls)  # fmt: skip
        follower.start()
        request = control_pb2.PlayMatchRequest(match_id=keys.match_id(0), bots=["w-a", "w-b"], seed=4)
        request.rules.target_score = 40
        metadata = [("authorization", f"Bearer {mutual_server.control_token}")]
        with channels.channel(mutual_server.address, tls) as channel:
            progress = list(control_pb2_grpc.ControlServiceStub(channel).PlayMatch(request, metadata=metadata,
                                                                                   timeout=60))  # fmt: skip
        follower.close()
        assert follower.written == progress[-1].finished.event_count > 0
    finally:
        for bot in bots:
            bot.stop()


@pytest.mark.slow
def test_a_worker_without_its_client_certificate_fails_the_match_saying_why(
    mutual_server: RunningServer, certificates: Certificates, tmp_path: Path
) -> None:
    cert, key = certificates.issue("bot")
    bots = connected_bots(mutual_server, trusting(certificates, cert_file=str(cert), key_file=str(key)),
                          "w-a", "w-b")  # fmt: skip
    try:
        play_a_tournament(mutual_server, tmp_path / "bare.log", ("--tls-ca", str(certificates.ca_file)),
                          recorded=False)  # fmt: skip
    finally:
        for bot in bots:
            bot.stop()


def play_a_tournament(server: RunningServer, log: Path, options: tuple[str, ...], recorded: bool) -> str:
    """One match between w-a and w-b played by a `uno-arena worker --burst` with `options`: recorded, or
    failed for want of a connection (the server refusing the handshake); the worker's output."""
    from uno_arena.records.spec import spec_from_dict
    from uno_arena.records.tournament import MatchState, errors, states
    from uno_arena.workers import lifecycle

    client, prefix = server.redis, server.prefix
    spec = spec_from_dict({"name": "mtls", "bots": ["w-a", "w-b"], "target": 60, "seed": 3,
                           "server": server.address})  # fmt: skip
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    lifecycle.start(client, prefix, tournament_id)
    worker = WorkerProcess(prefix, server.control_token, log, options=("--burst", *options))
    worker.environment["UNO_ARENA_SERVER_WAIT_SECONDS"] = "1"
    worker.start()
    try:
        if recorded:
            wait_until(lambda: states(client, prefix, tournament_id).get(0) is MatchState.DONE, 60,
                       f"the match to be recorded; the worker said:\n{worker.output()}")  # fmt: skip
        else:
            wait_until(lambda: 0 in errors(client, prefix, tournament_id), 60,
                       f"the match to fail; the worker said:\n{worker.output()}")  # fmt: skip
            assert "UNAVAILABLE" in errors(client, prefix, tournament_id)[0]
    finally:
        worker.stop()
    return worker.output()
