"""The uno-arena SDK: write a `Bot`, run it with `run_bot` or `uno-arena bot run`.

from sdk import Bot, Observation, Action

class MyBot(Bot):
    def decide(self, observation: Observation) -> Action:
        plays = observation.legal.plays()
        return plays[0] if plays else observation.legal.safe_default()
"""

from sdk.actions import Action, ActionKind, LegalActions
from sdk.bot import Bot
from sdk.cards import Card, Colour, Kind
from sdk.client import BotClient, BotRefused, ClientSettings, run_bot
from sdk.events import Event, HandResult, MatchInfo, MatchResult
from sdk.observation import Observation

__all__ = [
    "Action",
    "ActionKind",
    "Bot",
    "BotClient",
    "BotRefused",
    "Card",
    "ClientSettings",
    "Colour",
    "Event",
    "HandResult",
    "Kind",
    "LegalActions",
    "MatchInfo",
    "MatchResult",
    "Observation",
    "run_bot",
]
