"""RULINGS 11-14: a turn, matching, drawing and the coloured action cards."""

import pytest

from uno_arena.rules import (
    DRAW,
    KEEP,
    CardDoesNotMatchError,
    Colour,
    NotDrawnCardError,
    Phase,
    RulesConfig,
    arranged_hand,
    legal_actions,
    parse_card,
    play,
    play_card,
    standard_deck,
)
from uno_arena.rules.event import Drew, Kept, Skipped

from .table import deal, events_of, names


def plays(hand: object) -> list[str]:
    return [str(a) for a in legal_actions(hand) if a.card is not None]  # type: ignore[arg-type]


def test_match_by_colour_number_or_symbol() -> None:
    hand = deal("blue_1 blue_2 blue_3 blue_4", "red_2 blue_7 green_skip yellow_4", first="red_7")
    assert plays(hand) == ["play red_2", "play blue_7"]


def test_symbol_matches_symbol() -> None:
    # first card skips seat 0, so seat 1 answers the green skip
    hand = deal(
        "blue_1 blue_2 blue_3 blue_4",
        "red_2 blue_skip green_3 yellow_4",
        "red_0 red_1 red_3 red_4",
        first="green_skip",
        dealer=2,
    )
    assert plays(hand) == ["play green_3", "play blue_skip"]


def test_wild_playable_any_time_and_names_any_colour() -> None:
    hand = deal("blue_1 blue_2", "red_5 wild", first="red_7")
    expected = ["play red_5", "play red_5 uno"]
    expected += [f"play wild as {c.value}{uno}" for c in Colour for uno in ("", " uno")]
    assert plays(hand) == expected
    wilds = [a for a in legal_actions(hand) if str(a.card) == "wild" and not a.uno]
    assert [a.colour for a in wilds] == list(Colour)
    play(hand, play_card(parse_card("wild"), Colour.RED, uno=True))
    assert hand.colour is Colour.RED  # naming the current colour is allowed


def test_wild_draw_four_offered_even_when_illegal() -> None:
    # seat 1 holds a red card, so its Wild Draw Four is illegal but still playable (RULINGS 12)
    hand = deal("blue_1 blue_2 blue_3", "red_5 wild_draw_four green_1", first="red_7")
    assert any(str(a.card) == "wild_draw_four" for a in legal_actions(hand))


def test_unmatched_card_is_refused() -> None:
    hand = deal("blue_1 blue_2", "green_5 yellow_4", first="red_7")
    with pytest.raises(CardDoesNotMatchError):
        play(hand, play_card(parse_card("green_5")))
    assert legal_actions(hand) == [DRAW]


def test_may_draw_even_with_a_playable_card_then_play_only_the_drawn_card() -> None:
    hand = deal("blue_1 blue_2", "red_5 red_6", first="red_7", draw="red_9")
    assert DRAW in legal_actions(hand)
    play(hand, DRAW)
    assert hand.phase is Phase.DRAWN
    assert names(hand.cards[1]) == ["red_5", "red_6", "red_9"]
    assert [str(a) for a in legal_actions(hand)] == ["play red_9", "keep"]
    with pytest.raises(NotDrawnCardError):
        play(hand, play_card(parse_card("red_5")))
    play(hand, play_card(parse_card("red_9")))
    assert hand.to_move == 0


def test_keeping_the_drawn_card_ends_the_turn() -> None:
    hand = deal("blue_1 blue_2", "red_5 red_6", first="red_7", draw="red_9")
    play(hand, DRAW)
    play(hand, KEEP)
    assert events_of(hand, Kept) == [Kept(1)]
    assert hand.to_move == 0
    assert len(hand.cards[1]) == 3


def test_an_unplayable_drawn_card_is_kept_as_a_playable_one_is() -> None:
    """The drawer is asked after every draw, KEEP its only action when the card does not play, so that
    neither the phase nor a host's timing tells the others which it was (RULINGS 29)."""
    hand = deal("blue_1 blue_2", "red_5 red_6", first="red_7", draw="green_2")
    play(hand, DRAW)
    assert (hand.phase, hand.to_move, hand.drawn) == (Phase.DRAWN, 1, parse_card("green_2"))
    assert legal_actions(hand) == [KEEP]
    with pytest.raises(CardDoesNotMatchError, match="green_2 does not match red_7"):
        play(hand, play_card(parse_card("green_2")))
    with pytest.raises(NotDrawnCardError):
        play(hand, play_card(parse_card("red_5")))
    play(hand, KEEP)
    assert (hand.phase, hand.to_move) == (Phase.TURN, 0)
    assert events_of(hand, Kept) == [Kept(1)]  # as after keeping a playable card
    assert [str(a) for a in hand.actions] == ["draw", "keep"]


def test_a_draw_that_finds_no_card_ends_the_turn_at_once() -> None:
    """Every card in a hand but the top one: nothing to draw, nothing to reshuffle. `Drew` with count 0
    tells everyone, so there is no decision to hide (RULINGS 16, 29)."""
    deck = standard_deck()
    top = parse_card("red_7")
    deck.remove(top)
    hand = arranged_hand(RulesConfig(players=2), cards=[deck[:54], deck[54:]], discards=[top], draw_pile=[],
                         colour=Colour.RED, phase=Phase.TURN, to_move=1)  # fmt: skip
    play(hand, DRAW)
    assert events_of(hand, Drew)[-1].count == 0
    assert (hand.phase, hand.to_move, events_of(hand, Kept)) == (Phase.TURN, 0, [Kept(1)])


def test_draw_until_playable_option() -> None:
    hand = deal(
        "blue_1 blue_2",
        "green_5 green_6",
        first="red_7",
        draw="green_2 blue_3 red_1",
        draw_until_playable=True,
    )
    play(hand, DRAW)
    assert [e.count for e in events_of(hand, Drew)] == [3]
    assert hand.drawn is parse_card("red_1")
    assert hand.phase is Phase.DRAWN


THREE = ("red_1 red_2 red_3", "red_4 red_5 red_6", "red_7 red_8 red_9")


def test_skip_next_player_loses_their_turn() -> None:
    hand = deal(*THREE, first="red_skip", dealer=2)  # seat 0 skipped, seat 1 plays
    play(hand, play_card(parse_card("red_4")))
    assert hand.to_move == 2
    hand = deal("red_skip red_1 red_2", "red_4 red_5 red_6", "red_7 red_8 red_9", first="red_0", dealer=2)
    play(hand, play_card(parse_card("red_skip")))
    assert events_of(hand, Skipped)[-1].seat == 1
    assert hand.to_move == 2


def test_reverse_flips_direction() -> None:
    hand = deal("red_reverse red_1 red_2", "red_4 red_5 red_6", "red_7 red_8 red_9", first="red_0", dealer=2)
    play(hand, play_card(parse_card("red_reverse")))
    assert hand.direction == -1
    assert hand.to_move == 2


def test_reverse_with_two_players_acts_as_skip() -> None:
    hand = deal("red_reverse red_1 red_2", "red_4 red_5 red_6", first="red_0", dealer=1)
    play(hand, play_card(parse_card("red_reverse")))
    assert hand.to_move == 0
    assert events_of(hand, Skipped)[-1].seat == 1


def test_draw_two_next_draws_two_and_loses_turn() -> None:
    hand = deal("red_draw_two red_1 red_2", "red_4 red_5 red_6", "red_7 red_8 red_9", first="red_0", dealer=2)
    play(hand, play_card(parse_card("red_draw_two")))
    assert len(hand.cards[1]) == 5
    assert hand.to_move == 2
