"""RULINGS 25, the `stacking` house rule, sentence by sentence (with 8, 10, 19 and 21 where they meet it).

Dealer 0 deals, so seat 1 plays first; four seats unless said otherwise. Draw piles are
named so that every total drawn is visible.
"""

from __future__ import annotations

from collections import Counter

import pytest

from uno_arena.rules import (
    ACCEPT,
    CATCH,
    CHALLENGE,
    DRAW,
    PASS,
    CannotStackError,
    Colour,
    Hand,
    HandEnd,
    Phase,
    PositionError,
    RulesConfig,
    WrongDecisionError,
    arranged_hand,
    legal_actions,
    observe,
    parse_card,
    parse_cards,
    play,
    play_card,
    standard_deck,
)
from uno_arena.rules.event import Accepted, Challenged, Drew, HandShown, Skipped

from .table import deal, events_of, names

D2 = {colour: parse_card(f"{colour.value}_draw_two") for colour in Colour}
WD4 = parse_card("wild_draw_four")
PILE = "blue_1 blue_2 blue_3 blue_4 blue_5 blue_6 blue_7 blue_8 blue_9 yellow_4 yellow_5 yellow_6 yellow_7"


def stacking(*hands: str, first: str = "red_7", draw: str = PILE) -> Hand:
    return deal(*hands, first=first, draw=draw, stacking=True)


def drew(hand: Hand) -> list[tuple[int, int, str]]:
    return [(e.seat, e.count, e.reason) for e in events_of(hand, Drew)]


# "a player who must draw for a Draw Two may instead play a Draw Two (any colour) ... the penalty
# grows by 2 ... and passes on"


def test_a_draw_two_on_a_draw_two_passes_four_on() -> None:
    hand = stacking(
        "yellow_1 yellow_2 yellow_3",
        "red_draw_two green_5 yellow_9",
        "blue_draw_two green_6 wild_draw_four",
        "green_1 green_2 green_3",
    )
    play(hand, play_card(D2[Colour.RED]))
    assert (hand.phase, hand.to_move, hand.turn_seat, hand.penalty) == (Phase.STACK, 2, 1, 2)
    assert [str(a) for a in legal_actions(hand)] == ["play blue_draw_two", "accept"]  # any colour; no WD4
    play(hand, play_card(D2[Colour.BLUE]))
    assert (hand.phase, hand.to_move, hand.turn_seat, hand.penalty) == (Phase.STACK, 3, 2, 4)
    assert hand.colour is Colour.BLUE
    assert all(observe(hand, seat).penalty == 4 for seat in range(4))  # public, for every seat
    assert drew(hand) == []


# "The first player who does not stack draws the whole total and loses their turn."


def test_the_first_player_who_does_not_stack_draws_the_total_and_loses_the_turn() -> None:
    hand = stacking(
        "yellow_1 yellow_2 yellow_3",
        "red_draw_two green_5 yellow_9",
        "blue_draw_two green_6 green_7",
        "green_draw_two green_2 green_3",  # may stack too, but accepts
    )
    play(hand, play_card(D2[Colour.RED]))
    play(hand, play_card(D2[Colour.BLUE]))
    assert legal_actions(hand) == [play_card(D2[Colour.GREEN]), ACCEPT]
    play(hand, ACCEPT)
    assert drew(hand) == [(3, 4, "draw_two")]
    assert [type(e) for e in hand.events[-3:]] == [Accepted, Drew, Skipped] and hand.events[-1] == Skipped(3)
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.TURN, 0, 0)
    assert observe(hand, 0).penalty == 0


def test_a_stack_goes_round_the_table_until_someone_accepts() -> None:
    hand = stacking(
        "yellow_draw_two yellow_2 yellow_3",
        "red_draw_two green_5 yellow_9",
        "blue_draw_two green_6 green_7",
        "green_draw_two green_2 green_3",
    )
    for colour in (Colour.RED, Colour.BLUE, Colour.GREEN, Colour.YELLOW):
        play(hand, play_card(D2[colour]))
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.STACK, 1, 8)
    assert legal_actions(hand) == [ACCEPT]
    play(hand, ACCEPT)
    assert drew(hand) == [(1, 8, "draw_two")]
    assert hand.to_move == 2


# "one who must draw for a Wild Draw Four may play a Wild Draw Four; the penalty grows by ... 4"
# "The player facing stacked Wild Draw Fours may challenge the last one only (rule 17): guilty,
# its player draws the whole total; innocent, the challenger draws the total plus two."


