"""RULINGS 28, the `multi_play` house rule, sentence by sentence (with 19, 25-27 and 29 where they meet it).

Four seats unless said otherwise; seat 1 plays on a red 3 (`house.arrange`).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from uno_arena.rules import (
    ACCEPT,
    CATCH,
    DONE,
    DRAW,
    PASS,
    CardDoesNotMatchError,
    Colour,
    Hand,
    HandEnd,
    NotSameRankError,
    Phase,
    Rank,
    RulesConfig,
    WrongDecisionError,
    apply,
    legal_actions,
    new_match,
    parse_card,
    play,
    play_card,
    swap,
)
from uno_arena.rules.event import Caught, DirectionChanged, Drew, HandsPassed, Played, Skipped, Swapped

from .house import arrange, flip_holding, held, of_rank, what_others_see
from .table import events_of


def multi(*cards: str, top: str = "red_3", **options: Any) -> Hand:
    return arrange(*cards, top=top, multi_play=True, **options)


def lay(hand: Hand, *names: str, uno: bool = False) -> None:
    """Play the first card named, lay the others, then be done; the call, if any, with the last."""
    for i, name in enumerate(names):
        play(hand, play_card(parse_card(name), uno=uno and i == len(names) - 1))
        assert hand.phase is Phase.LAY or hand.is_over or i == len(names) - 1
    if hand.phase is Phase.LAY:
        play(hand, DONE)


def drew(hand: Hand) -> list[tuple[int, int, str]]:
    return [(e.seat, e.count, e.reason) for e in events_of(hand, Drew)]


# "several cards of the same number or symbol may be played together if the first is playable"
# "The last card laid is the top discard"


def test_three_7s_laid_together() -> None:
    hand = multi("green_1 green_2", "red_7 blue_7 green_7 yellow_2", "blue_5 red_6", "green_6 yellow_4")
    red_7, green_7, blue_7 = parse_card("red_7"), parse_card("green_7"), parse_card("blue_7")
    # the first must be playable; laying the other two 7s would leave one card, so the call is offered
    assert legal_actions(hand) == [play_card(red_7), play_card(red_7, uno=True), DRAW]
    play(hand, play_card(red_7))
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.LAY, 1, 1)
    assert legal_actions(hand) == [
        play_card(green_7),
        play_card(green_7, uno=True),
        play_card(blue_7),
        play_card(blue_7, uno=True),
        DONE,
    ]
    play(hand, play_card(green_7))
    assert legal_actions(hand) == [play_card(blue_7), play_card(blue_7, uno=True), DONE]
    play(hand, play_card(blue_7, uno=True))
    assert legal_actions(hand) == [DONE]  # nothing left to add: done is all there is
    play(hand, DONE)
    assert [(e.seat, str(e.card), e.cards_left) for e in events_of(hand, Played)] == [
        (1, "red_7", 3),
        (1, "green_7", 2),
        (1, "blue_7", 1),
    ]
    assert (hand.top, hand.colour) == (blue_7, Colour.BLUE)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


def test_the_first_card_must_be_playable() -> None:
    hand = multi("green_1 green_2", "red_7 blue_7 green_7 yellow_2", "blue_5 red_6", "green_6 yellow_4")
    with pytest.raises(CardDoesNotMatchError, match="blue_7 does not match red_3"):
        play(hand, play_card(parse_card("blue_7")))


# "colours cannot be stacked, Wilds cannot be combined"


def test_only_cards_of_the_same_number_or_symbol_are_laid() -> None:
    hand = multi("green_1 green_2", "red_7 red_4 wild blue_7", "blue_5 red_6", "green_6 yellow_4")
    play(hand, play_card(parse_card("red_7")))
    before = (held(hand), len(hand.events))
    for other in (play_card(parse_card("red_4")), play_card(parse_card("wild"), Colour.RED)):
        with pytest.raises(NotSameRankError, match=r"cards laid together share the top card's 7 \(or done\)"):
            play(hand, other)
    for other in (DRAW, PASS):
        with pytest.raises(WrongDecisionError, match="does not answer lay: expected done, play"):
            play(hand, other)
    assert (held(hand), len(hand.events), hand.phase) == (*before, Phase.LAY)


def test_a_wild_is_played_alone() -> None:
    hand = multi("green_1 green_2", "wild wild blue_7", "blue_5 red_6", "green_6 yellow_4")
    play(hand, play_card(parse_card("wild"), Colour.GREEN))
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)  # no phase lay: a second Wild must wait
    hand = multi(
        "green_1 green_2", "wild_draw_four wild_draw_four blue_7", "blue_5 red_6", "green_6 yellow_4"
    )
    play(hand, play_card(parse_card("wild_draw_four"), Colour.GREEN))
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.CHALLENGE, 2, 4)


# RULINGS 29: phase lay follows every play, so nobody learns whether the player had more to lay.


def test_lay_is_asked_even_with_nothing_to_add_and_the_others_see_the_same() -> None:
    lacks = multi("green_1 green_2", "red_5 blue_8 yellow_9", "blue_5 red_6", "green_6 yellow_4")
    holds = multi("green_1 green_2", "red_5 yellow_5 yellow_9", "blue_5 red_6", "green_6 yellow_4")
    for hand in (lacks, holds):
        play(hand, play_card(parse_card("red_5")))
        assert (hand.phase, hand.to_move) == (Phase.LAY, 1)
    assert legal_actions(lacks) == [DONE]
    assert legal_actions(holds) == [
        play_card(parse_card("yellow_5")),
        play_card(parse_card("yellow_5"), uno=True),
        DONE,
    ]
    assert what_others_see(lacks, 1, 0) == what_others_see(holds, 1, 0)
    for hand in (lacks, holds):
        play(hand, DONE)
    assert what_others_see(lacks, 1, 0) == what_others_see(holds, 1, 0)
    assert (lacks.phase, lacks.to_move) == (Phase.TURN, 2)


def test_no_lay_after_a_drawn_card_nor_a_jump_in() -> None:
    hand = multi("green_1 green_2", "blue_5 blue_8", "red_5 green_6", "green_7 yellow_4", draw="red_5")
    play(hand, DRAW)
    assert (hand.phase, hand.drawn) == (Phase.DRAWN, parse_card("red_5"))
    play(hand, play_card(parse_card("red_5")))  # blue 5 could go with it in a turn, not after a draw
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)
    hand = multi("green_1 green_2", "red_5 blue_8", "red_5 blue_5 green_6", "green_7 yellow_4", jump_in=True)
    lay(hand, "red_5", uno=True)
    assert (hand.phase, hand.to_move) == (Phase.JUMP_IN, 2)  # the window follows the whole play
    play(hand, play_card(parse_card("red_5")))
    assert (hand.phase, hand.to_move) == (Phase.TURN, 3)  # the jumper cannot add its blue 5


# "each card's effect applies in order (two Skips skip two players, two Draw Twos make the next
# player draw four, two Reverses cancel)"


def test_two_skips_skip_two_players() -> None:
    hand = multi("green_1 green_2", "red_skip blue_skip green_9", "blue_5 red_6", "green_6 yellow_4")
    lay(hand, "red_skip", "blue_skip", uno=True)
    assert events_of(hand, Skipped) == [Skipped(2), Skipped(3)]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)


@pytest.mark.parametrize(("skips", "skipped", "next_seat"), [(1, [0], 1), (2, [0, 1], 0)])
def test_with_two_players_skips_count_round_the_table(skips: int, skipped: list[int], next_seat: int) -> None:
    """The second Skip skips the player who laid it: the opponent plays, as after two Reverses."""
    cards = ["red_skip", "blue_skip"][:skips]
    hand = multi("green_1 green_2", " ".join([*cards, "green_9"]))
    lay(hand, *cards, uno=True)
    assert events_of(hand, Skipped) == [Skipped(seat) for seat in skipped]
    assert (hand.phase, hand.to_move) == (Phase.TURN, next_seat)


def test_two_draw_twos_laid_together_make_the_next_player_draw_four() -> None:
    hand = multi("green_1 green_2", "red_draw_two green_draw_two green_9", "blue_5 red_6", "green_6 yellow_4")
    lay(hand, "red_draw_two", "green_draw_two", uno=True)
    assert drew(hand) == [(2, 4, "draw_two")]
    assert events_of(hand, Skipped) == [Skipped(2)]
    assert (hand.phase, hand.to_move, hand.penalty, hand.colour) == (Phase.TURN, 3, 0, Colour.GREEN)


def test_two_draw_twos_laid_together_with_stacking_pass_four_on() -> None:
    hand = multi(
        "green_1 green_2",
        "red_draw_two green_draw_two green_9",
        "blue_draw_two yellow_draw_two red_6",
        "green_6 yellow_4",
        stacking=True,
    )
    lay(hand, "red_draw_two", "green_draw_two", uno=True)
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.STACK, 2, 4)
    lay(hand, "yellow_draw_two", "blue_draw_two", uno=True)  # a stack may be laid together too
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.STACK, 3, 8)
    play(hand, ACCEPT)
    assert drew(hand) == [(3, 8, "draw_two")]


def test_two_reverses_cancel() -> None:
    hand = multi("green_1 green_2", "red_reverse blue_reverse green_9", "blue_5 red_6", "green_6 yellow_4")
    lay(hand, "red_reverse", "blue_reverse", uno=True)
    assert events_of(hand, DirectionChanged) == [DirectionChanged(-1), DirectionChanged(1)]
    assert (hand.phase, hand.to_move, hand.direction) == (Phase.TURN, 2, 1)


@pytest.mark.parametrize(("reverses", "next_seat"), [(1, 1), (2, 0), (3, 1)])
def test_with_two_players_an_odd_number_of_reverses_skips(reverses: int, next_seat: int) -> None:
    cards = ["red_reverse", "blue_reverse", "green_reverse"][:reverses]
    hand = multi("green_1 green_2", " ".join([*cards, "green_9"]), top="red_3")
    lay(hand, *cards, uno=True)
    assert len(events_of(hand, DirectionChanged)) == reverses
    assert events_of(hand, Skipped) == ([Skipped(0)] if reverses % 2 else [])
    assert (hand.phase, hand.to_move) == (Phase.TURN, next_seat)


def test_going_out_by_laying_draw_twos_makes_the_next_player_draw_the_total() -> None:
    hand = multi("green_1 green_2", "red_draw_two blue_draw_two", "blue_5 red_6", "green_6 yellow_4")
    play(hand, play_card(parse_card("red_draw_two"), uno=True))
    play(hand, play_card(parse_card("blue_draw_two")))
    assert hand.result is not None and (hand.result.reason, hand.result.winner) == (HandEnd.PLAYED_OUT, 1)
    assert drew(hand) == [(2, 4, "draw_two")]


# "UNO is judged after the whole play."


def test_uno_is_judged_after_the_whole_play() -> None:
    seats = ("green_1 green_2", "red_5 blue_5 green_3", "blue_8 red_6", "green_6 yellow_4")
    hand = multi(*seats)
    play(hand, play_card(parse_card("red_5")))
    play(hand, play_card(parse_card("blue_5")))  # one card left, no call: nobody may catch yet
    assert (hand.phase, hand.to_move) == (Phase.LAY, 1)
    play(hand, DONE)
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.CATCH, 2, 1)
    play(hand, CATCH)
    assert events_of(hand, Caught) == [Caught(2, 1)] and drew(hand) == [(1, 2, "uno_penalty")]
    hand = multi(*seats)
    play(hand, play_card(parse_card("red_5")))
    play(hand, play_card(parse_card("blue_5"), uno=True))  # the call goes with the card that leaves one
    play(hand, DONE)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


def test_a_call_with_the_first_card_counts_when_the_whole_play_leaves_one() -> None:
    """The finding of issue 28: seat 0 holds red 5, blue 5, green 1. Its call with the red 5 was
    dropped (three cards held), so after the blue 5 and DONE it could be caught. UNO is judged
    after the whole play: the call is kept, never changed silently, and counts."""
    hand = multi("red_5 blue_5 green_1", "green_2 green_3", "blue_8 red_6", to_move=0)
    red_5, blue_5 = parse_card("red_5"), parse_card("blue_5")
    assert play_card(red_5, uno=True) in legal_actions(hand)
    assert play(hand, play_card(red_5, uno=True), 0) == play_card(red_5, uno=True)
    assert events_of(hand, Played)[-1].uno
    play(hand, play_card(blue_5), 0)
    play(hand, DONE, 0)
    assert (len(hand.cards[0]), hand.phase, hand.to_move) == (1, Phase.TURN, 1)  # no catch window
    assert not events_of(hand, Caught)


def test_a_call_counts_only_if_the_play_can_leave_one_card() -> None:
    """RULINGS 20 after the whole play: a call offered with the first card is ignored when the player
    is done with more than one card (no penalty either); with a play that cannot leave one card
    (too few cards of its number), it is not offered, and one sent anyway is read without it."""
    hand = multi("green_1 green_2", "red_5 blue_5 green_3", "blue_8 red_6", "green_6 yellow_4")
    play(hand, play_card(parse_card("red_5"), uno=True))
    play(hand, DONE)  # two cards left: the call is ignored, nobody may catch
    assert (len(hand.cards[1]), hand.phase, hand.to_move) == (2, Phase.TURN, 2)
    hand = multi("green_1 green_2", "red_5 blue_5 green_3 green_4", "blue_8 red_6", "green_6 yellow_4")
    assert play_card(parse_card("red_5"), uno=True) not in legal_actions(hand)
    assert play(hand, play_card(parse_card("red_5"), uno=True)) == play_card(parse_card("red_5"))
    hand = multi("green_1 green_2", "red_5 blue_5", "blue_8 red_6", "green_6 yellow_4")
    play(hand, play_card(parse_card("red_5"), uno=True))  # leaves one: the call stands
    play(hand, DONE)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


# with seven_zero (RULINGS 27): one swap per 7 laid, one pass per 0


def test_three_7s_laid_together_swap_three_times() -> None:
    hand = multi(
        "green_1 green_2 green_3 green_4 green_5",
        "red_7 blue_7 green_7 yellow_2",
        "blue_5 red_6 red_8 red_9",
        "green_6 yellow_4 yellow_6",
        seven_zero=True,
    )
    lay(hand, "red_7", "green_7", "blue_7")
    assert (hand.phase, hand.to_move) == (Phase.SWAP, 1)
    for other in (0, 2, 3):
        assert hand.phase is Phase.SWAP
        play(hand, swap(other))
    assert events_of(hand, Swapped) == [Swapped(1, 0), Swapped(1, 2), Swapped(1, 3)]
    assert held(hand) == [
        ["yellow_2"],
        ["green_6", "yellow_4", "yellow_6"],
        ["green_1", "green_2", "green_3", "green_4", "green_5"],
        ["blue_5", "red_6", "red_8", "red_9"],
    ]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)  # seat 0 was handed one card: nothing owed


def test_two_0s_laid_together_pass_the_hands_twice() -> None:
    hand = multi("green_1 green_2", "red_0 blue_0 yellow_2", "blue_5 red_6", "green_6", seven_zero=True)
    lay(hand, "red_0", "blue_0", uno=True)
    assert events_of(hand, HandsPassed) == [HandsPassed(1), HandsPassed(1)]
    assert held(hand) == [["blue_5", "red_6"], ["green_6"], ["green_1", "green_2"], ["yellow_2"]]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


# RULINGS 29, at random: whether the player holds a card to add never shows.


@pytest.mark.parametrize("players", [2, 4, 6])
def test_what_others_see_in_lay_does_not_depend_on_holding_a_card_to_add(players: int) -> None:
    """Random matches; at every lay decision, a copy where the player holds a card of the top
    card's rank if it did not (or none if it did), card for card with the draw pile: the others
    see the same, before and after it is done."""
    rng = random.Random(players)
    config = RulesConfig(
        players=players,
        multi_play=True,
        stacking=True,
        seven_zero=True,
        target_score=200,
        max_hands_per_match=6,
    )
    checked: Counter[bool] = Counter()
    for seed in range(5):
        match = new_match(config, random.Random(seed))
        while match.result is None:
            hand = match.hand
            if hand.phase is Phase.LAY:
                seat, rank = hand.to_move, hand.top.rank
                twin = match.clone()
                if flip_holding(twin.hand, seat, of_rank(rank), rng):
                    since = len(match.events)
                    real = match.clone()
                    assert what_others_see(real, seat, since) == what_others_see(twin, seat, since)
                    if rank is not Rank.ZERO:  # done on a 0 passes the (different) hands on
                        apply(real, DONE)
                        apply(twin, DONE)
                        assert what_others_see(real, seat, since) == what_others_see(twin, seat, since)
                    checked[any(c.rank is rank for c in hand.cards[seat])] += 1
            apply(match, rng.choice(legal_actions(match)))
    assert min(checked[True], checked[False]) >= 20, checked
