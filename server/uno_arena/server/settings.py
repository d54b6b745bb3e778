"""Match server settings: limits and deadlines, typed, with documented defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Everything the server enforces; a PlayMatch request may override the per-match ones."""

    decision_timeout_ms: int = 1000  # time a bot has to answer one decision
    max_message_bytes: int = 4 * 1024 * 1024  # larger messages end the bot's stream
    max_matches_per_bot: int = 64  # cap on what a connection may announce
    max_strikes: int = 3  # faults in one match before the seat forfeits
    disconnect_grace_ms: int = 10_000  # a disconnected bot forfeits if not back by then
    wait_for_bots_ms: int = 30_000  # PlayMatch waits this long for bots to be connected and free
    hello_timeout_ms: int = 10_000  # a new stream must say Hello within this
    keepalive_ms: int = 2_000  # HTTP/2 pings to every bot; a dead one is noticed in ~2x this
    finished_matches_kept: int = 100  # results (with logs) kept in memory for retried PlayMatch calls
    drain_timeout_ms: int = 300_000  # on shutdown, how long running matches may take to finish
    key_prefix: str = "uno-arena"  # Redis key namespace
