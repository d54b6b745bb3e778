"""A real nginx (Debian's package, a process of the test's own) terminating TLS in front of a plaintext
match server on loopback with `grpc_pass`, configured by the block docs/deployment.md shows: SDK bots
and `uno-arena match play` play through it, a refused token's reason comes back through it, and (slow)
a whole match to 500 with bots that idle between matches."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import RunningServer, free_port
from tests.sdk.runner import BackgroundBot
from tests.tls import Certificates, certificates, running_nginx, wait_listening
from uno_arena.cli.main import cli
from uno_arena.sdk import BotRefused, ClientTLS, CloseReason
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.strong_bot import StrongBot

__all__ = ["certificates"]  # a fixture, used by name

DEPLOYMENT = Path(__file__).resolve().parents[1] / "docs" / "deployment.md"
MARKER = "<!-- tests/test_tls_proxy.py reads the nginx block below"


def documented_nginx() -> str:
    """The nginx configuration docs/deployment.md shows, as written there."""
    text = DEPLOYMENT.read_text()
    after = text[text.index(MARKER) :]
    found = re.search(r"```nginx\n(.*?)```", after, re.S)
    assert found is not None, "docs/deployment.md has no nginx block after its marker"
    return found[1]


def configured_nginx(port: int, certificates: Certificates, upstream: int) -> str:
    """The documented block with only the listening port, the certificate files and the upstream
    address replaced; each must be there exactly once."""
    config = documented_nginx()
    replaced = [("listen 443 ssl http2;", f"listen 127.0.0.1:{port} ssl http2;"),
                ("/etc/uno-arena/tls/server.pem", str(certificates.cert_file)),
                ("/etc/uno-arena/tls/server.key", str(certificates.key_file)),
                ("grpc_pass grpc://127.0.0.1:50051;", f"grpc_pass grpc://127.0.0.1:{upstream};")]  # fmt: skip
    for documented, ours in replaced:
        assert config.count(documented) == 1, f"docs/deployment.md's nginx block lost {documented!r}"
        config = config.replace(documented, ours)
    return config


@dataclass
class Proxy:
    address: str
    ca: ClientTLS


@pytest.fixture
def proxy(match_server: RunningServer, certificates: Certificates, tmp_path: Path) -> Iterator[Proxy]:
    """nginx with TLS on a free port of 127.0.0.1, passing gRPC to the plaintext `match_server`."""
    port = free_port()
    folder = tmp_path / "nginx"
    with running_nginx(folder, configured_nginx(port, certificates, match_server.port)) as process:
        wait_listening(process, port, folder)
        yield Proxy(f"127.0.0.1:{port}", ClientTLS(ca_file=str(certificates.ca_file)))


def test_the_documented_nginx_block_keeps_the_timeouts_a_long_match_needs() -> None:
    config = documented_nginx()
    for directive in ("client_max_body_size 0;", "client_body_timeout  1h;", "grpc_read_timeout    1h;",
                      "grpc_send_timeout    1h;", "keepalive_timeout    1h;"):  # fmt: skip
        assert directive in config, directive


def test_bots_and_match_play_play_through_nginx(proxy: Proxy, match_server: RunningServer,
                                               certificates: Certificates) -> None:  # fmt: skip
    bots = [BackgroundBot(GreedyBot(), proxy.address, name, match_server.register(name), proxy.ca)
            for name in ("proxied-a", "proxied-b")]  # fmt: skip
    try:
        for bot in bots:
            bot.wait_connected()
        command = ["match", "play", "proxied-a", "proxied-b", "--server", proxy.address, "--target", "100",
                   "--no-replay", "--tls-ca", str(certificates.ca_file)]  # fmt: skip
        result = CliRunner().invoke(cli, command, env={"UNO_ARENA_CONTROL_TOKEN": match_server.control_token})
        assert result.exit_code == 0 and "target_reached" in result.output, result.output
        assert match_server.arena.gateway.connection("proxied-a") is not None
    finally:
        for bot in bots:
            bot.stop()
    assert [bot.client.connections for bot in bots] == [1, 1]


def test_a_refusal_and_its_reason_come_back_through_nginx(proxy: Proxy, match_server: RunningServer) -> None:
    match_server.register("refused-behind")
    bot = BackgroundBot(GreedyBot(), proxy.address, "refused-behind", "not-its-token", proxy.ca)
    assert bot.finished.wait(20), "the bot was not refused"
    assert isinstance(bot.error, BotRefused) and bot.error.reason is CloseReason.TOKEN_REFUSED, bot.error


@pytest.mark.slow
def test_whole_matches_to_500_through_nginx_on_the_same_streams(
    proxy: Proxy, match_server: RunningServer, certificates: Certificates
) -> None:
    """Two matches to 500 between three bots, one after the other, on the bots' first streams."""
    names = ("long-a", "long-b", "long-c")
    bots = [BackgroundBot(StrongBot(), proxy.address, name, match_server.register(name), proxy.ca)
            for name in names]  # fmt: skip
    try:
        for bot in bots:
            bot.wait_connected()
        env = {"UNO_ARENA_CONTROL_TOKEN": match_server.control_token}
        for seed in (1, 2):
            command = ["match", "play", *names, "--server", proxy.address, "--seed", str(seed), "--no-replay",
                       "--tls-ca", str(certificates.ca_file)]  # fmt: skip
            result = CliRunner().invoke(cli, command, env=env)
            assert result.exit_code == 0 and "target_reached" in result.output, result.output
    finally:
        for bot in bots:
            bot.stop()
    assert [bot.client.connections for bot in bots] == [1, 1, 1]


@pytest.mark.slow
def test_a_stream_carries_more_than_nginx_s_default_body_limit(
    proxy: Proxy, match_server: RunningServer
) -> None:
    """A bot's stream adds up its messages as one request body: past nginx's default limit (1 MiB) a
    stream would be cut; the documented `client_max_body_size 0` lets it run on."""
    import grpc

    from uno_arena.v1 import bot_pb2, bot_pb2_grpc, channels

    token = match_server.register("chatty")
    pings = 70_000  # ~19 bytes each on the wire (nonce, tags, gRPC's frame): past 1.2 MiB in all
    messages = [bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="chatty", token=token, client="test"))]
    messages += [bot_pb2.BotMessage(ping=bot_pb2.Ping(nonce=2**62 + n)) for n in range(pings)]
    sent = sum(len(m.SerializeToString()) + 5 for m in messages)
    assert sent > 1024 * 1024
    with channels.channel(proxy.address, proxy.ca) as channel:
        call = bot_pb2_grpc.BotServiceStub(channel).Connect(iter(messages), timeout=120)
        pongs = 0
        try:
            for message in call:
                if message.HasField("pong"):
                    pongs += 1
                    if message.pong.nonce == 2**62 + pings - 1:
                        break
        except grpc.RpcError as error:
            pytest.fail(f"the stream ended after {pongs} pongs: {error.code()} {error.details()}")
        call.cancel()
    assert pongs == pings
