"""Replays: the same config, seed and actions rebuild the same hand or match, event for event."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from uno_arena.rules.action import Action
from uno_arena.rules.card import Card
from uno_arena.rules.config import RulesConfig
from uno_arena.rules.hand import Hand, new_hand
from uno_arena.rules.match import Match, new_match, play


def replay_match(config: RulesConfig, seed: int, actions: Iterable[Action]) -> Match:
    """Rebuild a match; each action is validated, so a tampered log raises."""
    match = new_match(config, random.Random(seed))
    for action in actions:
        play(match, action)
    return match


def replay_hand(
    config: RulesConfig,
    seed: int,
    actions: Iterable[Action],
    *,
    dealer: int | None = None,
    deck: Sequence[Card] | None = None,
) -> Hand:
    """Rebuild a lone hand, dealt as `new_hand` deals it with the same arguments."""
    hand = new_hand(config, random.Random(seed), dealer=dealer, deck=deck)
    for action in actions:
        play(hand, action)
    return hand
