"""The uno-arena SDK: write a `Bot`, run it with `run_bot` or `uno-arena bot run`.

from uno_arena.sdk import Bot, Observation, Action

class MyBot(Bot):
    def decide(self, observation: Observation) -> Action:
        plays = observation.legal.plays()
        return plays[0] if plays else observation.legal.safe_default()
"""

from uno_arena.sdk.actions import Action, ActionKind, LegalActions
from uno_arena.sdk.bot import Bot
from uno_arena.sdk.cards import Card, Colour, Kind
from uno_arena.sdk.client import BotClient, BotRefused, BotReplaced, ClientSettings, CloseReason, run_bot
from uno_arena.sdk.events import (
    DrawReason,
    Event,
    EventKind,
    Fault,
    FaultKind,
    HandEnd,
    HandResult,
    MatchEnd,
    MatchInfo,
    MatchResult,
    ShuffleReason,
)
from uno_arena.sdk.observation import Observation, Phase

__all__ = [
    "Action",
    "ActionKind",
    "Bot",
    "BotClient",
    "BotRefused",
    "BotReplaced",
    "Card",
    "ClientSettings",
    "CloseReason",
    "Colour",
    "DrawReason",
    "Event",
    "EventKind",
    "Fault",
    "FaultKind",
    "HandEnd",
    "HandResult",
    "Kind",
    "LegalActions",
    "MatchInfo",
    "MatchEnd",
    "MatchResult",
    "Observation",
    "Phase",
    "ShuffleReason",
    "run_bot",
]
