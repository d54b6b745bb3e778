"""The rules configuration: options, defaults and clear errors."""

import enum
from dataclasses import replace
from typing import Any

import pytest

from uno_arena.rules import ConfigError, DealerRule, FirstWildChooser, FirstWildDrawFour, RulesConfig, Scoring

DEFAULTS = {
    "players": 4,
    "dealer": DealerRule.DRAW_EACH_HAND,
    "hand_size": 7,
    "first_wild_chooser": FirstWildChooser.DEALER,
    "first_wild_draw_four": FirstWildDrawFour.DRAW_FOUR,
    "draw_until_playable": False,
    "uno_penalty": 2,
    "target_score": 500,
    "scoring": Scoring.WINNER_TAKES,
    "max_turns_per_hand": 2000,
    "max_hands_per_match": 200,
    "stacking": False,
    "jump_in": False,
    "seven_zero": False,
    "multi_play": False,
}


def test_defaults_are_the_rulings() -> None:
    config = RulesConfig()
    assert {name: getattr(config, name) for name in DEFAULTS} == DEFAULTS


def test_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        RulesConfig().players = 3  # type: ignore[misc]


def test_round_trips_through_plain_values() -> None:
    config = RulesConfig(players=3, scoring=Scoring.PENALTY_POINTS, uno_penalty=4)
    assert RulesConfig.from_dict(config.to_dict()) == config
    assert config.to_dict()["scoring"] == "penalty_points"


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"players": 12}, "players"),
        ({"scoring": "most_points"}, "scoring"),
        ({"target_score": "500"}, "target_score"),
        ({"uno_penalty": -1}, "uno_penalty"),
        ({"draw_until_playable": 1}, "draw_until_playable"),
        ({"colour_blind": True}, "colour_blind"),
        ({"jump_in": "yes"}, "jump_in"),
        ({"stacking": 1}, "stacking"),
        ({"hand_size": 20, "players": 10}, "hand_size"),
    ],
)
def test_bad_values_name_the_field(values: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=f"^{field}:"):
        RulesConfig.from_dict(values)


# Every option: values the constructor must take, and values of the wrong type or an unknown
# choice it must refuse. House rules accept only False until they are implemented.
VALID: dict[str, list[Any]] = {
    "players": [2, 3, 10],
    "dealer": [*DealerRule, *(m.value for m in DealerRule)],
    "hand_size": [1, 5, 10],
    "first_wild_chooser": [*FirstWildChooser, *(m.value for m in FirstWildChooser)],
    "first_wild_draw_four": [*FirstWildDrawFour, *(m.value for m in FirstWildDrawFour)],
    "draw_until_playable": [True, False],
    "uno_penalty": [0, 4],
    "target_score": [1, 50],
    "scoring": [*Scoring, *(m.value for m in Scoring)],
    "max_turns_per_hand": [1, 100],
    "max_hands_per_match": [1, 3],
    "stacking": [False, True],
    "jump_in": [False, True],
    "seven_zero": [False, True],
    "multi_play": [False, True],
}
_NOT_INTS = ["4", 4.0, True, None]
_NOT_BOOLS = [1, 0, "true", None]
_NOT_CHOICES = ["bogus", "", 1, None, True]
INVALID: dict[str, list[Any]] = {
    "players": [*_NOT_INTS, 1, 11],
    "dealer": [*_NOT_CHOICES, "DRAW_EACH_HAND", Scoring.WINNER_TAKES],
    "hand_size": [*_NOT_INTS, 0],
    "first_wild_chooser": [*_NOT_CHOICES, "first player"],
    "first_wild_draw_four": [*_NOT_CHOICES, "draw four"],
    "draw_until_playable": _NOT_BOOLS,
    "uno_penalty": [*_NOT_INTS, -1],
    "target_score": [*_NOT_INTS, 0],
    "scoring": [*_NOT_CHOICES, "most_points"],
    "max_turns_per_hand": [*_NOT_INTS, 0],
    "max_hands_per_match": [*_NOT_INTS, 0],
    "stacking": _NOT_BOOLS,
    "jump_in": _NOT_BOOLS,
    "seven_zero": _NOT_BOOLS,
    "multi_play": _NOT_BOOLS,
}


def test_every_option_is_covered() -> None:
    assert set(VALID) == set(INVALID) == set(DEFAULTS)


@pytest.mark.parametrize(("field", "value"), [(f, v) for f, values in VALID.items() for v in values])
def test_constructor_converts_every_option(field: str, value: Any) -> None:
    config = RulesConfig(**{field: value})
    stored = getattr(config, field)
    kind = type(DEFAULTS[field])
    assert type(stored) is kind, f"{field}={value!r} stored as {type(stored).__name__}"
    assert stored == value
    if isinstance(stored, enum.Enum):
        assert stored is kind(value)
    assert RulesConfig.from_dict({field: value}) == config
    assert replace(RulesConfig(), **{field: value}) == config


@pytest.mark.parametrize(("field", "value"), [(f, v) for f, values in INVALID.items() for v in values])
def test_constructor_refuses_what_from_dict_refuses(field: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=f"^{field}:") as by_keyword:
        RulesConfig(**{field: value})
    with pytest.raises(ConfigError) as by_dict:
        RulesConfig.from_dict({field: value})
    assert str(by_keyword.value) == str(by_dict.value)


def test_strings_and_enums_make_the_same_config() -> None:
    by_string = RulesConfig(
        dealer="rotate_left",  # type: ignore[arg-type]
        first_wild_chooser="first_player",  # type: ignore[arg-type]
        first_wild_draw_four="reshuffle",  # type: ignore[arg-type]
        scoring="penalty_points",  # type: ignore[arg-type]
    )
    by_enum = RulesConfig(
        dealer=DealerRule.ROTATE_LEFT,
        first_wild_chooser=FirstWildChooser.FIRST_PLAYER,
        first_wild_draw_four=FirstWildDrawFour.RESHUFFLE,
        scoring=Scoring.PENALTY_POINTS,
    )
    assert by_string == by_enum
    assert hash(by_string) == hash(by_enum)
    assert len({by_string, by_enum}) == 1
    assert by_string.scoring is Scoring.PENALTY_POINTS
    assert by_string.dealer is DealerRule.ROTATE_LEFT
