"""The rules configuration: options, defaults and clear errors."""

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
        ({"stacking": True}, "stacking"),
        ({"hand_size": 20, "players": 10}, "hand_size"),
    ],
)
def test_bad_values_name_the_field(values: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=f"^{field}:"):
        RulesConfig.from_dict(values)
