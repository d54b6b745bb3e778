"""The uno-arena SDK: write a `Bot`, run it with `run_bot` or `uno-arena bot run`.

from uno_arena.sdk import Bot, Observation, Action

class MyBot(Bot):
    def decide(self, observation: Observation) -> Action:
        plays = observation.legal.plays()
        return plays[0] if plays else observation.legal.safe_default()

The game's values are the rules core's (`uno_arena.rules`), re-exported here: a connected bot, the
local arena and the test kit all hand a bot the same `Observation`, `Action`, `Card` and events.
What the SDK adds is what a remote bot needs: `Bot`, the connection loop, the arena, the test kit, and
`PolicyBot`, which plays a policy trained on the reinforcement-learning environment (it needs numpy).
"""

from uno_arena.rules import (
    Action,
    ActionKind,
    Card,
    Colour,
    DrawReason,
    Event,
    EventKind,
    HandEnd,
    HandEnded,
    Kind,
    LegalActions,
    MatchEnd,
    MatchResult,
    Observation,
    Phase,
    Rank,
    RulesConfig,
    ShuffleReason,
    parse_card,
    parse_cards,
)
from uno_arena.rules.event import (
    Accepted,
    CatchPassed,
    Caught,
    Challenged,
    ColourChosen,
    DealerChosen,
    DealerDrew,
    Dealt,
    DirectionChanged,
    Drew,
    FirstCard,
    HandShown,
    HandsPassed,
    HandStarted,
    Kept,
    MatchEnded,
    Played,
    Received,
    Reshuffled,
    Shuffled,
    Skipped,
    Swapped,
)
from uno_arena.sdk.bot import Bot
from uno_arena.sdk.client import BotClient, BotRefused, BotReplaced, ClientSettings, CloseReason
from uno_arena.sdk.messages import Fault, FaultKind, HandResult, MatchInfo
from uno_arena.sdk.policy import PolicyBot
from uno_arena.sdk.pool import PoolClient, run_bot
from uno_arena.v1.channels import ClientTLS, PlaintextRefused, TLSError
from uno_arena.v1.codec import ProtocolMismatch

__all__ = [
    "Accepted",
    "Action",
    "ActionKind",
    "Bot",
    "BotClient",
    "BotRefused",
    "BotReplaced",
    "Card",
    "CatchPassed",
    "Caught",
    "Challenged",
    "ClientSettings",
    "ClientTLS",
    "CloseReason",
    "Colour",
    "ColourChosen",
    "DealerChosen",
    "DealerDrew",
    "Dealt",
    "DirectionChanged",
    "DrawReason",
    "Drew",
    "Event",
    "EventKind",
    "Fault",
    "FaultKind",
    "FirstCard",
    "HandEnd",
    "HandEnded",
    "HandResult",
    "HandShown",
    "HandStarted",
    "HandsPassed",
    "Kept",
    "Kind",
    "LegalActions",
    "MatchEnd",
    "MatchEnded",
    "MatchInfo",
    "MatchResult",
    "Observation",
    "Phase",
    "PlaintextRefused",
    "PoolClient",
    "Played",
    "PolicyBot",
    "ProtocolMismatch",
    "Rank",
    "Received",
    "Reshuffled",
    "RulesConfig",
    "ShuffleReason",
    "Shuffled",
    "Skipped",
    "Swapped",
    "TLSError",
    "parse_card",
    "parse_cards",
    "run_bot",
]
