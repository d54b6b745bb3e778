"""Limits on guessing tokens: failed Hellos and failed control tokens are limited per peer address, never per
bot name, so a bot with the right token, from elsewhere, always gets in; tokens are compared exactly.

The server listens on `localhost`, both 127.0.0.1 and ::1: two client addresses on one machine; behind a
trusted proxy, the client it names in `x-forwarded-for` counts instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import pytest
import redis

from tests.conftest import RunningServer, start_server, stop_server
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import TestBot
from tests.server.test_limits import on_server
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.server.throttle import FailureLimiter, client_address, peer_host
from uno_arena.v1 import bot_pb2, bot_pb2_grpc, control_pb2, control_pb2_grpc
from uno_arena.v1.names import close_reason_of

BURST = 5


@pytest.fixture
def two_addresses(redis_prefix: tuple[redis.Redis, str]) -> Iterator[RunningServer]:
    """A server on localhost: reached at 127.0.0.1 (the guesser) and at [::1] (everyone else)."""
    running, thread = start_server(
        *redis_prefix, address="localhost:0", keepalive_ms=1000, auth_failure_burst=BURST,
        auth_failures_per_s=0.2, auth_refusal_hold_ms=100,
    )  # fmt: skip
    yield running
    stop_server(running, thread)


def ipv6(server: RunningServer) -> str:
    return f"[::1]:{server.port}"


def ended(bot: TestBot) -> tuple[grpc.StatusCode, bot_pb2.CloseReason, str]:
    bot.wait_for(lambda: bot.ended, timeout=15)
    assert bot.error is not None
    code, reason, details = bot.error.code(), bot.close_reason(), bot.error.details() or ""
    bot.close()
    return code, reason, details


def test_guesses_at_a_bot_are_refused_after_a_burst_while_its_right_token_from_elsewhere_gets_in(
    two_addresses: RunningServer,
) -> None:
    server = two_addresses
    token = server.register("target")
    for guess in range(BURST):  # the burst: each guess checked and refused
        wrong = TestBot(server.address, "target", f"guess-{guess}")
        assert ended(wrong)[:2] == (grpc.StatusCode.UNAUTHENTICATED, bot_pb2.CLOSE_REASON_TOKEN_REFUSED)
    limited = ended(TestBot(server.address, "target", "guess-again"))
    assert limited[:2] == (grpc.StatusCode.RESOURCE_EXHAUSTED, bot_pb2.CLOSE_REASON_RATE_LIMITED)
    assert limited[2].startswith("too many failed Hellos from 127.0.0.1: wait ")
    # keyed by address: even the right token is refused from the guesser's address for now ...
    assert ended(TestBot(server.address, "target", token))[1] == bot_pb2.CLOSE_REASON_RATE_LIMITED
    # ... while the bot itself, from its own address, is never locked out by the guesses at its name
    honest = TestBot(ipv6(server), "target", token)
    honest.wait_for(honest.welcomed)
    assert on_server(server, lambda: server.arena.gateway.connection("target")) is not None
    honest.close()
    assert on_server(server, lambda: server.arena.hello_failures.refused) == 2  # refused unchecked


def control_call(address: str, header: str) -> grpc.RpcError | control_pb2.ListBotsResponse:
    with grpc.insecure_channel(address) as channel:
        stub = control_pb2_grpc.ControlServiceStub(channel)
        try:
            response: control_pb2.ListBotsResponse = stub.ListBots(
                control_pb2.ListBotsRequest(), metadata=[("authorization", header)], timeout=10
            )
        except grpc.RpcError as error:
            return error
        return response


def test_wrong_control_tokens_are_refused_after_a_burst_and_the_right_one_from_elsewhere_works(
    two_addresses: RunningServer,
) -> None:
    server = two_addresses
    for guess in range(BURST):
        refused = control_call(server.address, f"Bearer guess-{guess}")
        assert isinstance(refused, grpc.RpcError) and refused.code() == grpc.StatusCode.UNAUTHENTICATED
    limited = control_call(server.address, f"Bearer {server.control_token}")  # right, from the guesser
    assert isinstance(limited, grpc.RpcError) and limited.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "too many wrong control tokens from 127.0.0.1: wait " in (limited.details() or "")
    assert isinstance(control_call(ipv6(server), f"Bearer {server.control_token}"),
                      control_pb2.ListBotsResponse)  # fmt: skip
    assert on_server(server, lambda: server.arena.control_failures.refused) == 1


def test_a_token_is_compared_exactly(match_server: RunningServer) -> None:
    """`authorization: Bearer TOKEN ` (a trailing space) is another token, as is one without `Bearer `."""
    token = match_server.control_token
    assert isinstance(control_call(match_server.address, f"Bearer {token}"), control_pb2.ListBotsResponse)
    for header in (f"Bearer {token} ", f"Bearer  {token}", token, f"bearer {token}"):
        refused = control_call(match_server.address, header)
        assert isinstance(refused, grpc.RpcError), repr(header)
        assert refused.code() == grpc.StatusCode.UNAUTHENTICATED, repr(header)
    bot_token = match_server.register("exact")
    spaced = TestBot(match_server.address, "exact", bot_token + " ")
    assert ended(spaced)[:2] == (grpc.StatusCode.UNAUTHENTICATED, bot_pb2.CLOSE_REASON_TOKEN_REFUSED)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_failure_limiter_allows_a_burst_refills_and_forgets_within_its_bound() -> None:
    clock = Clock()
    limiter = FailureLimiter(burst=3, per_s=0.5, peers=2, clock=clock)
    for _ in range(3):
        assert limiter.wait("a") == 0
        limiter.failed("a")
    assert limiter.wait("a") == pytest.approx(2.0)  # empty: one failure back in 1 / 0.5 s
    assert limiter.wait("b") == 0  # another address is untouched
    clock.now += 2
    assert limiter.wait("a") == 0  # one failure allowed again
    limiter.failed("a")
    assert limiter.wait("a") > 0
    limiter.failed("b")
    limiter.failed("c")  # a third address: the least recently failed ("a") is forgotten
    assert len(limiter) == 2 and limiter.wait("a") == 0
    clock.now += 10  # full again: forgotten
    assert limiter.wait("b") == 0 and limiter.wait("c") == 0 and len(limiter) == 0
    off = FailureLimiter(burst=0, per_s=1, peers=10)
    off.failed("a")
    assert off.wait("a") == 0 and len(off) == 0


def test_refusals_are_held_back_a_bounded_number_at_once() -> None:
    async def scenario() -> tuple[float, ...]:
        limiter = FailureLimiter(burst=1, per_s=1, peers=10, hold_s=0.05, max_held=1)
        return tuple(await asyncio.gather(limiter.hold(5.0), limiter.hold(5.0), limiter.hold(0.01)))

    assert asyncio.run(scenario()) == (0.05, 0.0, 0.0)  # held for hold_s; the others not (one at most)
    assert asyncio.run(FailureLimiter(1, 1, 10, hold_s=0.05).hold(0.01)) == 0.01  # no longer than its wait


def test_peer_addresses_are_keyed_without_their_port_and_ipv6_by_its_64() -> None:
    assert peer_host("ipv4:10.0.0.7:5555") == "10.0.0.7"
    assert peer_host("ipv6:[2001:db8::1]:5555") == "2001:db8::/64"
    assert peer_host("ipv6:%5B2001:db8:0:0:ffff::2%5D:6000") == "2001:db8::/64"
    assert peer_host("ipv6:[::ffff:10.0.0.7]:5555") == "10.0.0.7"
    assert peer_host("ipv6:[::1]:5555") == "::/64"
    assert peer_host("unix:/tmp/socket") == "unix:/tmp/socket"
    trusted = {"10.0.0.1"}
    assert client_address("ipv4:10.0.0.1:80", [("x-forwarded-for", "1.2.3.4, 5.6.7.8")], trusted) == "5.6.7.8"
    assert client_address("ipv4:10.0.0.2:80", [("x-forwarded-for", "5.6.7.8")], trusted) == "10.0.0.2"
    assert client_address("ipv4:10.0.0.1:80", [("x-forwarded-for", "junk")], trusted) == "10.0.0.1"


@pytest.mark.settings(auth_failure_burst=1, auth_failures_per_s=1.0, auth_refusal_hold_ms=100)
def test_the_sdk_refused_for_its_address_retries_and_gets_in(match_server: RunningServer) -> None:
    """RATE_LIMITED is not a refusal of the bot: the SDK reconnects with backoff, and is let in once the
    address's failures have drained."""
    token = match_server.register("patient")
    assert ended(TestBot(match_server.address, "patient", "wrong"))[1] == bot_pb2.CLOSE_REASON_TOKEN_REFUSED
    bot = BackgroundBot(GreedyBot(), match_server.address, "patient", token, backoff_initial=0.3)
    bot.wait_connected(timeout=15)
    assert bot.error is None
    assert on_server(match_server, lambda: match_server.arena.hello_failures.refused) >= 1
    bot.stop()