def wd4_on_wd4(second: str) -> Hand:
    """Seat 1 plays an innocent Wild Draw Four naming blue; seat 2 (holding `second`) stacks one
    naming green; seat 3 faces 8."""
    hand = stacking(
        "yellow_1 yellow_2 yellow_3",
        "wild_draw_four green_5 yellow_9",  # no red: innocent
        second,
        "green_1 green_2 green_3",
    )
    play(hand, play_card(WD4, Colour.BLUE))
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.CHALLENGE, 2, 4)
    legal = legal_actions(hand)
    assert [play_card(WD4, c) for c in Colour] == legal[:4] and legal[4:] == [CHALLENGE, ACCEPT]
    play(hand, play_card(WD4, Colour.GREEN))
    assert (hand.phase, hand.to_move, hand.turn_seat, hand.penalty) == (Phase.CHALLENGE, 3, 2, 8)
    assert legal_actions(hand) == [CHALLENGE, ACCEPT]
    return hand


def test_stacked_wild_draw_fours_guilty_last_player_draws_the_whole_total() -> None:
    hand = wd4_on_wd4("wild_draw_four blue_5 green_7")  # held blue, the colour before its card
    play(hand, CHALLENGE)
    assert events_of(hand, Challenged) == [Challenged(3, 2, True)]
    assert drew(hand) == [(2, 8, "challenge")]
    assert (hand.phase, hand.to_move, hand.colour) == (Phase.TURN, 3, Colour.GREEN)  # plays as normal


def test_stacked_wild_draw_fours_innocent_challenger_draws_the_total_plus_two() -> None:
    hand = wd4_on_wd4("wild_draw_four green_5 green_7")  # no blue: innocent
    play(hand, CHALLENGE)
    assert events_of(hand, Challenged) == [Challenged(3, 2, False)]
    assert drew(hand) == [(3, 10, "challenge")]
    assert hand.events[-1] == Skipped(3)
    assert (hand.phase, hand.to_move, hand.colour) == (Phase.TURN, 0, Colour.GREEN)


def test_accepting_stacked_wild_draw_fours_draws_the_total() -> None:
    hand = wd4_on_wd4("wild_draw_four green_5 green_7")
    play(hand, ACCEPT)
    assert drew(hand) == [(3, 8, "wild_draw_four")]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)


# "Stacking a Wild Draw Four gives up the right to challenge the one before."


def test_stacking_a_wild_draw_four_forfeits_the_challenge_of_the_one_before() -> None:
    hand = stacking(
        "yellow_1 yellow_2 yellow_3",
        "wild_draw_four red_5 yellow_9",  # held red: guilty
        "wild_draw_four green_5 green_7",  # no blue: innocent
        "green_1 green_2 green_3",
    )
    play(hand, play_card(WD4, Colour.BLUE))
    assert hand.wild_draw_four_guilty
    play(hand, play_card(WD4, Colour.GREEN))  # seat 2 stacks instead of challenging seat 1
    play(hand, CHALLENGE)  # seat 3 can only challenge seat 2's card
    assert events_of(hand, Challenged) == [Challenged(3, 2, False)]
    assert [(e.seat, e.to) for e in events_of(hand, HandShown)] == [(2, 3)]
    assert drew(hand) == [(3, 10, "challenge")]
    assert len(hand.cards[1]) == 2  # the guilty seat 1 never answers for its card


# "Draw Two and Wild Draw Four never mix."


def test_a_wild_draw_four_never_goes_on_a_draw_two() -> None:
    hand = stacking(
        "yellow_1 yellow_2 yellow_3",
        "red_draw_two green_5 yellow_9",
        "wild_draw_four red_1 green_7",
        "green_1 green_2 green_3",
    )
    play(hand, play_card(D2[Colour.RED]))
    assert legal_actions(hand) == [ACCEPT]
    for refused in (play_card(WD4, Colour.BLUE), play_card(parse_card("red_1"))):
        with pytest.raises(CannotStackError, match="only a Draw Two"):
            play(hand, refused)
    with pytest.raises(WrongDecisionError):
        play(hand, DRAW)
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.STACK, 2, 2)  # unchanged by the refusals


def test_a_draw_two_never_goes_on_a_wild_draw_four() -> None:
    hand = stacking(
        "yellow_1 yellow_2 yellow_3",
        "wild_draw_four green_5 yellow_9",
        "blue_draw_two blue_1 green_7",
        "green_1 green_2 green_3",
        draw="red_1 red_2 red_3 red_4 red_5 red_6",
    )
    play(hand, play_card(WD4, Colour.BLUE))
    assert legal_actions(hand) == [CHALLENGE, ACCEPT]
    with pytest.raises(CannotStackError, match="only a Wild Draw Four"):
        play(hand, play_card(D2[Colour.BLUE]))


