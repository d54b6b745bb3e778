"""Literal scenarios: deal named cards from an explicit deck order."""

from __future__ import annotations

import random
from typing import Any

from uno_arena.rules import Hand, RulesConfig, new_hand, parse_card, parse_cards, stacked_deck


def deal(
    *hands: str,
    first: str,
    draw: str = "",
    dealer: int = 0,
    seed: int = 0,
    **options: Any,
) -> Hand:
    """A hand where seat i holds `hands[i]` (card names), `first` is turned up, `draw` comes next."""
    held = [parse_cards(h) for h in hands]
    size = len(held[0])
    config = RulesConfig(players=len(hands), hand_size=size, **options)
    deck = stacked_deck(dealer, held, parse_card(first), parse_cards(draw))
    return new_hand(config, random.Random(seed), dealer=dealer, deck=deck)


def names(cards: Any) -> list[str]:
    return [str(c) for c in cards]


def events_of(hand: Hand, kind: type) -> list[Any]:
    return [e for e in hand.events if isinstance(e, kind)]
