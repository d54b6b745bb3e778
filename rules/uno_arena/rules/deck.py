"""Explicit deck orders: build the 108-card order that deals given hands.

For tests, puzzles and reproducing a reported game: say what each seat holds,
the first card and the next cards of the draw pile; the rest of the deck
follows in face order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from uno_arena.rules.card import Card, standard_deck
from uno_arena.rules.hand import DeckError


def stacked_deck(
    dealer: int,
    hands: Sequence[Sequence[Card]],
    first: Card,
    draw: Sequence[Card] = (),
) -> list[Card]:
    """The deck order (top first) that deals `hands[seat]` to each seat, then turns up `first`.

    All hands must be the same size (the configured hand size); `draw` are the
    next cards of the draw pile, top first.
    """
    players = len(hands)
    size = len(hands[0])
    if any(len(h) != size for h in hands):
        raise DeckError("every hand must hold the same number of cards")
    order = [hands[(dealer + offset) % players][i] for i in range(size) for offset in range(1, players + 1)]
    order += [first, *draw]
    remaining = Counter(standard_deck())
    remaining.subtract(order)
    too_many = sorted(card for card, n in remaining.items() if n < 0)
    if too_many:
        raise DeckError(f"more copies than the deck holds: {', '.join(map(str, too_many))}")
    return order + sorted(remaining.elements())
