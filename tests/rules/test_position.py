"""arranged_hand: a mid-hand position set up directly plays on like any dealt hand."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from uno_arena.rules import (
    ACCEPT,
    CATCH,
    CHALLENGE,
    DONE,
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
    swap,
)
from uno_arena.rules.event import Caught, Challenged, Drew, Played, Skipped, Swapped


def arrange(hands: list[str], discards: str, **state: object) -> Hand:
    """Seats hold `hands`, `discards` bottom first; every other card is in the draw pile.
    `house` in `state`: the house rules on, by name ("jump_in stacking")."""
    house = str(state.pop("house", ""))
    held = [parse_cards(h) for h in hands]
    under = parse_cards(discards)
    rest = Counter(standard_deck())
    rest.subtract([*(c for h in held for c in h), *under])
    pile = sorted(rest.elements())
    config = RulesConfig(players=len(hands), **dict.fromkeys(house.split(), True))  # type: ignore[arg-type]
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


# --- the house rules' phases (RULINGS 26-28) ---------------------------------------------------


FOUR = ["blue_1 blue_2", "green_1", "red_5 yellow_3 yellow_4", "green_4"]
"""Four seats' cards; seat 2 holds the second red_5."""


def test_a_jump_in_window_asks_the_seats_after_the_one_asked_then_the_next_player_moves() -> None:
    """Seat 0 played red_5; seat 2 is asked, then seat 3; nobody jumps in, so seat 1 plays."""
    hand = arrange(FOUR, "red_5", house="jump_in",
                   colour=Colour.RED, phase=Phase.JUMP_IN, to_move=2, turn_seat=0)  # fmt: skip
    assert legal_actions(hand) == [play_card(parse_cards("red_5")[0]), PASS]
    apply(hand, PASS)
    assert (hand.phase, hand.to_move, legal_actions(hand)) == (Phase.JUMP_IN, 3, [PASS])
    apply(hand, PASS)
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.TURN, 1, 1)


def test_a_jump_in_plays_as_the_jumpers_turn_and_play_continues_from_it() -> None:
    hand = arrange(FOUR, "red_5", house="jump_in",
                   colour=Colour.RED, phase=Phase.JUMP_IN, to_move=2, turn_seat=0)  # fmt: skip
    apply(hand, play_card(parse_cards("red_5")[0]))
    assert hand.events[-1] == Played(2, parse_cards("red_5")[0], None, False, 2, True)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 3)  # both red_5 are out: no second window


def test_after_a_skip_the_window_resumes_past_the_skipped_seat() -> None:
    hand = arrange(FOUR, "red_skip", house="jump_in",
                   colour=Colour.RED, phase=Phase.JUMP_IN, to_move=1)  # fmt: skip
    assert (hand.turn_seat, hand.resume_seat) == (0, 2)
    for _ in range(3):
        apply(hand, PASS)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


def test_a_jump_in_on_a_stacked_draw_two_adds_to_the_penalty() -> None:
    hand = arrange(["blue_1 blue_2", "red_draw_two green_1 green_2", "yellow_3"], "red_draw_two",
                   house="jump_in stacking", colour=Colour.RED, phase=Phase.JUMP_IN, to_move=1,
                   penalty=4)  # fmt: skip
    assert (hand.penalty, hand.resume_seat, hand.resume_phase) == (4, 1, Phase.STACK)
    apply(hand, play_card(parse_cards("red_draw_two")[0]))
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.STACK, 2, 6)


def test_a_lay_adds_cards_of_the_same_rank_then_they_take_effect_in_order() -> None:
    """Two Skips laid: seats 1 and 2 are skipped; the last one laid names the colour."""
    hands = ["blue_skip green_3 green_5", "green_1", "yellow_3", "green_4"]
    hand = arrange(hands, "red_skip", house="multi_play", colour=Colour.RED, phase=Phase.LAY, to_move=0)
    blue_skip = parse_cards("blue_skip")[0]
    assert legal_actions(hand) == [play_card(blue_skip), DONE]
    apply(hand, play_card(blue_skip))
    assert (hand.phase, hand.laid, legal_actions(hand)) == (Phase.LAY, 2, [DONE])
    apply(hand, DONE)
    assert [e.seat for e in hand.events if isinstance(e, Skipped)] == [1, 2]
    assert (hand.phase, hand.to_move, hand.colour) == (Phase.TURN, 3, Colour.BLUE)


def test_a_lay_position_carries_the_cards_already_laid() -> None:
    hand = arrange(["green_3 green_5", "green_1", "yellow_3"], "blue_draw_two red_draw_two",
                   house="multi_play", colour=Colour.RED, phase=Phase.LAY, to_move=0, laid=2)  # fmt: skip
    assert (hand.laid, hand.penalty) == (2, 4)
    apply(hand, DONE)
    assert [(e.seat, e.count) for e in hand.events if isinstance(e, Drew)] == [(1, 4)]


