"""RULINGS 16: the draw pile runs out."""

import random
from collections import Counter

from uno_arena.rules import (
    DRAW,
    KEEP,
    Colour,
    Hand,
    Phase,
    RulesConfig,
    new_hand,
    parse_card,
    parse_cards,
    play,
    play_card,
    stacked_deck,
    standard_deck,
)
from uno_arena.rules.event import Drew, Reshuffled

from .table import events_of


def short_pile_hand() -> Hand:
    """Two players holding 50 cards each, so only 7 cards are left to draw."""
    special = [parse_cards("wild blue_1"), parse_cards("red_1 red_2")]
    first = parse_card("red_7")
    rest = Counter(standard_deck())
    rest.subtract([first, *special[0], *special[1]])
    filler = sorted(rest.elements())
    hands = [special[0] + filler[:48], special[1] + filler[48:96]]
    deck = stacked_deck(1, hands, first)
    return new_hand(RulesConfig(players=2, hand_size=50), random.Random(3), dealer=1, deck=deck)


def test_discards_under_the_top_card_become_the_draw_pile_and_keep_the_named_colour() -> None:
    hand = short_pile_hand()
    play(hand, play_card(parse_card("wild"), Colour.GREEN))  # seat 0 plays first (dealer 1)
    assert hand.to_move == 1
    draw_round(hand, 7)  # empty the draw pile
    assert not hand.draw_pile
    play(hand, DRAW)
    reshuffle = events_of(hand, Reshuffled)
    assert [e.cards for e in reshuffle] == [1]  # the red 7 under the Wild
    assert hand.discards == [parse_card("wild")]
    assert hand.colour is Colour.GREEN
    assert hand.card_count() == 108


def draw_round(hand: Hand, times: int) -> None:
    for _ in range(times):
        play(hand, DRAW)
        if hand.phase is Phase.DRAWN:
            play(hand, KEEP)


def test_nothing_left_to_draw_the_player_draws_nothing_and_play_goes_on() -> None:
    hand = short_pile_hand()
    draw_round(hand, 7)  # seats 0,1,0,1,0,1,0: the draw pile is empty
    play(hand, play_card(parse_card("red_1")))  # seat 1
    draw_round(hand, 1)  # seat 0: the red 7 is reshuffled and drawn
    assert not hand.draw_pile and len(hand.discards) == 1
    play(hand, DRAW)  # seat 1: nothing left anywhere
    assert events_of(hand, Drew)[-1].seat == 1
    assert events_of(hand, Drew)[-1].count == 0
    assert hand.result is None
    assert hand.to_move == 0
    assert hand.card_count() == 108
