"""RULINGS 29: what a seat may see."""

from dataclasses import fields

from uno_arena.rules import DRAW, Colour, Phase, observe, parse_card, play, play_card
from uno_arena.rules.event import Dealt, Drew, seen_by

from .table import deal, names


def test_a_seat_sees_its_own_cards_and_only_counts_of_others() -> None:
    hand = deal("red_1 red_2", "blue_1 blue_2", "green_1 green_2", first="red_7", dealer=2)
    seen = observe(hand, 0)
    assert names(seen.cards) == ["red_1", "red_2"]
    assert seen.hand_sizes == (2, 2, 2)
    assert str(seen.top) == "red_7" and seen.colour is Colour.RED
    assert seen.is_my_move and seen.legal_actions
    other = observe(hand, 1)
    assert not other.is_my_move and other.legal_actions == ()


def test_no_field_holds_the_draw_pile_the_rng_or_other_hands() -> None:
    allowed = {
        "seat", "players", "phase", "to_move", "turn_seat", "dealer", "direction", "cards", "top",
        "colour", "discards", "hand_sizes", "draw_pile_size", "drawn", "shown", "turn", "scores",
        "target_score", "hand_number", "legal_actions",
    }  # fmt: skip
    assert {f.name for f in fields(observe(deal("red_1", "red_2", first="red_3"), 0))} == allowed


def test_discard_history_since_the_last_reshuffle() -> None:
    hand = deal("red_1 red_2", "red_3 red_4", first="red_7", dealer=1)
    play(hand, play_card(parse_card("red_1"), uno=True))
    play(hand, play_card(parse_card("red_3"), uno=True))
    assert names(observe(hand, 1).discards) == ["red_7", "red_1", "red_3"]


def test_drawn_card_is_visible_only_to_the_drawer() -> None:
    hand = deal("red_1 red_2", "blue_1 blue_2", first="red_7", dealer=1, draw="red_9")
    play(hand, DRAW)
    assert hand.phase is Phase.DRAWN
    assert observe(hand, 0).drawn is parse_card("red_9")
    assert observe(hand, 1).drawn is None
    drew = [e for e in hand.events if isinstance(e, Drew)][-1]
    assert seen_by(drew, 0).cards == (parse_card("red_9"),)
    assert seen_by(drew, 1).cards is None and seen_by(drew, 1).count == 1


def test_deals_are_private() -> None:
    hand = deal("red_1 red_2", "blue_1 blue_2", first="red_7")
    dealt = {e.seat: e for e in hand.events if isinstance(e, Dealt)}
    assert seen_by(dealt[1], 0).cards is None
    assert seen_by(dealt[0], 0).cards == dealt[0].cards
