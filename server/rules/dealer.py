"""Choosing the dealer by drawing cards (RULINGS 3)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from server.rules.card import Card, standard_deck
from server.rules.event import DealerChosen, DealerDrew, Event, Seat, Shuffled, ShuffleReason


def draw_for_dealer(
    players: int,
    rng: random.Random,
    events: list[Event],
    order: Sequence[Card] | None = None,
) -> Seat:
    """Each contender draws one card; the highest number deals, ties draw again.

    Action and wild cards count zero. Cards are drawn face up (so logged) from a
    shuffled deck, or from `order` (top first) to reproduce a given draw; they
    all go back into the deck, which the deal reshuffles.
    """
    pile = _pile(rng, events, order)
    contenders = list(range(players))
    round_ = 0
    while len(contenders) > 1:
        if len(pile) < len(contenders):
            pile = _pile(rng, events, None)
        drawn = [(seat, pile.pop()) for seat in contenders]
        events.extend(DealerDrew(seat, card, round_) for seat, card in drawn)
        best = max(card.rank.dealer_value for _, card in drawn)
        contenders = [seat for seat, card in drawn if card.rank.dealer_value == best]
        round_ += 1
    events.append(DealerChosen(contenders[0]))
    return contenders[0]


def _pile(rng: random.Random, events: list[Event], order: Sequence[Card] | None) -> list[Card]:
    """A draw pile with its top at the end."""
    if order is not None:
        return list(reversed(order))
    pile = standard_deck()
    rng.shuffle(pile)
    events.append(Shuffled(ShuffleReason.DEALER_DRAW, len(pile)))
    return pile
