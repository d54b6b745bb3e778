"""RULINGS 19-20: calling UNO, the catch window, the penalty."""

import pytest

from uno_arena.rules import (
    CATCH,
    DRAW,
    KEEP,
    PASS,
    Phase,
    WrongDecisionError,
    canonical,
    legal_actions,
    parse_card,
    play,
    play_card,
)
from uno_arena.rules.event import CatchPassed, Caught, Drew, Played

from .table import deal, events_of

THREE = ("red_1 blue_2", "red_3 red_4", "green_5 green_6")  # dealer 2: seat 0 plays first


def test_calling_uno_with_the_play_closes_no_window() -> None:
    hand = deal(*THREE, first="red_9", dealer=2, draw="yellow_1 yellow_2")
    play(hand, play_card(parse_card("red_1"), uno=True))
    assert events_of(hand, Played)[-1].uno
    assert hand.phase is Phase.TURN
    assert hand.to_move == 1


def test_uno_call_offered_only_when_one_card_is_left() -> None:
    hand = deal(*THREE, first="red_9", dealer=2)
    assert [str(a) for a in legal_actions(hand)] == ["play red_1", "play red_1 uno", "draw"]
    hand = deal(
        "red_1 blue_2 blue_3", "red_3 red_4 red_5", "green_5 green_6 green_7", first="red_9", dealer=2
    )
    assert [str(a) for a in legal_actions(hand)] == ["play red_1", "draw"]


def test_uncalled_uno_others_may_catch_in_turn_order() -> None:
    hand = deal(*THREE, first="red_9", dealer=2, draw="yellow_1 yellow_2")
    play(hand, play_card(parse_card("red_1")))
    assert hand.phase is Phase.CATCH
    assert hand.to_move == 1
    assert legal_actions(hand) == [CATCH, PASS]
    play(hand, PASS)
    assert hand.to_move == 2
    play(hand, CATCH)
    assert events_of(hand, CatchPassed)[0].seat == 1
    assert events_of(hand, Caught)[0] == Caught(catcher=2, seat=0)
    assert [(e.seat, e.count, e.reason) for e in events_of(hand, Drew)] == [(0, 2, "uno_penalty")]
    assert len(hand.cards[0]) == 3
    assert hand.phase is Phase.TURN and hand.to_move == 1  # the window closed before seat 1 began


def test_nobody_catches_no_penalty() -> None:
    hand = deal(*THREE, first="red_9", dealer=2)
    play(hand, play_card(parse_card("red_1")))
    play(hand, PASS)
    play(hand, PASS)
    assert len(hand.cards[0]) == 1
    assert hand.to_move == 1
    assert not events_of(hand, Drew)


def test_window_comes_before_the_cards_effect() -> None:
    hand = deal(
        "red_draw_two blue_2",
        "red_3 red_4",
        "green_5 green_6",
        first="red_9",
        dealer=2,
        draw="yellow_1 yellow_2 yellow_3 yellow_4",
    )
    play(hand, play_card(parse_card("red_draw_two")))
    assert hand.phase is Phase.CATCH and hand.to_move == 1
    assert not events_of(hand, Drew)  # seat 1 has not begun: it has not drawn two yet
    play(hand, CATCH)
    assert [(e.seat, e.reason) for e in events_of(hand, Drew)] == [(0, "uno_penalty"), (1, "draw_two")]
    assert hand.to_move == 2


def test_penalty_option() -> None:
    hand = deal(*THREE, first="red_9", dealer=2, uno_penalty=4)
    play(hand, play_card(parse_card("red_1")))
    play(hand, CATCH)
    assert events_of(hand, Drew)[0].count == 4


def test_a_call_with_more_than_one_card_left_is_ignored() -> None:
    hand = deal(
        "red_1 blue_2 blue_3", "red_3 red_4 red_5", "green_5 green_6 green_7", first="red_9", dealer=2
    )
    played = play(hand, play_card(parse_card("red_1"), uno=True))
    assert played == play_card(parse_card("red_1"))
    assert canonical(hand, play_card(parse_card("red_3"), uno=True)) == play_card(parse_card("red_3"))
    assert not events_of(hand, Played)[-1].uno
    assert hand.to_move == 1


def test_a_caught_player_can_call_again_next_time() -> None:
    hand = deal("red_1 red_2", "red_3 red_4", first="red_9", dealer=1, draw="red_5 red_6 blue_9")
    play(hand, play_card(parse_card("red_1")))
    play(hand, CATCH)  # seat 0 draws red_5 red_6
    play(hand, play_card(parse_card("red_3"), uno=True))
    play(hand, play_card(parse_card("red_2")))  # three cards to two: no call offered
    play(hand, DRAW)  # seat 1 draws blue_9, which does not match
    assert legal_actions(hand) == [KEEP]  # asked all the same (RULINGS 29)
    play(hand, KEEP)
    assert play_card(parse_card("red_5"), uno=True) in legal_actions(hand)
    play(hand, play_card(parse_card("red_5"), uno=True))
    assert events_of(hand, Played)[-1].uno
    assert hand.phase is Phase.TURN and hand.to_move == 1


def test_a_false_catch_is_refused_and_costs_nothing() -> None:
    hand = deal(*THREE, first="red_9", dealer=2)
    play(hand, play_card(parse_card("red_1"), uno=True))  # called: nobody is catchable
    events = list(hand.events)
    with pytest.raises(WrongDecisionError):
        play(hand, CATCH)
    assert hand.events == events
