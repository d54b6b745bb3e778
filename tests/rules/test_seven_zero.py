"""RULINGS 27, the `seven_zero` house rule, sentence by sentence (with 19, 26 and 29 where they meet it).

Four seats unless said otherwise; seat 1 plays on a red 3 (`house.arrange`).
"""

from __future__ import annotations

from typing import Any

import pytest

from uno_arena.rules import (
    CATCH,
    DRAW,
    PASS,
    Hand,
    HandEnd,
    Phase,
    SwapSeatError,
    WrongDecisionError,
    canonical,
    legal_actions,
    observe,
    parse_card,
    parse_cards,
    play,
    play_card,
    public,
    seen_by,
    swap,
)
from uno_arena.rules.event import Caught, Drew, HandsPassed, Played, Received, Swapped

from .house import arrange, held
from .table import events_of

RED_7 = parse_card("red_7")
RED_0 = parse_card("red_0")


def seven_zero(*cards: str, **options: Any) -> Hand:
    return arrange(*cards, top="red_3", seven_zero=True, **options)


def received(hand: Hand) -> list[tuple[int, int, int]]:
    return [(e.seat, e.giver, e.count) for e in events_of(hand, Received)]


# "a player who plays a 7 chooses another player and they swap hands"


def test_a_7_swaps_hands_with_the_seat_chosen() -> None:
    hand = seven_zero(
        "green_1 green_2", "red_7 blue_8 yellow_9", "blue_5 red_6 yellow_2 green_4", "green_6 yellow_4"
    )
    play(hand, play_card(RED_7))
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.SWAP, 1, 1)
    assert legal_actions(hand) == [swap(0), swap(2), swap(3)]
    for seat in (0, 2, 3):
        assert observe(hand, seat).phase is Phase.SWAP and observe(hand, seat).legal_actions == ()
    play(hand, swap(2))
    assert hand.events[-3:] == [
        Swapped(1, 2),
        Received(1, 2, 4, tuple(sorted(parse_cards("blue_5 red_6 yellow_2 green_4")))),
        Received(2, 1, 2, tuple(sorted(parse_cards("blue_8 yellow_9")))),
    ]
    assert held(hand) == [
        ["green_1", "green_2"],
        ["blue_5", "green_4", "red_6", "yellow_2"],
        ["blue_8", "yellow_9"],
        ["green_6", "yellow_4"],
    ]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)  # then play goes on as after any number


def test_a_swap_names_another_seat_at_the_table() -> None:
    hand = seven_zero("green_1 green_2", "red_7 blue_8 yellow_9", "blue_5 red_6", "green_6 yellow_4")
    play(hand, play_card(RED_7))
    before = (held(hand), len(hand.events))
    with pytest.raises(SwapSeatError, match="swap with seat 1: swap with another of seats 0-3, not seat 1"):
        play(hand, swap(1))
    with pytest.raises(SwapSeatError, match="not seat 4"):
        play(hand, swap(4))
    for other in (DRAW, PASS, play_card(parse_card("blue_8"))):
        with pytest.raises(WrongDecisionError, match="does not answer swap: expected swap"):
            play(hand, other)
    assert (held(hand), len(hand.events)) == before and hand.phase is Phase.SWAP


def test_with_two_players_the_swap_is_with_the_other() -> None:
    hand = arrange("green_1 green_2 green_3", "red_7 blue_8", top="red_3", seven_zero=True)
    play(hand, play_card(RED_7, uno=True))
    assert legal_actions(hand) == [swap(0)]
    play(hand, swap(0))
    assert held(hand) == [["blue_8"], ["green_1", "green_2", "green_3"]]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)