def test_without_stacking_nothing_is_stacked() -> None:
    hand = deal(
        "yellow_1 yellow_2 yellow_3",
        "red_draw_two wild_draw_four yellow_9",
        "blue_draw_two wild_draw_four green_7",
        "green_1 green_2 green_3",
        first="red_7",
        draw=PILE,
    )
    play(hand, play_card(D2[Colour.RED]))
    assert drew(hand) == [(2, 2, "draw_two")] and (hand.phase, hand.to_move) == (Phase.TURN, 3)
    assert observe(hand, 3).penalty == 0


# RULINGS 19 with a stacking play; 21 and 8 where they meet stacking.


def test_a_stacking_play_calls_uno_and_can_be_caught() -> None:
    hand = stacking(
        "yellow_1 yellow_2",
        "red_draw_two green_5",
        "blue_draw_two green_6",
        "green_1 green_2",
    )
    play(hand, play_card(D2[Colour.RED], uno=True))
    assert legal_actions(hand) == [play_card(D2[Colour.BLUE]), play_card(D2[Colour.BLUE], uno=True), ACCEPT]
    play(hand, play_card(D2[Colour.BLUE]))  # no call: the window opens before the penalty passes on
    assert (hand.phase, hand.to_move, hand.turn_seat, hand.penalty) == (Phase.CATCH, 3, 2, 4)
    play(hand, CATCH)
    assert drew(hand) == [(2, 2, "uno_penalty")]
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.STACK, 3, 4)
    play(hand, ACCEPT)
    assert drew(hand)[-1] == (3, 4, "draw_two")


def test_an_uncalled_uno_on_a_stacked_wild_draw_four_is_caught_then_challenged() -> None:
    hand = stacking(
        "yellow_1 yellow_2",
        "wild_draw_four green_5",
        "wild_draw_four blue_6",
        "green_1 green_2",
    )
    play(hand, play_card(WD4, Colour.BLUE, uno=True))
    play(hand, play_card(WD4, Colour.GREEN))  # guilty (blue 6), and no call
    assert (hand.phase, hand.to_move) == (Phase.CATCH, 3)
    play(hand, PASS)
    play(hand, PASS)
    play(hand, PASS)
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.CHALLENGE, 3, 8)
    play(hand, CHALLENGE)
    assert drew(hand) == [(2, 8, "challenge")]


def arrange_stack(held: list[str], top: str, penalty: int, **options: object) -> Hand:
    """Seat 2 to move in STACK: seat 1 played `top`; every other card is in the draw pile."""
    cards = [parse_cards(h) for h in held]
    under = parse_cards(top)
    rest = Counter(standard_deck())
    rest.subtract([*(c for h in cards for c in h), *under])
    config = RulesConfig(players=len(held), **({"stacking": True} | options))  # type: ignore[arg-type]
    return arranged_hand(config, cards=cards, discards=under, draw_pile=sorted(rest.elements()),
                         colour=under[-1].colour, phase=Phase.STACK, to_move=2, penalty=penalty)  # fmt: skip


def test_a_stacking_card_that_ends_the_hand_makes_the_next_player_draw_the_whole_total() -> None:
    hand = arrange_stack(["red_1 red_2", "green_3 green_4", "blue_draw_two", "yellow_5"], "red_draw_two", 4)
    assert hand.turn_seat == 1 and legal_actions(hand) == [play_card(D2[Colour.BLUE]), ACCEPT]
    play(hand, play_card(D2[Colour.BLUE]))
    assert hand.result is not None and hand.result.reason is HandEnd.PLAYED_OUT and hand.result.winner == 2
    assert drew(hand) == [(3, 6, "draw_two")]
    assert len(hand.cards[3]) == 7 and hand.penalty == 0
    assert sum(hand.result.points) == sum(c.rank.points for held in hand.cards for c in held)


def test_a_first_card_draw_two_is_not_stacked_on() -> None:
    hand = stacking(
        "yellow_1 yellow_2 yellow_3",
        "red_draw_two green_5 yellow_9",
        "green_1 green_2 green_3",
        first="blue_draw_two",
    )
    assert drew(hand) == [(1, 2, "draw_two")]
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.TURN, 2, 0)


def test_arranged_stack_positions_are_checked() -> None:
    with pytest.raises(PositionError, match="only with the stacking house rule"):
        arrange_stack(["red_1", "green_3", "blue_draw_two", "yellow_5"], "red_draw_two", 2, stacking=False)
    with pytest.raises(PositionError, match="multiple of 2 from 2 to 16"):
        arrange_stack(["red_1", "green_3", "blue_draw_two", "yellow_5"], "red_draw_two", 3)
    with pytest.raises(PositionError, match="must be a Draw Two"):
        arrange_stack(["red_1", "green_3", "blue_draw_two", "yellow_5"], "red_3", 2)
    hand = arrange_stack(["red_1", "green_3", "blue_draw_two", "yellow_5"], "red_draw_two", 10)
    assert observe(hand, 0).penalty == 10 and names(observe(hand, 2).cards) == ["blue_draw_two"]
