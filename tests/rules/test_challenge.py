"""RULINGS 15, 17, 18: the Wild Draw Four and its challenge."""

from uno_arena.rules import (
    ACCEPT,
    CHALLENGE,
    Colour,
    Hand,
    HandEnd,
    Phase,
    legal_actions,
    observe,
    parse_card,
    play,
    play_card,
)
from uno_arena.rules.event import Challenged, Drew, HandShown, seen_by

from .table import deal, events_of

WD4 = parse_card("wild_draw_four")


def wd4_hand(holder: str) -> Hand:
    """Seat 1 (left of dealer 0) plays a Wild Draw Four naming blue; seat 2 must answer."""
    hand = deal(
        "yellow_1 yellow_2 yellow_3",
        holder,
        "green_1 green_2 green_3",
        first="red_7",
        draw="blue_1 blue_2 blue_3 blue_4 blue_5 blue_6 blue_7 blue_8",
    )
    play(hand, play_card(WD4, Colour.BLUE))
    return hand


def test_next_player_accepts_or_challenges() -> None:
    hand = wd4_hand("wild_draw_four green_5 yellow_9")
    assert hand.phase is Phase.CHALLENGE
    assert hand.to_move == 2
    assert legal_actions(hand) == [CHALLENGE, ACCEPT]


def test_accept_draws_four_and_loses_the_turn() -> None:
    hand = wd4_hand("wild_draw_four green_5 yellow_9")
    play(hand, ACCEPT)
    assert len(hand.cards[2]) == 7
    assert hand.to_move == 0
    assert hand.colour is Colour.BLUE


def test_guilty_challenged_player_draws_four_challenger_plays() -> None:
    hand = wd4_hand("wild_draw_four red_5 yellow_9")  # held red, the colour before
    play(hand, CHALLENGE)
    assert events_of(hand, Challenged)[0].guilty
    assert len(hand.cards[1]) == 6
    assert hand.to_move == 2
    assert hand.phase is Phase.TURN
    assert hand.colour is Colour.BLUE


def test_matching_only_by_number_is_not_guilty() -> None:
    hand = wd4_hand("wild_draw_four green_7 wild")  # a 7 and a Wild do not count
    play(hand, CHALLENGE)
    assert not events_of(hand, Challenged)[0].guilty


def test_innocent_challenger_draws_six_and_loses_the_turn() -> None:
    hand = wd4_hand("wild_draw_four green_5 yellow_9")
    play(hand, CHALLENGE)
    assert [(e.seat, e.count) for e in events_of(hand, Drew)] == [(2, 6)]
    assert hand.to_move == 0
    assert hand.colour is Colour.BLUE


def test_hand_is_shown_to_the_challenger_only() -> None:
    hand = wd4_hand("wild_draw_four green_5 yellow_9")
    play(hand, CHALLENGE)
    shown = events_of(hand, HandShown)[0]
    assert [str(c) for c in shown.cards] == ["yellow_9", "green_5"]
    assert seen_by(shown, 2).cards == shown.cards
    assert seen_by(shown, 0).cards is None
    assert observe(hand, 2).shown == ((1, shown.cards),)
    assert observe(hand, 0).shown == ()


def test_wild_draw_four_as_last_card_cannot_be_challenged() -> None:
    hand = deal("red_1 red_2", "wild_draw_four red_9", first="red_7", draw="blue_1 blue_2 blue_3 blue_4")
    play(hand, play_card(parse_card("red_9"), uno=True))
    play(hand, play_card(parse_card("red_1"), uno=True))
    play(hand, play_card(WD4, Colour.GREEN))
    assert hand.phase is Phase.OVER
    assert hand.result is not None and hand.result.reason is HandEnd.PLAYED_OUT
    assert not events_of(hand, Challenged)
    assert [(e.seat, e.count, e.reason) for e in events_of(hand, Drew)] == [(0, 4, "wild_draw_four")]