def test_swapped_cards_are_seen_only_by_who_receives_them() -> None:
    hand = seven_zero("green_1 green_2", "red_7 blue_8 yellow_9", "blue_5 red_6", "green_6 yellow_4")
    play(hand, play_card(RED_7))
    play(hand, swap(2))
    to_1, to_2 = events_of(hand, Received)
    assert seen_by(to_1, 1) == to_1 and seen_by(to_2, 2) == to_2
    for seat in (0, 3):
        assert seen_by(to_1, seat) == Received(1, 2, 2, None)
        assert seen_by(to_2, seat) == Received(2, 1, 2, None)
    assert seen_by(to_1, 2) == Received(1, 2, 2, None)  # the giver knows, but is not told again
    assert public(to_2) == Received(2, 1, 2, None)
    assert observe(hand, 0).hand_sizes == (2, 2, 2, 2)


def test_without_seven_zero_a_7_is_a_number() -> None:
    hand = arrange(
        "green_1 green_2", "red_7 blue_8 yellow_9", "blue_5 red_6", "green_6 yellow_4", top="red_3"
    )
    assert legal_actions(hand) == [play_card(RED_7), DRAW]  # no call offered with three cards
    play(hand, play_card(RED_7))
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2) and not events_of(hand, Swapped)


# "a player who plays a 0 makes every hand pass one seat in the direction of play"


def test_a_0_passes_every_hand_one_seat_in_the_direction_of_play() -> None:
    hand = seven_zero("green_1 green_2", "red_0 blue_8 yellow_9", "blue_5 red_6 yellow_2", "green_6")
    play(hand, play_card(RED_0))
    assert hand.events[-5:] == [
        HandsPassed(1),
        Received(0, 3, 1, tuple(parse_cards("green_6"))),
        Received(1, 0, 2, tuple(parse_cards("green_1 green_2"))),
        Received(2, 1, 2, tuple(sorted(parse_cards("blue_8 yellow_9")))),
        Received(3, 2, 3, tuple(sorted(parse_cards("blue_5 red_6 yellow_2")))),
    ]
    assert held(hand) == [
        ["green_6"],
        ["green_1", "green_2"],
        ["blue_8", "yellow_9"],
        ["blue_5", "red_6", "yellow_2"],
    ]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)  # nobody is asked anything
    assert [seen_by(e, 2) for e in events_of(hand, Received)][1] == Received(1, 0, 2, None)


def test_counter_clockwise_a_0_passes_the_hands_to_the_right() -> None:
    hand = seven_zero(
        "green_1 green_2", "red_0 blue_8 yellow_9", "blue_5 red_6 yellow_2", "green_6", direction=-1
    )
    play(hand, play_card(RED_0))
    assert events_of(hand, HandsPassed) == [HandsPassed(-1)]
    assert received(hand) == [(0, 1, 2), (1, 2, 3), (2, 3, 1), (3, 0, 2)]
    assert held(hand) == [
        ["blue_8", "yellow_9"],
        ["blue_5", "red_6", "yellow_2"],
        ["green_6"],
        ["green_1", "green_2"],
    ]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)


# "UNO (rule 19) is judged on the hand sizes after the swap or pass: a player whom their own play
# leaves with one card must have called UNO with it; a player handed a single card owes no call."


def test_a_7_swap_leaving_the_player_one_card_owes_uno_and_handing_one_card_owes_none() -> None:
    def swapped(uno: bool) -> Hand:
        hand = seven_zero("green_1 green_2 green_4", "red_7 blue_8", "blue_5 red_6 yellow_2", "green_6")
        play(hand, play_card(RED_7, uno=uno))
        play(hand, swap(3))
        assert held(hand)[1] == ["green_6"] and held(hand)[3] == ["blue_8"]  # one card each
        return hand

    hand = swapped(uno=False)
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.CATCH, 2, 1)  # seat 1 is catchable
    play(hand, CATCH)
    assert events_of(hand, Caught) == [Caught(2, 1)]
    assert [(e.seat, e.count, e.reason) for e in events_of(hand, Drew)] == [(1, 2, "uno_penalty")]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)
    hand = swapped(uno=True)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)  # seat 3 was handed one card: nothing owed


