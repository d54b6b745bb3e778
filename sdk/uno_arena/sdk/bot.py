"""The `Bot` base class: implement `decide`; override the hooks you need."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

from uno_arena.rules import Action, Event, MatchResult, Observation
from uno_arena.sdk.messages import Fault, HandResult, MatchInfo


class Bot:
    """A UNO bot. One instance plays every match of its connection, possibly at once.

    `decide` may be a plain function (run in a worker thread, so a slow bot
    never blocks the connection) or a coroutine. If it raises, returns
    something illegal or misses the deadline, the SDK logs one line and
    answers the safe default (draw, keep, accept, pass) so the bot stays in
    the match; it reports a raise or an illegal return to the server, which
    records a BOT_ERROR fault (no strike by default; see `on_fault`).
    """

    def decide(self, observation: Observation) -> Action | Awaitable[Action]:
        """Return one of `observation.legal`."""
        raise NotImplementedError("a Bot must implement decide(observation)")

    def on_match_start(self, match: MatchInfo) -> None:
        """A match begins (or resumes after a reconnect)."""

    def on_events(self, match_id: str, events: Sequence[Event]) -> None:
        """Events of a match, in order, as this seat may see them (before each decision)."""

    def on_hand_end(self, result: HandResult) -> None:
        """A hand of a match ended."""

    def on_match_end(self, result: MatchResult) -> None:
        """A match ended."""

    def on_fault(self, fault: Fault) -> None:
        """The server recorded a fault against this bot (a timeout, an illegal answer, an error of
        `decide` the SDK reported ...): `fault.kind`, what the server applied instead, strikes so far."""
