"""Which rules a match or tournament used, in one line: house rules on, official options changed."""

from __future__ import annotations

from uno_arena.records import ruleset
from uno_arena.rules import RulesConfig
from uno_arena.v1 import codec
from uno_arena.v1 import game_pb2 as pb


def test_the_official_rules_say_so_whatever_the_table_and_target() -> None:
    assert ruleset.summary(RulesConfig(players=7, target_score=100)) == "official rules"
    assert ruleset.as_dict(RulesConfig()) == {"house_rules": [], "options": {}, "summary": "official rules"}


def test_house_rules_in_the_rulings_order_then_changed_options() -> None:
    config = RulesConfig(multi_play=True, stacking=True, hand_size=5, scoring="penalty_points",  # type: ignore[arg-type]
                         draw_until_playable=True)  # fmt: skip
    assert ruleset.house_rules(config) == ["stacking", "multi_play"]
    assert ruleset.changed_options(config) == {"hand_size": 5, "draw_until_playable": True,
                                               "scoring": "penalty_points"}  # fmt: skip
    assert ruleset.summary(config) == (
        "house rules: stacking, multi_play; "
        "options: hand_size=5, draw_until_playable=true, scoring=penalty_points"
    )
    assert ruleset.summary(RulesConfig(uno_penalty=4)) == "options: uno_penalty=4"


def test_a_recorded_matchs_rules_read_back() -> None:
    message = pb.RulesConfig(players=3, jump_in=True, seven_zero=True, target_score=150)
    config = codec.rules_from(message, 3)
    assert config == RulesConfig(players=3, jump_in=True, seven_zero=True, target_score=150)
    assert codec.rules_from(pb.RulesConfig(), 2) == RulesConfig(players=2)  # unset: the defaults