def test_a_swap_exchanges_hands_and_the_uno_call_is_judged_after_it() -> None:
    """Seat 0 played a 7 holding two cards; swapping with the seat holding one leaves it one."""
    called = arrange(["blue_1 blue_2", "green_1", "yellow_3 yellow_4 yellow_5"], "red_7", house="seven_zero",
                     colour=Colour.RED, phase=Phase.SWAP, to_move=0, uno_called=True)  # fmt: skip
    assert legal_actions(called) == [swap(1), swap(2)]
    apply(called, swap(1))
    assert [str(c) for c in called.cards[0]] == ["green_1"] and Swapped(0, 1) in called.events
    assert (called.phase, called.to_move) == (Phase.TURN, 1)
    quiet = arrange(["blue_1 blue_2", "green_1", "yellow_3 yellow_4 yellow_5"], "red_7", house="seven_zero",
                    colour=Colour.RED, phase=Phase.SWAP, to_move=0)  # fmt: skip
    apply(quiet, swap(1))
    assert (quiet.phase, quiet.turn_seat, quiet.to_move) == (Phase.CATCH, 0, 1)


def test_two_sevens_laid_owe_two_swaps() -> None:
    hand = arrange(["blue_1 blue_2", "green_1", "yellow_3 yellow_4 yellow_5"], "blue_7 red_7",
                   house="seven_zero multi_play", colour=Colour.RED, phase=Phase.SWAP, to_move=0,
                   swaps=2)  # fmt: skip
    apply(hand, swap(2))
    assert (hand.phase, hand.to_move, hand.swaps, len(hand.cards[0])) == (Phase.SWAP, 0, 1, 3)
    apply(hand, swap(1))
    assert [len(held) for held in hand.cards] == [1, 3, 2]
    assert hand.phase is Phase.CATCH  # one card left and no call


@pytest.mark.parametrize(
    ("hands", "discards", "house", "state", "message"),
    [
        (["red_3", "blue_2"], "red_5", "", at(Phase.JUMP_IN, to_move=1), "only with the jump_in house rule"),
        (
            ["red_3", "blue_2"],
            "wild",
            "jump_in",
            at(Phase.JUMP_IN, to_move=1),
            "no window opens after a Wild",
        ),
        (["red_3", "blue_2"], "red_draw_two", "jump_in", at(Phase.JUMP_IN, to_move=1), "without stacking"),
        (["red_3", "blue_2"], "red_0", "jump_in", at(Phase.JUMP_IN, to_move=1), "every copy of red_0"),
        (["red_3", "blue_2"], "red_5 red_5", "jump_in", at(Phase.JUMP_IN, to_move=1), "every copy of red_5"),
        (["red_3", "blue_2"], "red_5", "jump_in", at(Phase.JUMP_IN, turn_seat=0), "asked about another's"),
        (["red_3", "blue_2"], "red_5", "", at(Phase.LAY), "only with the multi_play house rule"),
        (["red_3", "blue_2"], "wild", "multi_play", at(Phase.LAY), "nothing is laid with a Wild"),
        (["red_3", "blue_2"], "red_5", "multi_play", at(Phase.LAY, turn_seat=1), "the one that just played"),
        (["red_3", "blue_2"], "red_7", "", at(Phase.SWAP), "only with the seven_zero house rule"),
        (["red_3", "blue_2"], "red_5", "seven_zero", at(Phase.SWAP), "must be the 7 just played, not red_5"),
        (["red_3", "blue_2"], "red_7", "seven_zero", at(Phase.SWAP, swaps=2), "laid 2: more than one card"),
        (
            ["red_3", "blue_2"],
            "blue_5 red_7",
            "seven_zero multi_play",
            at(Phase.SWAP, swaps=2),
            "the top 2 discards must all be 7 cards",
        ),
        (
            ["red_3", "blue_2"],
            "blue_7 red_7",
            "seven_zero multi_play",
            at(Phase.SWAP, swaps=3, laid=2),
            "swaps 3: one per 7 laid, from 1 to 2",
        ),
        (["red_3", "blue_2"], "red_5", "multi_play", at(Phase.TURN, laid=2), "laid 2: only in phases catch"),
        (["red_3", "blue_2"], "red_5", "seven_zero", at(Phase.TURN, swaps=1), "swaps 1: only in phase swap"),
        (["red_3", "blue_2"], "red_5", "", at(Phase.TURN, uno_called=True), "uno_called: only in phases"),
        (["red_3 red_4", "blue_2"], "red_5", "multi_play", at(Phase.LAY, uno_called=True), "holds 2"),
        (["red_3", "blue_2"], "red_5", "multi_play", at(Phase.LAY, penalty=2), "nothing is pending"),
        (
            ["red_3", "blue_2"],
            "blue_draw_two red_draw_two",
            "multi_play",
            at(Phase.LAY, laid=2, penalty=2),
            "from 4 to 4 (more only with stacking)",
        ),
    ],
)
def test_house_rule_positions_the_rules_cannot_reach_are_refused(
    hands: list[str], discards: str, house: str, state: dict[str, object], message: str
) -> None:
    with pytest.raises(PositionError, match=re.escape(message)):
        arrange(hands, discards, house=house, **state)
