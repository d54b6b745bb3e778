"""RULINGS 1-2: the deck and the table."""

from collections import Counter

import pytest

from uno_arena.rules import (
    COLOURS,
    DECK_SIZE,
    ConfigError,
    DeckError,
    Rank,
    RulesConfig,
    card,
    parse_card,
    stacked_deck,
    standard_deck,
)
from uno_arena.rules.card import UnknownCardError


def test_deck_has_108_cards() -> None:
    assert len(standard_deck()) == DECK_SIZE == 108


@pytest.mark.parametrize("colour", COLOURS)
def test_each_colour_has_one_zero_and_two_of_everything_else(colour: object) -> None:
    counts = Counter(c.rank for c in standard_deck() if c.colour is colour)
    assert counts[Rank.ZERO] == 1
    assert all(counts[r] == 2 for r in Rank if not r.is_wild and r is not Rank.ZERO)
    assert sum(counts.values()) == 25


def test_four_wilds_and_four_wild_draw_fours() -> None:
    counts = Counter(c.rank for c in standard_deck() if c.colour is None)
    assert counts == {Rank.WILD: 4, Rank.WILD_DRAW_FOUR: 4}


def test_cards_are_interned_and_named() -> None:
    assert parse_card("red_7") is card(COLOURS[0], Rank.SEVEN)
    assert str(parse_card("blue_draw_two")) == "blue_draw_two"
    with pytest.raises(UnknownCardError):
        parse_card("purple_3")


@pytest.mark.parametrize("players", range(2, 11))
def test_two_to_ten_players(players: int) -> None:
    assert RulesConfig(players=players).players == players


@pytest.mark.parametrize("players", [0, 1, 11])
def test_other_player_counts_are_refused(players: int) -> None:
    with pytest.raises(ConfigError, match="players"):
        RulesConfig(players=players)


def test_explicit_deck_must_be_the_whole_deck() -> None:
    with pytest.raises(DeckError, match="more copies"):
        stacked_deck(0, [[parse_card("red_0")], [parse_card("red_0")]], parse_card("red_1"))
