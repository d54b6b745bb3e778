"""Which rules a match or a tournament was played under, for people: the house rules on (RULINGS 25-28) and
the official options changed from their defaults. Replays, the leaderboard, `tournament status` and the web
view all say it the same way.

The table's size (`players`) and the score that ends a match (`target_score`) are left out: every view
shows them beside the rules already (the bots listed, "to 500").
"""

from __future__ import annotations

from typing import Any

from uno_arena.rules import RulesConfig
from uno_arena.rules.config import HOUSE_RULES

SHOWN_ELSEWHERE = ("players", "target_score")
_DEFAULTS = RulesConfig().to_dict()


def house_rules(config: RulesConfig) -> list[str]:
    """The house rules on, in the order RULINGS gives them."""
    return [name for name in HOUSE_RULES if getattr(config, name)]


def changed_options(config: RulesConfig) -> dict[str, Any]:
    """The official options (not house rules, players or target) set to other than their defaults."""
    return {
        name: value
        for name, value in config.to_dict().items()
        if name not in HOUSE_RULES and name not in SHOWN_ELSEWHERE and value != _DEFAULTS[name]
    }


def summary(config: RulesConfig) -> str:
    """`house rules: stacking, jump_in; options: hand_size=5`, or `official rules`."""
    parts = []
    if house := house_rules(config):
        parts.append(f"house rules: {', '.join(house)}")
    if options := changed_options(config):
        parts.append("options: " + ", ".join(f"{k}={_plain(v)}" for k, v in options.items()))
    return "; ".join(parts) or "official rules"


def as_dict(config: RulesConfig) -> dict[str, Any]:
    """The same for JSON: `{"house_rules": [...], "options": {...}, "summary": "..."}`."""
    return {
        "house_rules": house_rules(config),
        "options": changed_options(config),
        "summary": summary(config),
    }


def _plain(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