def test_a_call_with_a_7_counts_when_the_swap_leaves_one_card() -> None:
    seats = ("green_1 green_2 green_4", "red_7 blue_8 yellow_9", "blue_5 red_6 yellow_2", "green_6")
    hand = seven_zero(*seats)
    assert legal_actions(hand) == [play_card(RED_7), play_card(RED_7, uno=True), DRAW]  # three cards held
    assert canonical(hand, play_card(RED_7, uno=True)).uno
    play(hand, play_card(RED_7, uno=True))
    assert hand.events[-1] == Played(1, RED_7, None, True, 2)
    play(hand, swap(3))
    assert len(hand.cards[1]) == 1 and (hand.phase, hand.to_move) == (Phase.TURN, 2)
    hand = seven_zero(*seats)
    play(hand, play_card(RED_7))  # no call, two cards left; the swap leaves one
    play(hand, swap(3))
    assert (hand.phase, hand.turn_seat) == (Phase.CATCH, 1)


def test_a_call_with_a_7_is_ignored_when_the_swap_leaves_more() -> None:
    hand = seven_zero("green_1 green_2 green_4", "red_7 blue_8", "blue_5 red_6 yellow_2", "green_6")
    play(hand, play_card(RED_7, uno=True))
    play(hand, swap(2))
    assert len(hand.cards[1]) == 3 and (hand.phase, hand.to_move) == (Phase.TURN, 2)
    assert not events_of(hand, Drew)


def test_a_0_pass_leaving_the_player_one_card_owes_uno_and_handing_one_card_owes_none() -> None:
    hand = seven_zero("green_1", "red_0 blue_8", "blue_5 red_6 yellow_2", "green_6 green_7")
    play(hand, play_card(RED_0))  # one card left (blue 8), no call; it passes to seat 2
    assert held(hand)[:3] == [["green_6", "green_7"], ["green_1"], ["blue_8"]]
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.CATCH, 2, 1)
    for _ in range(3):
        play(hand, PASS)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)  # seat 2 holds one card and owes nothing


# "Going out on a 7 or 0 ends the hand first: no swap."


@pytest.mark.parametrize("last", ["red_7", "red_0"])
def test_going_out_on_a_7_or_0_ends_the_hand_without_a_swap(last: str) -> None:
    hand = seven_zero("green_1 green_2", last, "blue_5 red_6", "green_6 green_7")
    assert legal_actions(hand) == [play_card(parse_card(last)), play_card(parse_card(last), uno=True), DRAW]
    play(hand, play_card(parse_card(last)))
    assert hand.result is not None
    assert (hand.result.reason, hand.result.winner, hand.phase) == (HandEnd.PLAYED_OUT, 1, Phase.OVER)
    assert not events_of(hand, Swapped) and not events_of(hand, HandsPassed) and not events_of(hand, Received)
    assert hand.result.points == (0, 3 + 11 + 13, 0, 0)  # the hands as they were: nothing moved


# with jump_in (RULINGS 26): a 7 jumped in swaps like any other


def test_a_jumped_in_7_makes_the_jumper_swap() -> None:
    hand = seven_zero(
        "green_1 green_2", "red_7 blue_8 yellow_9", "blue_5 red_6", "red_7 yellow_4", jump_in=True
    )
    play(hand, play_card(RED_7))
    play(hand, swap(0))
    assert (hand.phase, hand.to_move) == (Phase.JUMP_IN, 2)  # the window follows the swap
    play(hand, PASS)
    assert legal_actions(hand) == [play_card(RED_7), play_card(RED_7, uno=True), PASS]
    play(hand, play_card(RED_7, uno=True))
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.SWAP, 3, 3)
    play(hand, swap(1))
    assert events_of(hand, Swapped) == [Swapped(1, 0), Swapped(3, 1)]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)
