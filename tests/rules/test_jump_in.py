"""RULINGS 26, the `jump_in` house rule, sentence by sentence (with 19, 25 and 29 where they meet it).

Four seats unless said otherwise; seat 1 plays on a red 3 (`house.arrange`), so the window
after its play asks seats 2, 3 and 0 in that order.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from uno_arena.rules import (
    ACCEPT,
    CATCH,
    CHALLENGE,
    DRAW,
    PASS,
    CardNotHeldError,
    Colour,
    Hand,
    HandEnd,
    NotIdenticalError,
    NotYourTurnError,
    Phase,
    RulesConfig,
    WrongDecisionError,
    apply,
    legal_actions,
    new_match,
    observe,
    parse_card,
    play,
    play_card,
)
from uno_arena.rules.event import (
    CatchPassed,
    Caught,
    DirectionChanged,
    Drew,
    Played,
    Skipped,
)

from .house import arrange, flip_holding, identical_to, what_others_see
from .table import deal, events_of

RED_5 = parse_card("red_5")


def jump_in(*held: str, top: str = "red_3", **options: Any) -> Hand:
    return arrange(*held, top=top, jump_in=True, **options)


def window(hand: Hand) -> tuple[Phase, int, int]:
    """(phase, seat asked, seat whose play opened the window)."""
    return hand.phase, hand.to_move, hand.turn_seat


def played(hand: Hand) -> list[tuple[int, str, bool]]:
    return [(e.seat, str(e.card), e.jump_in) for e in events_of(hand, Played)]


# "after a card is played, any other player holding a card identical to it (same colour and same
# number or symbol; never a Wild) may play it out of turn."
# "The players are offered it in turn order starting from the next player; the first to accept
# plays it, its effect applies as if it were their turn, and play continues from them; the players
# in between lose their turn."


def test_a_jump_in_skips_the_seats_in_between() -> None:
    hand = jump_in(
        "green_1 green_2 green_4",
        "red_5 blue_8 yellow_9",
        "blue_5 red_6 yellow_2",  # same number, same colour: neither is identical
        "red_5 green_6 yellow_4",
    )
    play(hand, play_card(RED_5))
    assert window(hand) == (Phase.JUMP_IN, 2, 1)
    assert legal_actions(hand) == [PASS]
    play(hand, PASS)
    assert window(hand) == (Phase.JUMP_IN, 3, 1)
    assert legal_actions(hand) == [play_card(RED_5), PASS]
    play(hand, play_card(RED_5))
    assert hand.events[-1] == Played(3, RED_5, None, False, 2, jump_in=True)
    assert played(hand) == [(1, "red_5", False), (3, "red_5", True)]
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.TURN, 0, 0)  # seat 2 lost its turn
    assert [len(cards) for cards in hand.cards] == [3, 2, 3, 2]
    assert hand.turns == 2  # seat 1's turn and seat 0's: the jump-in is not a turn begun


def test_the_window_asks_every_other_seat_in_turn_order_and_a_pass_says_nothing() -> None:
    hand = jump_in(
        "green_1 green_2",
        "red_5 blue_8",
        "blue_5 red_6",
        "yellow_4 yellow_5",
        "green_6 green_7",
        draw="red_5",  # the other red 5 is in the draw pile: it might have been anywhere
    )
    play(hand, play_card(RED_5, uno=True))
    events = len(hand.events)
    asked = []
    while hand.phase is Phase.JUMP_IN:
        asked.append(hand.to_move)
        assert legal_actions(hand) == [PASS]  # nobody holds a red 5: pass is all there is
        assert all(observe(hand, seat).phase is Phase.JUMP_IN for seat in range(5))
        play(hand, PASS)
    assert asked == [2, 3, 4, 0]
    assert len(hand.events) == events  # no event for a pass: it tells nobody anything
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


def test_only_an_identical_card_may_jump_in() -> None:
    hand = jump_in(
        "green_1 green_2 green_4",
        "red_5 blue_8 yellow_9",
        "blue_5 red_6 yellow_2",
        "red_5 green_6 yellow_4",
    )
    play(hand, play_card(RED_5))
    before = (hand.phase, hand.to_move, len(hand.events))
    for other in ("blue_5", "red_6"):
        with pytest.raises(
            NotIdenticalError, match=f"play {other}: only a card identical to red_5 may jump in"
        ):
            play(hand, play_card(parse_card(other)))
    with pytest.raises(CardNotHeldError, match="red_5 is not in the hand"):
        play(hand, play_card(RED_5))  # seat 3 holds it, not seat 2
    with pytest.raises(WrongDecisionError, match="draw does not answer jump_in: expected pass, play"):
        play(hand, DRAW)
    with pytest.raises(NotYourTurnError, match="seat 3 acted, but seat 2 is to move"):
        play(hand, play_card(RED_5), seat=3)  # the holder waits to be asked
    assert (hand.phase, hand.to_move, len(hand.events)) == before


def test_a_jumped_in_skip_skips_as_if_it_were_the_jumpers_turn() -> None:
    hand = jump_in(
        "green_1 green_2 green_4",
        "red_skip blue_8 yellow_9",
        "blue_5 red_6 yellow_2",
        "red_skip green_6 yellow_4",
    )
    play(hand, play_card(parse_card("red_skip")))
    assert events_of(hand, Skipped) == [Skipped(2)]
    assert window(hand) == (Phase.JUMP_IN, 2, 1)  # the skipped seat is asked first
    play(hand, PASS)
    play(hand, play_card(parse_card("red_skip")))
    assert events_of(hand, Skipped) == [Skipped(2), Skipped(0)]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 1)


def test_a_jumped_in_reverse_turns_play_back_from_the_jumper() -> None:
    hand = jump_in(
        "green_1 green_2 green_4",
        "red_reverse blue_8 yellow_9",
        "red_reverse red_6 yellow_2",
        "blue_5 green_6 yellow_4",
    )
    play(hand, play_card(parse_card("red_reverse")))
    assert window(hand) == (Phase.JUMP_IN, 0, 1)  # in the new direction: 0, then 3, then 2
    play(hand, PASS)
    assert hand.to_move == 3
    play(hand, PASS)
    assert hand.to_move == 2
    play(hand, play_card(parse_card("red_reverse")))
    assert events_of(hand, DirectionChanged) == [DirectionChanged(-1), DirectionChanged(1)]
    assert (hand.phase, hand.to_move, hand.direction) == (Phase.TURN, 3, 1)


def test_a_jump_in_may_go_out() -> None:
    hand = jump_in("green_1 green_2", "red_5 blue_8", "blue_5 red_6", "red_5")
    play(hand, play_card(RED_5, uno=True))
    play(hand, PASS)
    assert legal_actions(hand) == [play_card(RED_5), PASS]
    play(hand, play_card(RED_5))
    assert hand.result is not None
    assert (hand.result.reason, hand.result.winner) == (HandEnd.PLAYED_OUT, 3)


# "never a Wild"; windows that cannot hold a copy; first cards.


def test_no_window_after_a_wild() -> None:
    hand = jump_in("green_1 green_2", "wild blue_8", "blue_5 wild", "wild red_6")
    play(hand, play_card(parse_card("wild"), Colour.BLUE, uno=True))
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


def test_no_window_once_every_copy_is_in_the_discards() -> None:
    hand = jump_in(
        "green_1 green_2", "red_5 blue_8", "blue_5 red_6", "green_6 green_7", top="red_3", under="red_5"
    )
    play(hand, play_card(RED_5, uno=True))
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)
    hand = jump_in("green_1 green_2", "red_0 blue_8", "blue_5 red_6", "green_6 green_7")
    play(hand, play_card(parse_card("red_0"), uno=True))  # a 0 has no twin
    assert (hand.phase, hand.to_move) == (Phase.TURN, 2)


def test_no_window_after_a_first_card() -> None:
    hand = deal("green_1 green_2", "red_4 blue_8", "red_5 red_6", first="red_5", jump_in=True)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 1)  # seat 2 holds the twin but is not asked


def test_the_catch_window_comes_before_the_jump_in_window() -> None:
    hand = jump_in("green_1 green_2", "red_5 blue_8", "blue_5 red_6", "red_5 green_7")
    play(hand, play_card(RED_5))  # leaves one card, no call
    assert (hand.phase, hand.to_move) == (Phase.CATCH, 2)
    for _ in range(3):
        play(hand, PASS)
    assert events_of(hand, CatchPassed) == [CatchPassed(2), CatchPassed(3), CatchPassed(0)]
    assert window(hand) == (Phase.JUMP_IN, 2, 1)


# "No jump-in while a draw penalty or a challenge is pending (a Draw Two may be jumped only with
# `stacking`, which then adds to the penalty)."


def test_no_jump_in_on_a_draw_two_without_stacking() -> None:
    hand = jump_in(
        "green_1 green_2 green_4",
        "red_draw_two blue_8 yellow_9",
        "blue_5 red_6 yellow_2",
        "red_draw_two green_6 yellow_4",
    )
    play(hand, play_card(parse_card("red_draw_two")))
    assert [(e.seat, e.count, e.reason) for e in events_of(hand, Drew)] == [(2, 2, "draw_two")]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 3)  # the penalty was paid: no window


def test_jumping_in_on_a_draw_two_with_stacking_adds_to_the_penalty() -> None:
    hand = jump_in(
        "green_1 green_2 green_4",
        "red_draw_two blue_8 yellow_9",
        "blue_draw_two red_6 yellow_2",  # may stack, but holds no red Draw Two to jump in with
        "red_draw_two green_6 yellow_4",
        stacking=True,
    )
    play(hand, play_card(parse_card("red_draw_two")))
    assert window(hand) == (Phase.JUMP_IN, 2, 1) and hand.penalty == 2
    assert legal_actions(hand) == [PASS]
    with pytest.raises(NotIdenticalError):
        play(hand, play_card(parse_card("blue_draw_two")))
    play(hand, PASS)
    play(hand, play_card(parse_card("red_draw_two")))  # seat 3 jumps in: seat 2 escapes the penalty
    assert (hand.phase, hand.to_move, hand.turn_seat, hand.penalty) == (Phase.STACK, 0, 3, 4)
    play(hand, ACCEPT)
    assert [(e.seat, e.count, e.reason) for e in events_of(hand, Drew)] == [(0, 4, "draw_two")]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 1)
    assert [len(cards) for cards in hand.cards] == [7, 2, 3, 2]


def test_with_stacking_the_player_hit_decides_after_the_window() -> None:
    hand = jump_in(
        "green_1 green_2",
        "red_draw_two blue_8",
        "blue_draw_two red_6",
        "green_6 green_7",
        stacking=True,
        draw="red_draw_two",
    )
    play(hand, play_card(parse_card("red_draw_two"), uno=True))
    for _ in range(3):
        play(hand, PASS)
    assert (hand.phase, hand.to_move, hand.penalty) == (Phase.STACK, 2, 2)
    blue = parse_card("blue_draw_two")
    assert legal_actions(hand) == [play_card(blue), play_card(blue, uno=True), ACCEPT]


def test_no_jump_in_while_a_challenge_is_pending() -> None:
    hand = jump_in(
        "green_1 green_2",
        "wild_draw_four blue_8",
        "blue_5 red_6",
        "wild_draw_four green_7",
        stacking=True,
    )
    play(hand, play_card(parse_card("wild_draw_four"), Colour.GREEN, uno=True))
    assert (hand.phase, hand.to_move) == (Phase.CHALLENGE, 2)
    assert legal_actions(hand) == [CHALLENGE, ACCEPT]
    with pytest.raises(NotYourTurnError):
        play(hand, play_card(parse_card("wild_draw_four"), Colour.RED), seat=3)
    play(hand, ACCEPT)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 3)  # after the penalty, no window either


# "A jump-in play must call UNO like any other (rule 19)."


def test_a_jump_in_leaving_one_card_without_uno_is_caught() -> None:
    hand = jump_in(
        "green_1 green_2 green_4", "red_5 blue_8 yellow_9", "blue_5 red_6 yellow_2", "red_5 green_6"
    )
    play(hand, play_card(RED_5))
    play(hand, PASS)
    assert legal_actions(hand) == [play_card(RED_5), play_card(RED_5, uno=True), PASS]
    play(hand, play_card(RED_5))
    assert (hand.phase, hand.to_move, hand.turn_seat) == (Phase.CATCH, 0, 3)  # from the jumper's next
    play(hand, CATCH)
    assert events_of(hand, Caught) == [Caught(0, 3)]
    assert [(e.seat, e.count, e.reason) for e in events_of(hand, Drew)] == [(3, 2, "uno_penalty")]
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)


def test_a_jump_in_calling_uno_is_not_caught() -> None:
    hand = jump_in(
        "green_1 green_2 green_4", "red_5 blue_8 yellow_9", "blue_5 red_6 yellow_2", "red_5 green_6"
    )
    play(hand, play_card(RED_5))
    play(hand, PASS)
    play(hand, play_card(RED_5, uno=True))
    assert hand.events[-1] == Played(3, RED_5, None, True, 1, jump_in=True)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)


# RULINGS 29: the window asks holders and non-holders alike, so nobody learns who holds the card.


def test_the_others_see_the_same_window_whether_or_not_the_seat_asked_holds_the_card() -> None:
    holds = jump_in("green_1 green_2", "red_5 blue_8", "blue_5 red_6", "red_5 green_7")
    lacks = jump_in("green_1 green_2", "red_5 blue_8", "blue_5 red_6", "yellow_5 green_7", draw="red_5")
    for hand in (holds, lacks):
        play(hand, play_card(RED_5, uno=True))
        play(hand, PASS)
        assert window(hand) == (Phase.JUMP_IN, 3, 1)
    assert legal_actions(holds) != legal_actions(lacks)
    assert what_others_see(holds, 3, 0)[:-1] != [] and what_others_see(holds, 3, 0) == what_others_see(
        lacks, 3, 0
    )
    for hand in (holds, lacks):
        play(hand, PASS)
    assert what_others_see(holds, 3, 0) == what_others_see(lacks, 3, 0)


@pytest.mark.parametrize("players", [2, *(pytest.param(n, marks=pytest.mark.slow) for n in (3, 5))])
def test_what_others_see_in_a_window_does_not_depend_on_the_seat_asked_holding_the_card(players: int) -> None:
    """Random matches; at every window, a copy where the seat asked holds the identical card if it
    did not (or none if it did), card for card with the draw pile: the others see the same, before
    and after it passes."""
    rng = random.Random(players)
    config = RulesConfig(
        players=players, jump_in=True, stacking=True, target_score=200, max_hands_per_match=6
    )
    checked: Counter[bool] = Counter()
    for seed in range(6):
        match = new_match(config, random.Random(seed))
        while match.result is None:
            hand = match.hand
            if hand.phase is Phase.JUMP_IN:
                seat, top = hand.to_move, hand.top
                twin = match.clone()
                if flip_holding(twin.hand, seat, identical_to(top), rng):
                    since = len(match.events)
                    real = match.clone()
                    assert what_others_see(real, seat, since) == what_others_see(twin, seat, since)
                    apply(real, PASS)
                    apply(twin, PASS)
                    assert what_others_see(real, seat, since) == what_others_see(twin, seat, since)
                    checked[top in hand.cards[seat]] += 1
            apply(match, rng.choice(legal_actions(match)))
    assert min(checked[True], checked[False]) >= 20, checked
