"""Choosing the dealer by drawing cards (RULINGS 3)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from uno_arena.rules.card import Card, standard_deck
from uno_arena.rules.event import DealerChosen, DealerDrew, Event, Seat


def draw_for_dealer(
    players: int,
    rng: random.Random,
    events: list[Event],
    order: Sequence[Card] | None = None,
) -> Seat:
    """Each contender draws one card; the highest number deals, ties draw again.

    Action and wild cards count zero. Cards are drawn face up (so logged) at
    random from the deck, or from `order` (top first) to reproduce a given
    draw; they all go back into the deck, which the deal reshuffles.
    """
    pile = list(reversed(order)) if order is not None else standard_deck()
    contenders = list(range(players))
    round_ = 0
    while len(contenders) > 1:
        if len(pile) < len(contenders):
            pile = standard_deck()
        drawn = list(zip(contenders, _draw(pile, len(contenders), rng, order is None), strict=True))
        events.extend(DealerDrew(seat, card, round_) for seat, card in drawn)
        best = max(card.rank.dealer_value for _, card in drawn)
        contenders = [seat for seat, card in drawn if card.rank.dealer_value == best]
        round_ += 1
    events.append(DealerChosen(contenders[0]))
    return contenders[0]


def _draw(pile: list[Card], count: int, rng: random.Random, at_random: bool) -> list[Card]:
    """Take `count` cards off `pile`: a uniform random draw (as from a shuffled deck) or its top."""
    if not at_random:
        return [pile.pop() for _ in range(count)]
    cards = rng.sample(pile, count)
    for card in cards:
        pile.remove(card)
    return cards
