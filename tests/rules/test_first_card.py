"""RULINGS 5-10: the first card turned up."""

from uno_arena.rules import (
    Colour,
    FirstWildChooser,
    FirstWildDrawFour,
    Phase,
    Rank,
    choose_colour,
    legal_actions,
    play,
)
from uno_arena.rules.event import Drew, Shuffled, ShuffleReason, Skipped

from .table import deal, events_of

FOUR = ("red_1 red_2", "blue_1 blue_2", "green_1 green_2", "yellow_1 yellow_2")


def test_number_card_dealers_left_plays_first_clockwise() -> None:
    hand = deal(*FOUR, first="red_5", dealer=2)
    assert hand.to_move == 3
    assert hand.direction == 1
    assert hand.colour is Colour.RED


def test_skip_skips_the_dealers_left() -> None:
    hand = deal(*FOUR, first="red_skip", dealer=2)
    assert [e.seat for e in events_of(hand, Skipped)] == [3]
    assert hand.to_move == 0


def test_reverse_dealer_plays_first_counter_clockwise() -> None:
    hand = deal(*FOUR, first="red_reverse", dealer=2)
    assert hand.direction == -1
    assert hand.to_move == 2
    play(hand, legal_actions(hand)[-1])  # draw
    assert hand.to_move in (1, 2)  # either the drawn card waits for a decision, or seat 1 is next


def test_reverse_with_two_players_is_a_skip() -> None:
    hand = deal("red_1 red_2", "blue_1 blue_2", first="red_reverse", dealer=0)
    assert hand.to_move == 0  # the dealer, as if the other player were skipped


def test_draw_two_left_draws_two_and_is_skipped() -> None:
    hand = deal(*FOUR, first="red_draw_two", draw="green_9 green_8", dealer=0)
    assert [(e.seat, e.count) for e in events_of(hand, Drew)] == [(1, 2)]
    assert len(hand.cards[1]) == 4
    assert hand.to_move == 2


def test_wild_dealer_names_the_colour_then_left_plays() -> None:
    hand = deal(*FOUR, first="wild", dealer=1)
    assert hand.phase is Phase.CHOOSE_COLOUR
    assert hand.to_move == 1
    play(hand, choose_colour(Colour.GREEN))
    assert hand.colour is Colour.GREEN
    assert hand.to_move == 2
    assert hand.phase is Phase.TURN


def test_wild_first_player_names_the_colour_option() -> None:
    hand = deal(*FOUR, first="wild", dealer=1, first_wild_chooser=FirstWildChooser.FIRST_PLAYER)
    assert hand.to_move == 2
    play(hand, choose_colour(Colour.BLUE))
    assert hand.to_move == 2
    assert hand.phase is Phase.TURN


def test_wild_draw_four_dealer_names_left_draws_four_no_challenge() -> None:
    hand = deal(*FOUR, first="wild_draw_four", draw="red_9 red_8 red_7 red_6", dealer=0)
    assert hand.phase is Phase.CHOOSE_COLOUR
    assert hand.to_move == 0
    play(hand, choose_colour(Colour.YELLOW))
    assert [(e.seat, e.count) for e in events_of(hand, Drew)] == [(1, 4)]
    assert hand.phase is Phase.TURN
    assert hand.to_move == 2
    assert hand.colour is Colour.YELLOW


def test_wild_draw_four_reshuffle_option_turns_up_another_card() -> None:
    hand = deal(*FOUR, first="wild_draw_four", dealer=0, first_wild_draw_four=FirstWildDrawFour.RESHUFFLE)
    assert hand.top.rank is not Rank.WILD_DRAW_FOUR
    assert [e.reason for e in events_of(hand, Shuffled)] == [ShuffleReason.FIRST_CARD]
    assert hand.card_count() == 108
