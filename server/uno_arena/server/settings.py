"""Match server settings: limits and deadlines, typed, with documented defaults."""

from __future__ import annotations

from dataclasses import dataclass

from uno_arena.records.spec import Deadlines

DEADLINES = Deadlines()  # the one place the per-match defaults live; a PlayMatch request may set its own


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Everything the server enforces; a PlayMatch request may override the per-match ones."""

    decision_timeout_ms: int = DEADLINES.decision_ms  # time a bot has to answer one decision
    max_message_bytes: int = 4 * 1024 * 1024  # larger messages end the bot's stream
    max_matches_per_bot: int = 64  # cap on what a connection may announce
    max_strikes: int = DEADLINES.max_strikes  # faults in one match before the seat forfeits
    disconnect_grace_ms: int = (
        DEADLINES.disconnect_grace_ms
    )  # a disconnected bot forfeits if not back by then
    wait_for_bots_ms: int = DEADLINES.wait_for_bots_ms  # PlayMatch waits this long for bots to be connected
    hello_timeout_ms: int = 10_000  # a new stream must say Hello within this
    keepalive_ms: int = 2_000  # HTTP/2 pings to every bot; a dead one is noticed in ~2x this
    finished_matches_kept: int = 100  # results (with logs) kept in memory for retried PlayMatch calls
    drain_timeout_ms: int = 300_000  # on shutdown, how long running matches may take to finish
    key_prefix: str = "uno-arena"  # Redis key namespace
