"""Positions and checks shared by the house-rule tests (RULINGS 26-29)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from uno_arena.rules import (
    Card,
    Event,
    Hand,
    Match,
    Phase,
    Rank,
    RulesConfig,
    arranged_hand,
    observe,
    parse_cards,
    public,
    seen_by,
    standard_deck,
)

State = Hand | Match


def arrange(
    *held: str,
    top: str,
    to_move: int = 1,
    under: str = "",
    draw: str = "",
    direction: int = 1,
    **options: Any,
) -> Hand:
    """Seat `to_move` to play (phase turn) on `top`, seat i holding `held[i]`.

    `under` are discards below the top card (bottom first), `draw` the next cards of the
    draw pile (top first); every other card follows in the draw pile in face order.
    Hand sizes may differ, unlike `table.deal`.
    """
    cards = [parse_cards(h) for h in held]
    discards = [*parse_cards(under), *parse_cards(top)]
    first = parse_cards(draw)
    rest = Counter(standard_deck())
    rest.subtract([*(c for h in cards for c in h), *discards, *first])
    config = RulesConfig(players=len(held), **options)
    top_card = discards[-1]
    return arranged_hand(
        config,
        cards=cards,
        discards=discards,
        draw_pile=[*first, *sorted(rest.elements())],
        colour=top_card.colour,
        phase=Phase.TURN,
        to_move=to_move,
        direction=direction,
    )


def held(hand: Hand) -> list[list[str]]:
    """Each seat's cards by name, sorted: to compare whole tables at a glance."""
    return [sorted(str(c) for c in cards) for cards in hand.cards]


def what_others_see(state: State, seat: int, since: int) -> list[object]:
    """Every seat's but `seat`'s observation and its view of the events since `since`, and the
    spectators' view of those events."""
    hand = state.hand if isinstance(state, Match) else state
    events: list[Event] = hand.events if isinstance(state, Hand) else state.events
    seen: list[object] = []
    for other in range(hand.players):
        if other != seat:
            seen += [observe(state, other), [seen_by(e, other) for e in events[since:]]]
    return [*seen, [public(e) for e in events[since:]]]


def identical_to(card: Card) -> Callable[[Card], bool]:
    return lambda c: c is card


def of_rank(rank: Rank) -> Callable[[Card], bool]:
    return lambda c: c.rank is rank


UNTOUCHED = 20
"""Top cards of the draw pile `flip_holding` leaves alone: the next draws (a penalty of up to
16, a catch) must hand the other seats the same cards in both versions of a hand."""


def flip_holding(hand: Hand, seat: int, wanted: Callable[[Card], bool], rng: random.Random) -> bool:
    """Change `seat`'s cards, card for card with the draw pile, so that it holds a card that is
    `wanted` if it held none, and none if it held some. False (and unchanged) if the draw pile
    lacks the cards to do it. Only hidden cards move: no other seat can tell the difference."""
    cards, pile = hand.cards[seat], hand.draw_pile[: max(0, len(hand.draw_pile) - UNTOUCHED)]
    mine = [i for i, c in enumerate(cards) if wanted(c)]
    if mine:
        spare = [j for j, c in enumerate(pile) if not wanted(c)]
        if len(spare) < len(mine):
            return False
        for i, j in zip(mine, rng.sample(spare, len(mine)), strict=True):
            cards[i], hand.draw_pile[j] = pile[j], cards[i]
        return True
    offered = [j for j, c in enumerate(pile) if wanted(c)]
    if not offered:
        return False
    i, j = rng.randrange(len(cards)), rng.choice(offered)
    cards[i], hand.draw_pile[j] = pile[j], cards[i]
    return True
