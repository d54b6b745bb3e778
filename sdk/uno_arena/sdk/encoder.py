"""The encoding of `uno_arena.sdk.encoding` computed with numpy: a seat's `Observation` as a float32
vector (`Encoder`), its legal actions as an int8 mask (`action_mask`), and the vector's bounds.

Needs numpy (`pip install numpy`, or `pip install 'uno-arena[rl]'`); nothing else of the SDK imports
this module but `PolicyBot`, when it is made, so the base install does without it.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from uno_arena.rules import ACTIONS, COLOURS, Observation, RulesConfig
from uno_arena.rules.config import MAX_PLAYERS
from uno_arena.sdk.encoding import (
    ACTION_COUNT,
    COLOUR,
    DEALER,
    DIRECTION,
    DISCARDS,
    DRAW_PILE,
    DRAWN,
    FACE_COUNT,
    HAND,
    HAND_NUMBER,
    HAND_SIZES,
    MAX_CARDS_IN_HAND,
    MAX_PENALTY,
    MOST_POINTS_IN_A_HAND,
    OBSERVATION_SIZE,
    PENALTY,
    PHASE,
    PHASES,
    RULES,
    SCORES,
    SEAT,
    SEATS,
    SHOWN,
    TO_MOVE,
    TOP,
    TURN,
    TURN_SEAT,
    rules_flags,
)

_PHASE_INDEX: Final = {phase: PHASE + i for i, phase in enumerate(PHASES)}
_COLOUR_INDEX: Final = {colour: COLOUR + i for i, colour in enumerate(COLOURS)}
_ACTION_ID: Final = {id(action): number for number, action in enumerate(ACTIONS)}
"""Action id by object identity: legal actions are the interned instances of `ACTIONS`, and hashing a
frozen dataclass field by field would cost more than the rest of the mask."""


def observation_bounds(rules: RulesConfig) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """(low, high) of every value of the vector under `rules`: for a Gymnasium `Box`."""
    high = np.ones(OBSERVATION_SIZE, dtype=np.float32)
    high[HAND : HAND + FACE_COUNT] = 4
    high[DISCARDS : DISCARDS + FACE_COUNT] = 4
    high[SHOWN : SHOWN + MAX_PLAYERS * FACE_COUNT] = 4
    high[PENALTY] = MAX_PENALTY / 4
    high[HAND_SIZES : HAND_SIZES + MAX_PLAYERS] = MAX_CARDS_IN_HAND / 10
    high[SCORES : SCORES + MAX_PLAYERS] = 1 + MOST_POINTS_IN_A_HAND / rules.target_score
    return np.zeros(OBSERVATION_SIZE, dtype=np.float32), high


class Encoder:
    """Encodes observations of matches played under one set of rules (the rules are public: every
    seat is told them when the match starts). Reusable and cheap to keep."""

    __slots__ = ("_hands_scale", "_rules", "_score_scale", "_turn_scale")

    def __init__(self, rules: RulesConfig) -> None:
        self._rules = rules_flags(rules)
        self._score_scale = 1 / rules.target_score
        self._turn_scale = 1 / rules.max_turns_per_hand
        self._hands_scale = 1 / rules.max_hands_per_match

    def encode(self, observation: Observation) -> npt.NDArray[np.float32]:
        """The vector of `observation` (float32, `OBSERVATION_SIZE` values)."""
        seat, players, direction = observation.seat, observation.players, observation.direction
        relative = {(seat + k * direction) % players: k for k in range(players)}
        # every value is a count at an index: one bincount adds them all (cards held twice count 2)
        at: list[int] = [HAND + c.index for c in observation.cards]
        at += [DISCARDS + c.index for c in observation.discards]
        at += [
            TOP + observation.top.index,
            _PHASE_INDEX[observation.phase],
            TURN_SEAT + relative[observation.turn_seat],
            DEALER + relative[observation.dealer],
            SEAT + seat,
        ]
        if observation.to_move >= 0:  # -1 once the match is over: nobody to move
            at.append(TO_MOVE + relative[observation.to_move])
        weights: list[float] = [1.0] * len(at)
        if observation.colour is not None:
            at.append(_COLOUR_INDEX[observation.colour])
            weights.append(1.0)
        if observation.drawn is not None:
            at.append(DRAWN + observation.drawn.index)
            weights.append(1.0)
        for whose, cards in dict(observation.shown).items():  # the latest showing of each seat
            base = SHOWN + relative[whose] * FACE_COUNT
            at += [base + c.index for c in cards]
            weights += [1.0] * len(cards)
        sizes, scores = observation.hand_sizes, observation.scores
        score_scale = self._score_scale
        for absolute, k in relative.items():
            at += [HAND_SIZES + k, SEATS + k, SCORES + k]
            weights += [sizes[absolute] / 10, 1.0, scores[absolute] * score_scale]
        at += [PENALTY, DIRECTION, DRAW_PILE, TURN, HAND_NUMBER, RULES, RULES + 1, RULES + 2, RULES + 3,
               RULES + 4, RULES + 5]  # fmt: skip
        weights += [
            observation.penalty / 4,
            1.0 if direction > 0 else 0.0,
            observation.draw_pile_size / MAX_CARDS_IN_HAND,
            observation.turn * self._turn_scale,
            observation.hand_number * self._hands_scale,
            *self._rules,
        ]
        return np.bincount(at, weights, OBSERVATION_SIZE).astype(np.float32)


def action_mask(observation: Observation) -> npt.NDArray[np.int8]:
    """1 at the id of each legal action of `observation`, 0 elsewhere (all 0 when not its move)."""
    mask = np.zeros(ACTION_COUNT, dtype=np.int8)
    if observation.legal_actions:
        mask[[_ACTION_ID[id(a)] for a in observation.legal_actions]] = 1
    return mask


def action_ids(observation: Observation) -> list[int]:
    """The ids of `observation`'s legal actions, in order."""
    return [_ACTION_ID[id(a)] for a in observation.legal_actions]


def encode(observation: Observation, rules: RulesConfig) -> npt.NDArray[np.float32]:
    """`Encoder(rules).encode(observation)`, for a one-off."""
    return Encoder(rules).encode(observation)
