"""RULINGS 29: what a seat may see."""

import random
from dataclasses import fields

import pytest

from uno_arena.rules import (
    DRAW,
    KEEP,
    Colour,
    Event,
    Hand,
    Match,
    Observation,
    Phase,
    RulesConfig,
    apply,
    legal_actions,
    new_match,
    observe,
    parse_card,
    play,
    play_card,
    public,
    seen_by,
)
from uno_arena.rules.event import Dealt, DrawReason, Drew, Kept

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
        "colour", "discards", "hand_sizes", "draw_pile_size", "drawn", "penalty", "shown", "turn", "scores",
        "target_score", "hand_number", "legal_actions", "match_id",
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


# RULINGS 29: after a draw, the others learn only that the drawer drew one card and then
# played it or ended its turn; whether a kept card could have been played stays hidden.
# The reproduction of issue 16: seat 0 (dealer 2) holds red 1, blue 2, blue 3 on a red 7.
LEAK_HANDS = ("red_1 blue_2 blue_3", "yellow_1 yellow_2 yellow_3", "green_1 green_2 green_3")
PLAYABLE_FIRST = "green_7 blue_9"  # green 7 matches the 7: seat 0 may play it, and keeps it
UNPLAYABLE_FIRST = "blue_9 green_7"  # blue 9 matches nothing: the turn ends with the draw


def _drawn_and_kept(draw: str) -> Hand:
    hand = deal(*LEAK_HANDS, first="red_7", draw=draw, dealer=2)
    assert hand.to_move == 0 and hand.phase is Phase.TURN
    play(hand, DRAW)
    if hand.phase is Phase.DRAWN:
        play(hand, KEEP)
    return hand


def _seen(hand: Hand, seat: int) -> tuple[Observation, list[Event]]:
    return observe(hand, seat), [seen_by(e, seat) for e in hand.events]


def test_the_issue_16_reproduction_shows_the_others_the_same_either_way() -> None:
    kept_playable = deal(*LEAK_HANDS, first="red_7", draw=PLAYABLE_FIRST, dealer=2)
    play(kept_playable, DRAW)
    assert kept_playable.phase is Phase.DRAWN  # seat 0 is asked: play the green 7, or keep it
    assert observe(kept_playable, 0).phase is Phase.DRAWN
    assert observe(kept_playable, 0).drawn is parse_card("green_7")
    for seat in (1, 2):  # the others see seat 0's turn going on, nothing about the card
        assert observe(kept_playable, seat).phase is Phase.TURN
        assert observe(kept_playable, seat).to_move == observe(kept_playable, seat).turn_seat == 0
        assert observe(kept_playable, seat).drawn is None
    play(kept_playable, KEEP)
    unplayable = _drawn_and_kept(UNPLAYABLE_FIRST)
    assert [str(a) for a in unplayable.actions] == ["draw", "keep"]  # asked too, KEEP its only action
    assert [str(a) for a in kept_playable.actions] == ["draw", "keep"]

    for seat in (1, 2):
        assert _seen(kept_playable, seat) == _seen(unplayable, seat)
        assert observe(unplayable, seat).phase is Phase.TURN and observe(unplayable, seat).to_move == 1
    assert [public(e) for e in kept_playable.events] == [public(e) for e in unplayable.events]
    hidden_draw = Drew(0, 1, None, DrawReason.DRAW)
    assert [public(e) for e in unplayable.events[-2:]] == [hidden_draw, Kept(0)]
    # The drawer's own view stays complete, and so does the replay.
    assert kept_playable.events[-2] == Drew(0, 1, (parse_card("green_7"),), DrawReason.DRAW)
    assert unplayable.events[-2] == Drew(0, 1, (parse_card("blue_9"),), DrawReason.DRAW)
    assert _seen(kept_playable, 0) != _seen(unplayable, 0)
    for hand, draw in ((kept_playable, PLAYABLE_FIRST), (unplayable, UNPLAYABLE_FIRST)):
        again = deal(*LEAK_HANDS, first="red_7", draw=draw, dealer=2)
        for action in hand.actions:
            play(again, action)
        assert again.events == hand.events


