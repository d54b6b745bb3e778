"""The deadline margin follows the measured round trip (pure logic: `RoundTrip` on given samples)."""

from __future__ import annotations

import math

import pytest

from uno_arena.sdk.round_trip import RoundTrip


def test_before_any_sample_the_margin_is_the_initial_one() -> None:
    estimate = RoundTrip()
    assert estimate.bound is None
    assert estimate.margin(1.0) == pytest.approx(0.15)
    assert RoundTrip(initial=0.3).margin(1.0) == pytest.approx(0.3)


def test_the_first_sample_sets_srtt_and_half_of_it_as_deviation() -> None:
    """RFC 6298 (2.2): SRTT = R, RTTVAR = R / 2; so the bound is 3 R."""
    estimate = RoundTrip()
    estimate.observe(0.2)
    assert (estimate.srtt, estimate.rttvar, estimate.samples) == (0.2, 0.1, 1)
    assert estimate.bound == pytest.approx(0.6)
    assert estimate.margin(1.0) == pytest.approx(0.6 + 0.05)


def test_later_samples_are_smoothed_as_rfc_6298_says() -> None:
    """RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R."""
    estimate = RoundTrip()
    estimate.observe(0.2)
    estimate.observe(0.4)
    assert estimate.rttvar == pytest.approx(0.75 * 0.1 + 0.25 * 0.2)
    assert estimate.srtt == pytest.approx(0.875 * 0.2 + 0.125 * 0.4)


def test_a_fast_link_gets_the_floor() -> None:
    """On loopback the round trip is well under a millisecond: the margin is the floor, less than the
    old fixed 0.15 s, so the bot thinks longer."""
    estimate = RoundTrip()
    for _ in range(20):
        estimate.observe(0.0005)
    assert estimate.margin(1.0) == pytest.approx(0.1)


def test_a_slow_steady_link_makes_the_margin_its_round_trip_plus_slack() -> None:
    """The brief's case: 0.3 s round trips under load. The fixed 0.15 s margin let a default leave
    0.85 s after the request arrived, reaching the server after 1.15 s: a TIMEOUT each time."""
    estimate = RoundTrip()
    for _ in range(60):
        estimate.observe(0.3)
    margin = estimate.margin(1.0)
    assert margin == pytest.approx(0.35, abs=0.01)
    assert 1.0 - margin + 0.3 < 1.0  # leaves early enough to arrive within the deadline


def test_jitter_widens_the_margin() -> None:
    steady, jittery = RoundTrip(), RoundTrip()
    for index in range(40):
        steady.observe(0.2)
        jittery.observe(0.1 if index % 2 else 0.3)  # the same mean
    assert jittery.srtt == pytest.approx(steady.srtt or 0, abs=0.02)
    assert jittery.margin(2.0) > steady.margin(2.0) + 0.2


def test_the_margin_adapts_when_the_link_slows_down_and_recovers() -> None:
    estimate = RoundTrip()
    for _ in range(20):
        estimate.observe(0.001)
    fast = estimate.margin(1.0)
    for _ in range(5):
        estimate.observe(0.25)
    slowed = estimate.margin(1.0)
    assert slowed > 0.25 + fast  # a few slow samples are enough to move it past the round trip
    for _ in range(60):
        estimate.observe(0.001)
    assert estimate.margin(1.0) == pytest.approx(fast)


def test_the_margin_is_capped_at_a_share_of_the_deadline() -> None:
    """The bot keeps a quarter of its time however slow the link: a late answer is the server's TIMEOUT."""
    estimate = RoundTrip()
    estimate.observe(2.0)
    assert estimate.margin(1.0) == pytest.approx(0.75)
    assert RoundTrip().margin(0.1) == pytest.approx(0.075)  # the initial margin too
    assert RoundTrip().margin(0.0) == 0.0


def test_a_ping_still_unanswered_counts_as_a_round_trip_under_way() -> None:
    estimate = RoundTrip()
    for _ in range(20):
        estimate.observe(0.001)
    assert estimate.margin(1.0, unanswered=0.05) == pytest.approx(0.1)  # within the floor
    assert estimate.margin(1.0, unanswered=0.4) == pytest.approx(0.45)  # the link just slowed down
    assert RoundTrip().margin(1.0, unanswered=0.3) == pytest.approx(0.35)  # before the first Pong too


@pytest.mark.parametrize("sample", [-0.1, math.nan, math.inf])
def test_a_sample_that_is_not_a_duration_is_ignored(sample: float) -> None:
    estimate = RoundTrip()
    estimate.observe(sample)
    assert (estimate.srtt, estimate.samples) == (None, 0)
    assert estimate.margin(1.0) == pytest.approx(0.15)
