"""The match server's Prometheus metrics: `uno-arena server --metrics HOST:PORT` serves them at /metrics
(docs/operations.md, "Metrics and health", lists each).

One `ServerMetrics` per arena, on a registry of its own rather than prometheus_client's global one: a
process may run several servers (the tests do), and each counts only its own. It counts from the start
whether or not anything serves it; the CLI serves its `registry`.

The decision path (`match_host`, `gateway`: compiled with mypyc) pays one `inc()` per decision asked and
one `observe()` per answer, about 3 us together against the 144 us or more of server CPU a decision costs
(docs/performance.md): the labelled children (a fault's kind, a refusal's reason) are resolved here, once,
never per decision, and the gauges are read only when scraped (`watch`), so keeping them costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector

from uno_arena.v1 import bot_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import name_of, names_of, number_of

# Seconds from a decision request sent to its answer read: a bot on the same machine answers in about
# half a millisecond, one across a network in tens; the deadline is seconds (5 s by default).
DECISION_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                           10.0)  # fmt: skip
# The ways a stream ends before its Hello is accepted (servicers.REFUSALS, bot.proto's CloseReason)
HELLO_REFUSALS: Final = (
    bot_pb2.CLOSE_REASON_SERVER_STOPPING,
    bot_pb2.CLOSE_REASON_NO_HELLO,
    bot_pb2.CLOSE_REASON_NOT_A_BOT_MESSAGE,
    bot_pb2.CLOSE_REASON_FIELD_TOO_LONG,
    bot_pb2.CLOSE_REASON_TOKEN_CHECK_FAILED,
    bot_pb2.CLOSE_REASON_TOKEN_REFUSED,
    bot_pb2.CLOSE_REASON_RATE_LIMITED,
)


class ServerMetrics:
    """The server's metric objects, on `registry` (a new one unless given, with the process's CPU and
    memory: `process_*`)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        if registry is None:  # a registry of its own: with the process's CPU and memory (`process_*`)
            ProcessCollector(registry=self.registry)
        registry = self.registry
        self.bots_connected = Gauge(
            "uno_arena_server_bots_connected", "Bots connected (one stream each), whether playing or idle.",
            registry=registry,
        )  # fmt: skip
        self.matches_running = Gauge(
            "uno_arena_server_matches_running", "Matches being played on this server.", registry=registry
        )
        self.matches_finished = Counter(
            "uno_arena_server_matches_finished",
            "Matches played to their end on this server, by how they ended (target_reached, forfeit, "
            "aborted ...).",
            ["end"],
            registry=registry,
        )
        self.decisions = Counter(
            "uno_arena_server_decisions",
            "Decision requests sent to bots (each is settled by an answer, a timeout or a lost connection).",
            registry=registry,
        )
        self.decision_seconds = Histogram(
            "uno_arena_server_decision_round_trip_seconds",
            "Seconds from a decision request sent to the bot's answer read, for answers within the "
            "deadline (a timeout is a fault, not an observation).",
            buckets=DECISION_BUCKETS,
            registry=registry,
        )
        faults = Counter(
            "uno_arena_server_faults",
            "Bot faults recorded in matches, by kind (the match records' fault kinds).",
            ["kind"],
            registry=registry,
        )
        # every kind, so that each series exists (at 0) from the start: rate() sees its first fault
        self.faults: dict[int, Counter] = {
            kind: faults.labels(kind=name_of(pb.FaultKind, kind)) for kind in _numbers(pb.FaultKind)
        }
        self._faults = faults
        self.outbox_cutoffs = Counter(
            "uno_arena_server_outbox_cutoffs",
            "Bots disconnected because they did not read their messages (their outbox was full).",
            registry=registry,
        )
        refused = Counter(
            "uno_arena_server_hellos_refused",
            "Bot streams refused before their Hello was accepted, by reason (bot.proto's CloseReason).",
            ["reason"],
            registry=registry,
        )
        self.hellos_refused: dict[int, Counter] = {
            why: refused.labels(reason=name_of(bot_pb2.CloseReason, why)) for why in HELLO_REFUSALS
        }
        self._refused = refused
        self._ends: dict[int, Counter] = {
            end: self.matches_finished.labels(end=name_of(pb.MatchEnd, end)) for end in _numbers(pb.MatchEnd)
        }

    def watch(self, bots_connected: Callable[[], int], matches_running: Callable[[], int]) -> None:
        """Read the gauges from these when scraped (the arena's own counts: nothing to keep up to date)."""
        self.bots_connected.set_function(bots_connected)
        self.matches_running.set_function(matches_running)

    def fault(self, kind: int) -> Counter:
        """The counter of one fault kind (a kind this version does not name: by its number)."""
        counter = self.faults.get(kind)
        if counter is None:
            counter = self.faults[kind] = self._faults.labels(kind=name_of(pb.FaultKind, kind))
        return counter

    def hello_refused(self, why: int) -> Counter:
        counter = self.hellos_refused.get(why)
        if counter is None:
            reason = name_of(bot_pb2.CloseReason, why)
            counter = self.hellos_refused[why] = self._refused.labels(reason=reason)
        return counter

    def match_finished(self, end: int) -> Counter:
        counter = self._ends.get(end)
        if counter is None:
            counter = self._ends[end] = self.matches_finished.labels(end=name_of(pb.MatchEnd, end))
        return counter


def _numbers(enum: type[int]) -> list[int]:
    """The numbers of an enum's values but the zero one (`..._UNSPECIFIED`)."""
    return [number_of(enum, name) for name in names_of(enum)]