def test_while_a_seat_decides_after_a_draw_the_others_cannot_tell_whether_its_card_plays() -> None:
    """Issue 28's finding, its exact position: three seats, dealer 2, seat 0 holds red 1, blue 2,
    blue 3 on a red 7 and draws a green 7 (it plays) or a blue 9 (it does not). Seat 1's observation
    before and after the DRAW showed to_move 0 with sizes (4, 3, 3) only for the green 7, since an
    unplayable card passed the turn at once. Every draw now asks the drawer (phase DRAWN, KEEP its only
    action when the card does not play), so nobody else sees a difference, at any moment."""
    seen: dict[str, list[object]] = {}
    for draw in (PLAYABLE_FIRST, UNPLAYABLE_FIRST):
        hand = deal(*LEAK_HANDS, first="red_7", draw=draw, dealer=2)
        before = [_seen(hand, seat) for seat in (1, 2)]
        play(hand, DRAW)
        assert (hand.phase, hand.to_move) == (Phase.DRAWN, 0)
        seen[draw] = [before, [_seen(hand, seat) for seat in (1, 2)], [public(e) for e in hand.events]]
        watching = observe(hand, 1)
        assert (watching.to_move, watching.turn_seat, watching.phase) == (0, 0, Phase.TURN)
        assert (watching.turn, watching.hand_sizes, watching.drawn) == (1, (4, 3, 3), None)
    assert seen[PLAYABLE_FIRST] == seen[UNPLAYABLE_FIRST]
    # only the drawer knows: its card, and whether it may play it
    playable = deal(*LEAK_HANDS, first="red_7", draw=PLAYABLE_FIRST, dealer=2)
    unplayable = deal(*LEAK_HANDS, first="red_7", draw=UNPLAYABLE_FIRST, dealer=2)
    play(playable, DRAW)
    play(unplayable, DRAW)
    assert [str(a) for a in observe(playable, 0).legal_actions] == ["play green_7", "keep"]
    assert [str(a) for a in observe(unplayable, 0).legal_actions] == ["keep"]
    assert (observe(playable, 0).drawn, observe(unplayable, 0).drawn) == (
        parse_card("green_7"),
        parse_card("blue_9"),
    )


def _what_others_see(match: Match, drawer: int, since: int) -> list[object]:
    """Every other seat's observation and new events, and the spectators' new events."""
    seen: list[object] = []
    for seat in range(match.config.players):
        if seat != drawer:
            seen += [observe(match, seat), [seen_by(e, seat) for e in match.events[since:]]]
    return [*seen, [public(e) for e in match.events[since:]]]


def _check_draw_hides_playability(match: Match, rng: random.Random) -> bool | None:
    """Draw now in a copy of `match`, and in a copy whose next card is swapped with one of the
    other playability: the others must see the same. Whether the real next card was playable
    (None when no card of the other kind is left in the draw pile)."""
    pile = match.hand.draw_pile
    playable = match.hand.playable(pile[-1])
    swaps = [i for i, c in enumerate(pile[:-1]) if match.hand.playable(c) is not playable]
    if not swaps:
        return None
    since, drawer = len(match.events), match.hand.to_move
    as_dealt, swapped = match.clone(), match.clone()
    other = swapped.hand.draw_pile
    i = rng.choice(swaps)
    other[i], other[-1] = other[-1], other[i]
    for trial in (as_dealt, swapped):
        apply(trial, DRAW)  # the others' view while the drawer decides, and after it kept the card
    assert _what_others_see(as_dealt, drawer, since) == _what_others_see(swapped, drawer, since)
    for trial in (as_dealt, swapped):
        apply(trial, KEEP)
    assert _what_others_see(as_dealt, drawer, since) == _what_others_see(swapped, drawer, since)
    return playable


@pytest.mark.parametrize("players", [2, 7, *(pytest.param(n, marks=pytest.mark.slow) for n in (3, 4))])
def test_what_others_see_after_a_draw_does_not_depend_on_the_drawn_card(players: int) -> None:
    """Random matches; before every draw from a non-empty pile, the check above.

    Not with `draw_until_playable`: there how many cards were drawn is public and
    tells that the last one plays (unless the pile ran out), as the option implies.
    """
    rng = random.Random(players)
    config = RulesConfig(players=players, target_score=200, max_hands_per_match=6)
    checked = {True: 0, False: 0}
    for seed in range(8):
        match = new_match(config, random.Random(seed))
        while match.result is None:
            legal = legal_actions(match)
            action = DRAW if DRAW in legal and rng.random() < 0.4 else rng.choice(legal)
            if action is DRAW and match.hand.draw_pile:
                outcome = _check_draw_hides_playability(match, rng)
                if outcome is not None:
                    checked[outcome] += 1
            apply(match, action)
    assert min(checked.values()) >= 200, checked
