"""arranged_hand: a mid-hand position set up directly plays on like any dealt hand."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from uno_arena.rules import (
    ACCEPT,
    CATCH,
    CHALLENGE,
    DRAW,
    KEEP,
    PASS,
    Card,
    Colour,
    Hand,
    Phase,
    PositionError,
    RulesConfig,
    apply,
    arranged_hand,
    choose_colour,
    legal_actions,
    parse_cards,
    play_card,
    standard_deck,
)
from uno_arena.rules.event import Caught, Challenged, Drew


def arrange(hands: list[str], discards: str, **state: object) -> Hand:
    """Seats hold `hands`, `discards` bottom first; every other card is in the draw pile."""
    held = [parse_cards(h) for h in hands]
    under = parse_cards(discards)
    rest = Counter(standard_deck())
    rest.subtract([*(c for h in held for c in h), *under])
    pile = sorted(rest.elements())
    config = RulesConfig(players=len(hands))
    return arranged_hand(config, cards=held, discards=under, draw_pile=pile, **state)  # type: ignore[arg-type]


def test_a_turn_offers_what_plays_and_a_draw() -> None:
    hand = arrange(["red_3 blue_4 wild", "green_1 green_2"], "red_7", colour=Colour.RED, phase=Phase.TURN,
                   to_move=0)  # fmt: skip
    legal = legal_actions(hand)
    assert [str(a) for a in legal if a.kind == "play" and a.card is not None and not a.card.is_wild] == [
        "play red_3"
    ]
    assert DRAW in legal and len(legal) == 1 + 4 + 1
    assert hand.card_count() == 108
    apply(hand, play_card(parse_cards("red_3")[0]))
    assert (hand.to_move, hand.phase) == (1, Phase.TURN)


def test_a_drawn_card_is_played_or_kept() -> None:
    hand = arrange(["red_3 red_9", "green_1"], "red_7", colour=Colour.RED, phase=Phase.DRAWN, to_move=0,
                   drawn=parse_cards("red_9")[0])  # fmt: skip
    assert [str(a) for a in legal_actions(hand)] == ["play red_9", "play red_9 uno", "keep"]
    apply(hand, KEEP)
    assert hand.to_move == 1


def test_a_catch_window_catches_the_seat_that_did_not_call_uno() -> None:
    hand = arrange(["red_3 red_5", "blue_2", "green_4 green_6"], "red_7 blue_7", colour=Colour.BLUE,
                   phase=Phase.CATCH, to_move=2, turn_seat=1)  # fmt: skip
    assert legal_actions(hand) == [CATCH, PASS]
    apply(hand, CATCH)
    assert [e for e in hand.events if isinstance(e, Caught)] == [Caught(2, 1)]
    assert len(hand.cards[1]) == 3 and (hand.to_move, hand.phase) == (2, Phase.TURN)


def test_a_pass_asks_the_next_seat_in_turn() -> None:
    hand = arrange(["red_3", "blue_2", "green_4", "yellow_1"], "blue_7", colour=Colour.BLUE,
                   phase=Phase.CATCH, to_move=2, turn_seat=1)  # fmt: skip
    apply(hand, PASS)
    assert (hand.to_move, hand.phase) == (3, Phase.CATCH)
    apply(hand, PASS)
    assert (hand.to_move, hand.phase) == (0, Phase.CATCH)
    apply(hand, PASS)
    assert (hand.to_move, hand.phase) == (2, Phase.TURN)  # blue_7 takes effect: seat 2 plays next


def test_a_challenge_of_a_guilty_wild_draw_four() -> None:
    hand = arrange(["red_3 red_4", "blue_2 green_5"], "red_7 wild_draw_four", colour=Colour.GREEN,
                   phase=Phase.CHALLENGE, to_move=0, turn_seat=1, guilty=True)  # fmt: skip
    assert legal_actions(hand) == [CHALLENGE, ACCEPT]
    apply(hand, CHALLENGE)
    assert Challenged(0, 1, True) in hand.events
    assert [(e.seat, e.count) for e in hand.events if isinstance(e, Drew)] == [(1, 4)]


def test_a_first_wild_waits_for_the_dealer_to_name_its_colour() -> None:
    hand = arrange(["red_3", "blue_2", "green_5"], "wild", colour=None, phase=Phase.CHOOSE_COLOUR, to_move=1,
                   dealer=1)  # fmt: skip
    assert legal_actions(hand) == [choose_colour(c) for c in Colour]
    apply(hand, choose_colour(Colour.GREEN))
    assert (hand.colour, hand.to_move) == (Colour.GREEN, 2)


def at(
    phase: Phase, colour: Colour | None = Colour.RED, to_move: int = 0, **more: object
) -> dict[str, object]:
    return {"phase": phase, "colour": colour, "to_move": to_move, **more}


@pytest.mark.parametrize(
    ("hands", "discards", "state", "message"),
    [
        (["red_3", "blue_2"], "red_7", at(Phase.TURN, Colour.BLUE), "the colour to match is the top card's"),
        (["red_3", "blue_2"], "wild", at(Phase.TURN, None), "name the colour"),
        (["red_3", "blue_2 blue_3"], "red_7", at(Phase.CATCH, turn_seat=1), "holds one card, not 2"),
        (["red_3", "blue_2"], "red_7", at(Phase.CHALLENGE, turn_seat=1), "must be a Wild Draw Four"),
        (["red_3", "blue_2"], "wild", at(Phase.CHOOSE_COLOUR, None, dealer=1), "the dealer (seat 1) names"),
        (["red_3", "blue_2"], "red_7", at(Phase.DRAWN, drawn=parse_cards("blue_2")[0]), "held by the seat"),
        (["red_3", ""], "red_7", at(Phase.TURN), "seat 1 holds no card"),
        (["red_3", "blue_2"], "red_7", at(Phase.OVER), "is over"),
        (["red_3", "blue_2"], "red_7", at(Phase.TURN, to_move=5), "to_move 5 is not a seat of 2"),
    ],
)
def test_positions_the_rules_cannot_reach_are_refused(
    hands: list[str], discards: str, state: dict[str, object], message: str
) -> None:
    with pytest.raises(PositionError, match=re.escape(message)):
        arrange(hands, discards, **state)


def test_the_cards_must_be_the_deck() -> None:
    config = RulesConfig(players=2)
    red_0 = parse_cards("red_0")[0]
    deck = standard_deck()
    with pytest.raises(PositionError, match="more copies than the deck holds: red_0"):
        arranged_hand(config, cards=[[red_0], [red_0]], discards=deck[1:2], draw_pile=deck[2:],
                      colour=Colour.RED, phase=Phase.TURN, to_move=0)  # fmt: skip
    with pytest.raises(PositionError, match="1 of the 108 cards are nowhere: red_0"):
        arranged_hand(config, cards=[deck[1:2], deck[2:3]], discards=deck[3:4], draw_pile=deck[4:],
                      colour=Colour.RED, phase=Phase.TURN, to_move=0)  # fmt: skip
    assert isinstance(red_0, Card)