def hello_from(server: RunningServer, name: str, token: str, via: str) -> bot_pb2.CloseReason | None:
    """A Hello whose call carries `x-forwarded-for: via`, as a proxy sends it: None if welcomed, else the
    reason it was refused."""
    with grpc.insecure_channel(server.address) as channel:
        hello = bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name=name, token=token))
        stub = bot_pb2_grpc.BotServiceStub(channel)
        call = stub.Connect(iter([hello]), metadata=[("x-forwarded-for", via)])
        try:
            first = next(call)
        except grpc.RpcError:
            return close_reason_of(call.trailing_metadata())
        assert first.WhichOneof("kind") == "welcome"
        call.cancel()
        return None


@pytest.mark.settings(auth_failure_burst=2, auth_failures_per_s=0.1, auth_refusal_hold_ms=10,
                      trusted_proxies=("127.0.0.1",))  # fmt: skip
def test_behind_a_trusted_proxy_the_client_it_forwards_for_counts(match_server: RunningServer) -> None:
    token = match_server.register("proxied")
    guesser, bot = "192.0.2.1, 203.0.113.9", "198.51.100.7"  # the proxy's own entry last
    wrong, limited = bot_pb2.CLOSE_REASON_TOKEN_REFUSED, bot_pb2.CLOSE_REASON_RATE_LIMITED
    guesses = [hello_from(match_server, "proxied", "wrong", guesser) for _ in range(3)]
    assert guesses == [wrong, wrong, limited]
    assert hello_from(match_server, "proxied", token, bot) is None  # through the same proxy, let in
    refused = control_call(match_server.address, "Bearer wrong")  # no x-forwarded-for: the proxy itself
    assert isinstance(refused, grpc.RpcError) and refused.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.settings(auth_failure_burst=2, auth_failures_per_s=0.1, auth_refusal_hold_ms=10)
def test_an_untrusted_peer_cannot_dodge_the_limit_with_x_forwarded_for(match_server: RunningServer) -> None:
    reasons = [hello_from(match_server, "nobody", "wrong", f"203.0.113.{i}") for i in range(3)]
    assert reasons[-1] == bot_pb2.CLOSE_REASON_RATE_LIMITED
