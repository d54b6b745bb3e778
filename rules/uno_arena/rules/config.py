"""The rules configuration: every option the rulings (docs/rulings.md) name, typed, with its default.

Frozen so a running hand can hold it without copying. The constructor and
`RulesConfig.from_dict` (the plain mapping an organiser writes: TOML, JSON,
gRPC) share one check: every field is converted (an enum's string value to the
enum) or refused with a `ConfigError` naming it, so a config never plays
something other than what it says.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, fields
from typing import Any, get_type_hints


class DealerRule(enum.StrEnum):
    """RULINGS 3."""

    DRAW_EACH_HAND = "draw_each_hand"
    ROTATE_LEFT = "rotate_left"


class FirstWildChooser(enum.StrEnum):
    """RULINGS 9: who names the colour when the first card is a Wild."""

    DEALER = "dealer"
    FIRST_PLAYER = "first_player"


class FirstWildDrawFour(enum.StrEnum):
    """RULINGS 10: what a Wild Draw Four turned up as the first card does."""

    DRAW_FOUR = "draw_four"
    RESHUFFLE = "reshuffle"


class Scoring(enum.StrEnum):
    """RULINGS 23."""

    WINNER_TAKES = "winner_takes"
    PENALTY_POINTS = "penalty_points"


MIN_PLAYERS = 2
MAX_PLAYERS = 10


class ConfigError(ValueError):
    """A rules configuration that cannot be played; the message names the field."""


@dataclass(frozen=True, slots=True)
class RulesConfig:
    """All options of the official rules (RULINGS 1-24) and the house rules (25-28).

    The house rules are off by default and combine freely: `stacking` (25),
    `jump_in` (26), `seven_zero` (27), `multi_play` (28).
    """

    players: int = 4
    dealer: DealerRule = DealerRule.DRAW_EACH_HAND
    hand_size: int = 7
    first_wild_chooser: FirstWildChooser = FirstWildChooser.DEALER
    first_wild_draw_four: FirstWildDrawFour = FirstWildDrawFour.DRAW_FOUR
    draw_until_playable: bool = False
    uno_penalty: int = 2
    target_score: int = 500
    scoring: Scoring = Scoring.WINNER_TAKES
    max_turns_per_hand: int = 2000
    max_hands_per_match: int = 200
    stacking: bool = False
    jump_in: bool = False
    seven_zero: bool = False
    multi_play: bool = False

    def __post_init__(self) -> None:
        # the rules test enum fields with `is`: a string stored as given would silently play the default
        for name, kind in _FIELD_TYPES.items():
            value = getattr(self, name)
            converted = _coerce(name, kind, value)
            if converted is not value:
                object.__setattr__(self, name, converted)
        self.validate()

    def validate(self) -> None:
        """Raise `ConfigError` naming the first field that cannot be played."""
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ConfigError(f"players: must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {self.players}")
        if self.hand_size < 1 or self.hand_size * self.players > 100:
            raise ConfigError(f"hand_size: {self.hand_size} cannot be dealt to {self.players} players")
        if self.uno_penalty < 0:
            raise ConfigError("uno_penalty: must be >= 0")
        for name in ("target_score", "max_turns_per_hand", "max_hands_per_match"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: must be >= 1")

    def to_dict(self) -> dict[str, Any]:
        """Plain values (enums as their strings), the inverse of `from_dict`."""
        return {k: (v.value if isinstance(v, enum.Enum) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RulesConfig:
        """Build from plain values; unknown fields and bad values raise `ConfigError`.

        Values are converted by the constructor; only unknown names are checked here,
        where they would otherwise be a `TypeError` without the field's name.
        """
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigError(f"{unknown[0]}: unknown rules option (known: {', '.join(known)})")
        return cls(**values)


HOUSE_RULES: tuple[str, ...] = ("stacking", "jump_in", "seven_zero", "multi_play")
"""The house rules' option names (RULINGS 25-28), in the order RULINGS gives them."""

_FIELD_TYPES: dict[str, type] = get_type_hints(RulesConfig)


def _coerce(name: str, kind: type, value: Any) -> Any:
    """`value` as field `name` stores it: an enum member from the member or its value; an int
    that is not a bool; a bool. Anything else raises `ConfigError` naming the field."""
    if issubclass(kind, enum.Enum):
        try:
            return kind(value)
        except ValueError:
            choices = ", ".join(m.value for m in kind)
            raise ConfigError(f"{name}: {value!r} is not one of {choices}") from None
    if kind is bool and isinstance(value, bool):
        return value
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ConfigError(f"{name}: expected {kind.__name__}, got {value!r}")
