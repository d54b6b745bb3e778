"""What the server tells a bot beside the game itself: the match it was seated in, a hand's result
with the match totals, a fault recorded against it.

The game's own values (cards, actions, observations, events, a match's result) are the rules core's
(`uno_arena.rules`), decoded by the one codec (`uno_arena.v1.codec`); these are the session's.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from uno_arena.rules import HandEnd, HandEnded, RulesConfig, Seat
from uno_arena.v1 import bot_pb2, codec
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import names


class FaultKind(enum.StrEnum):
    """What the server recorded against a seat (`Fault.kind`)."""

    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    INVALID = "invalid"
    DISCONNECTED = "disconnected"
    BOT_ERROR = "bot_error"


def _fault_kinds() -> dict[int, FaultKind]:
    """The protocol's FaultKind numbers -> members, checked both ways at import."""
    named = names(pb.FaultKind.DESCRIPTOR)
    if set(named.values()) != {kind.value for kind in FaultKind}:
        raise codec.ProtocolMismatch(f"the protocol's FaultKind is {sorted(named.values())}, not the SDK's")
    return {number: FaultKind(name) for number, name in named.items()}


FAULT_KINDS: dict[int, FaultKind] = _fault_kinds()


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """A match this bot was seated in: `rules` are the match's rules (house rules included)."""

    match_id: str
    seat: Seat
    bots: tuple[str, ...]
    rules: RulesConfig
    decision_timeout: float  # seconds per decision
    max_strikes: int = 3  # faults in this match that make this seat forfeit (bot errors add none by default)


@dataclass(frozen=True, slots=True)
class HandResult:
    """A hand of a match ended: how (`hand`, the rules core's `HandEnded`) and the match totals after it."""

    match_id: str
    hand: HandEnded
    totals: tuple[int, ...]

    @property
    def reason(self) -> HandEnd:
        return self.hand.reason

    @property
    def winner(self) -> Seat | None:
        return self.hand.winner

    @property
    def points(self) -> tuple[int, ...]:
        """What each seat scored from this hand."""
        return self.hand.points


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault the server recorded against this bot in one match.

    `applied` is the id of the action the server applied instead (see `Observation.legal`),
    `strikes` this seat's faults in the match so far (a `BOT_ERROR` adds none by default), and
    `forfeited` is True when this fault made the seat forfeit the match. `action_index` and
    `event_index` place it in the match (its action among the match's actions, the events logged
    before it); None from a server older than them, and for replies to stray messages.
    """

    match_id: str
    seat: Seat
    kind: FaultKind
    detail: str
    applied: int | None
    strikes: int
    forfeited: bool
    action_index: int | None = None
    event_index: int | None = None


def match_info_from(message: bot_pb2.MatchStarted) -> MatchInfo:
    """Raises `ConfigError` if the server's rules are not valid rules (a broken server)."""
    rules = codec.rules_from(message.rules, len(message.bots))
    return MatchInfo(message.match_id, int(message.seat), tuple(message.bots), rules,
                     message.decision_timeout_ms / 1000, message.max_strikes or 3)  # fmt: skip


def hand_result_from(message: bot_pb2.HandResult) -> HandResult:
    return HandResult(message.match_id, codec.hand_ended_from(message.hand), tuple(message.totals))


def fault_from(message: pb.Fault) -> Fault:
    applied = int(message.applied.id) if message.HasField("applied") else None
    action_index = int(message.action_index) if message.HasField("action_index") else None
    event_index = int(message.event_index) if message.HasField("event_index") else None
    return Fault(message.match_id, int(message.seat), FAULT_KINDS.get(message.kind, FaultKind.INVALID),
                 message.detail, applied, int(message.strikes), message.forfeited, action_index,
                 event_index)  # fmt: skip
