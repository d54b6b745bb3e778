"""Play a whole match with in-process policies (functions from observation to action)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from server.rules.action import Action
from server.rules.config import RulesConfig
from server.rules.match import MatchResult, new_match, observe, play
from server.rules.observation import Observation

Policy = Callable[[Observation], Action]


def run_match(config: RulesConfig, seed: int, policies: Sequence[Policy]) -> MatchResult:
    """Play to the end: each decision goes to the policy of the seat to move.

    Actions are validated, so a policy returning an illegal action raises an
    `IllegalActionError` here rather than corrupting the match.
    """
    if len(policies) != config.players:
        raise ValueError(f"{len(policies)} policies for {config.players} players")
    match = new_match(config, random.Random(seed))
    while match.result is None:
        seat = match.hand.to_move
        play(match, policies[seat](observe(match, seat)), seat)
    return match.result


def random_policy(rng: random.Random) -> Policy:
    """Uniform over legal actions, drawing from `rng` (not the match's generator)."""

    def choose(observation: Observation) -> Action:
        return rng.choice(observation.legal_actions)

    return choose
