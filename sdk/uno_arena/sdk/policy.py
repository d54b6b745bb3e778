"""`PolicyBot`: a policy trained on the reinforcement-learning environment, playing as a `Bot`.

It encodes each observation as the environment does (`uno_arena.sdk.encoder`) and plays the legal action
its network (`uno_arena.sdk.network`) scores best, so it runs through `uno-arena bot run` and
`uno-arena bot play` like any bot. It needs numpy, nothing of PettingZoo or Gymnasium: numpy is imported
when a `PolicyBot` is made, so the SDK itself imports without it.

    # my_policy.py, beside policy.npz
    from pathlib import Path
    from uno_arena.sdk import PolicyBot

    class MyPolicy(PolicyBot):
        weights = Path(__file__).with_name("policy.npz")

    $ uno-arena bot run my_policy.py:MyPolicy --name mine --token "$TOKEN"

Or without a file of your own: `UNO_ARENA_POLICY=policy.npz uno-arena bot play uno_arena.sdk:PolicyBot ...`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, ClassVar

from uno_arena.rules import ACTIONS, Action, MatchResult, Observation, RulesConfig
from uno_arena.sdk.bot import Bot
from uno_arena.sdk.messages import MatchInfo

if TYPE_CHECKING:
    from uno_arena.sdk.encoder import Encoder
    from uno_arena.sdk.network import PolicyNetwork

WEIGHTS_VARIABLE = "UNO_ARENA_POLICY"
"""The environment variable naming the weights file of a `PolicyBot` made without one."""


class PolicyBot(Bot):
    """Plays the policy in a weights file (`.npz`, written by `PolicyNetwork.save`).

    The file is `weights` given to the constructor, else the class attribute `weights` (set it in a
    subclass), else the environment variable `UNO_ARENA_POLICY`. It plays the best scored legal action;
    `sample=True` draws one with the softmax of the scores instead (`seed` seeds the draw).
    """

    weights: ClassVar[str | os.PathLike[str] | None] = None

    def __init__(
        self, weights: str | os.PathLike[str] | None = None, *, sample: bool = False, seed: int | None = None
    ) -> None:
        path = weights or type(self).weights or os.environ.get(WEIGHTS_VARIABLE)
        if not path:
            raise ValueError(
                f"{type(self).__name__} needs a weights file: PolicyBot(weights=...), a subclass setting "
                f"`weights = Path(...)`, or {WEIGHTS_VARIABLE}=policy.npz in the environment"
            )
        try:
            import numpy as np

            from uno_arena.sdk.encoder import Encoder
            from uno_arena.sdk.network import PolicyNetwork
        except ModuleNotFoundError as missing:
            if missing.name != "numpy":
                raise
            raise ModuleNotFoundError(
                f"{type(self).__name__} needs numpy: pip install numpy (or 'uno-arena[rl]')", name="numpy"
            ) from None
        self.network: PolicyNetwork = PolicyNetwork.load(path)
        self._encoder_for = Encoder
        self._rng = np.random.default_rng(seed) if sample else None
        self._encoders: dict[str, Encoder] = {}  # by match: its rules, as the match start says them

    def on_match_start(self, match: MatchInfo) -> None:
        self._encoders[match.match_id] = self._encoder_for(match.rules)

    def on_match_end(self, result: MatchResult) -> None:
        self._encoders.pop(result.match_id, None)

    def decide(self, observation: Observation) -> Action:
        encoder = self._encoders.get(observation.match_id)
        if encoder is None:  # a position without a match (the test kit): the official rules
            encoder = self._encoder_for(RulesConfig(players=observation.players))
        legal = [action.id for action in observation.legal_actions]
        return ACTIONS[self.network.choose(encoder.encode(observation), legal, self._rng)]
