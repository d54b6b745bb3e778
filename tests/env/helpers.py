"""What the environments' tests share: rules to play and a random masked policy."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

HOUSE_RULES: dict[str, Any] = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True}
SHORT = {"target_score": 100}  # a few hands a match


def random_action(observation: dict[str, Any], chance: random.Random) -> int:
    legal = np.flatnonzero(observation["action_mask"])
    return int(legal[chance.randrange(len(legal))])
