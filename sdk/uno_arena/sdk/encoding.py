"""The encoding of one seat's `Observation` as a fixed-size vector: its layout, field by field.

The reinforcement-learning environment (`uno_arena.env`) hands an agent this vector, and `PolicyBot`
computes it at play time (`uno_arena.sdk.encoder`, which needs numpy), so a policy trained on the one
plays the same through `uno-arena bot run`. docs/rl.md lists every field. This module needs nothing
beyond the rules core.

Only the `Observation` is read (with the match's public rules), so the vector holds exactly what the
seat may see (RULINGS 29). Seats other than the own one are numbered relative to it in the direction
of play: relative seat 1 is the seat that plays after this one as things stand, and so on; the own
seat's absolute number is given too, since a swap's action names a seat by its number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from uno_arena.rules import ACTIONS, FACES, Phase, RulesConfig, Scoring
from uno_arena.rules.config import MAX_PLAYERS

ENCODING_VERSION: Final = 1
"""Bumped whenever a field changes meaning, size or place: saved policies name the version they read."""

ACTION_COUNT: Final = len(ACTIONS)
"""141: the rules core's action ids, `uno_arena.rules.ACTIONS` (docs/rl.md lists them)."""

FACE_COUNT: Final = len(FACES)  # 54
PHASES: Final[tuple[Phase, ...]] = tuple(Phase)
PHASE_NAMES: Final = tuple(phase.value for phase in PHASES)
MAX_CARDS_IN_HAND: Final = 108
MAX_PENALTY: Final = 32  # every Draw Two (8 x 2) and Wild Draw Four (4 x 4) stacked
MOST_POINTS_IN_A_HAND: Final = 1240  # every card of the deck left in the losers' hands


@dataclass(frozen=True, slots=True)
class Field:
    """One field of the vector: `size` values from `offset`; `scale` divides the raw value."""

    name: str
    offset: int
    size: int
    scale: float
    what: str


def _layout() -> tuple[Field, ...]:
    seats = MAX_PLAYERS
    rows: list[tuple[str, int, float, str]] = [
        ("hand", FACE_COUNT, 1, "how many of each card face this seat holds (0-4)"),
        ("top", FACE_COUNT, 1, "the top discard, one-hot by face"),
        (
            "colour",
            4,
            1,
            "the colour to follow, one-hot (red, yellow, green, blue): a Wild's named colour; "
            "all 0 while a first-card Wild's colour is still to be named",
        ),
        (
            "discards",
            FACE_COUNT,
            1,
            "how many of each face are in the discard pile (since the last reshuffle, the top card included)",
        ),
        ("drawn", FACE_COUNT, 1, "the card this seat just drew, one-hot, in its `drawn` decision only"),
        ("phase", len(PHASES), 1, "the decision, one-hot in `Phase` order: " + ", ".join(PHASE_NAMES)),
        ("penalty", 1, 4, "cards pending for the seat that accepts a Draw Two or Wild Draw Four, / 4"),
        ("direction", 1, 1, "1 when play goes to higher seat numbers, 0 when reversed"),
        ("hand_sizes", seats, 10, "cards held by relative seat 0 (this one), 1 (next to play) ..., / 10"),
        ("seats", seats, 1, "1 for each relative seat at the table (the first `players`)"),
        ("scores", seats, 0, "match total of each relative seat / the target score"),
        ("to_move", seats, 1, "the relative seat whose decision it is, one-hot"),
        (
            "turn_seat",
            seats,
            1,
            "the relative seat whose turn it is, one-hot (differs from to_move in "
            "catch, challenge and jump-in windows)",
        ),
        ("dealer", seats, 1, "the relative seat that dealt this hand, one-hot"),
        ("seat", seats, 1, "this seat's own number, one-hot by absolute seat (swap actions name seats so)"),
        ("draw_pile", 1, MAX_CARDS_IN_HAND, "cards in the draw pile / 108"),
        ("turn", 1, 0, "turns begun this hand / max_turns_per_hand"),
        ("hand_number", 1, 0, "this hand's number in the match / max_hands_per_match"),
        (
            "shown",
            seats * FACE_COUNT,
            1,
            "per relative seat (54 faces each): the cards that seat showed this "
            "seat in a challenge this hand, the latest showing",
        ),
        (
            "rules",
            6,
            1,
            "1 for each rule on: stacking, jump_in, seven_zero, multi_play, "
            "draw_until_playable, penalty_points scoring",
        ),
    ]
    fields: list[Field] = []
    offset = 0
    for name, size, scale, what in rows:
        fields.append(Field(name, offset, size, float(scale), what))
        offset += size
    return tuple(fields)


FIELDS: Final[tuple[Field, ...]] = _layout()
"""The vector's fields in order (docs/rl.md's table is made from them). A `scale` of 0 means the
divisor is a rules option (the target score, the turn and hand limits)."""

_AT: Final = {field.name: field.offset for field in FIELDS}
OBSERVATION_SIZE: Final = FIELDS[-1].offset + FIELDS[-1].size

HAND: Final = _AT["hand"]
TOP: Final = _AT["top"]
COLOUR: Final = _AT["colour"]
DISCARDS: Final = _AT["discards"]
DRAWN: Final = _AT["drawn"]
PHASE: Final = _AT["phase"]
PENALTY: Final = _AT["penalty"]
DIRECTION: Final = _AT["direction"]
HAND_SIZES: Final = _AT["hand_sizes"]
SEATS: Final = _AT["seats"]
SCORES: Final = _AT["scores"]
TO_MOVE: Final = _AT["to_move"]
TURN_SEAT: Final = _AT["turn_seat"]
DEALER: Final = _AT["dealer"]
SEAT: Final = _AT["seat"]
DRAW_PILE: Final = _AT["draw_pile"]
TURN: Final = _AT["turn"]
HAND_NUMBER: Final = _AT["hand_number"]
SHOWN: Final = _AT["shown"]
RULES: Final = _AT["rules"]


def rules_flags(rules: RulesConfig) -> tuple[float, ...]:
    """The `rules` field's values for these rules."""
    return (
        float(rules.stacking),
        float(rules.jump_in),
        float(rules.seven_zero),
        float(rules.multi_play),
        float(rules.draw_until_playable),
        float(rules.scoring is Scoring.PENALTY_POINTS),
    )
