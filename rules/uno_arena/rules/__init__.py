"""The UNO rules core: pure, deterministic, standard library only.

`(config, seed, actions)` replays a hand or a match exactly. Entry points:
`new_hand` / `new_match` to start, `legal_actions` (sorted, complete), `apply`
(trusted, fast) and `play` (validating), `observe` (RULINGS 29), `run_match`.
`BUILD` says whether this process runs the compiled build or the interpreted one.
"""

from uno_arena.rules import build  # first: it decides whether the modules below load compiled
from uno_arena.rules.action import (
    ACCEPT,
    ACTIONS,
    CATCH,
    CHALLENGE,
    DONE,
    DRAW,
    KEEP,
    PASS,
    Action,
    ActionKind,
    InvalidActionError,
    action_from_id,
    choose_colour,
    swap,
)
from uno_arena.rules.action import play as play_card
from uno_arena.rules.card import (
    COLOURS,
    DECK_SIZE,
    FACES,
    Card,
    Colour,
    Kind,
    Rank,
    card,
    parse_card,
    parse_cards,
    standard_deck,
)
from uno_arena.rules.choices import LegalActions, safe_default
from uno_arena.rules.config import (
    ConfigError,
    DealerRule,
    FirstWildChooser,
    FirstWildDrawFour,
    RulesConfig,
    Scoring,
)
from uno_arena.rules.deck import stacked_deck
from uno_arena.rules.event import (
    DrawReason,
    Event,
    EventKind,
    HandEnd,
    HandEnded,
    MatchEnd,
    Seat,
    ShuffleReason,
    public,
    seen_by,
)
from uno_arena.rules.hand import DeckError, Hand, Phase, new_hand
from uno_arena.rules.match import Match, MatchResult, apply, legal_actions, new_match, observe, play, to_move
from uno_arena.rules.observation import Observation
from uno_arena.rules.position import PositionError, arranged_hand
from uno_arena.rules.replay import replay_hand, replay_match
from uno_arena.rules.runner import Policy, eager_random_policy, random_policy, run_match
from uno_arena.rules.validate import (
    CannotStackError,
    CardDoesNotMatchError,
    CardNotHeldError,
    HandOverError,
    IllegalActionError,
    NotDrawnCardError,
    NotIdenticalError,
    NotSameRankError,
    NotYourTurnError,
    SwapSeatError,
    WrongDecisionError,
    canonical,
)

BUILD = build.BUILD

__all__ = [
    "Kind",
    "LegalActions",
    "safe_default",
    "DrawReason",
    "EventKind",
    "ShuffleReason",
    "ACCEPT",
    "ACTIONS",
    "BUILD",
    "CATCH",
    "CHALLENGE",
    "COLOURS",
    "DECK_SIZE",
    "DONE",
    "DRAW",
    "FACES",
    "KEEP",
    "PASS",
    "Action",
    "ActionKind",
    "CannotStackError",
    "Card",
    "CardDoesNotMatchError",
    "CardNotHeldError",
    "Colour",
    "ConfigError",
    "DealerRule",
    "DeckError",
    "Event",
    "FirstWildChooser",
    "FirstWildDrawFour",
    "Hand",
    "HandEnd",
    "HandEnded",
    "HandOverError",
    "IllegalActionError",
    "InvalidActionError",
    "Match",
    "MatchEnd",
    "MatchResult",
    "NotDrawnCardError",
    "NotIdenticalError",
    "NotSameRankError",
    "NotYourTurnError",
    "Observation",
    "Phase",
    "Policy",
    "PositionError",
    "Rank",
    "RulesConfig",
    "Scoring",
    "Seat",
    "SwapSeatError",
    "WrongDecisionError",
    "action_from_id",
    "apply",
    "arranged_hand",
    "canonical",
    "card",
    "choose_colour",
    "legal_actions",
    "new_hand",
    "new_match",
    "observe",
    "parse_card",
    "parse_cards",
    "play",
    "play_card",
    "public",
    "eager_random_policy",
    "random_policy",
    "replay_hand",
    "replay_match",
    "run_match",
    "seen_by",
    "stacked_deck",
    "swap",
    "standard_deck",
    "to_move",
]
