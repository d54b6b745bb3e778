"""Uniform over the legal actions: the baseline every bot should beat."""

from __future__ import annotations

import random

from uno_arena.sdk import Action, Bot, Observation


class RandomBot(Bot):
    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, observation: Observation) -> Action:
        return self.rng.choice(list(observation.legal))
