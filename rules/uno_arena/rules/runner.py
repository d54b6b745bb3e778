"""Play a whole match with in-process policies (functions from observation to action)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from uno_arena.rules.action import Action, ActionKind
from uno_arena.rules.config import RulesConfig
from uno_arena.rules.match import MatchResult, new_match, observe, play
from uno_arena.rules.observation import Observation

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


def eager_random_policy(rng: random.Random) -> Policy:
    """Uniform over the plays when there is one, else uniform over the rest.

    So it draws only when it cannot play and always plays a playable drawn
    card: the random play of engines such as RLCard, here under the full
    rules (UNO calls, catches and challenges still chosen at random).
    """

    def choose(observation: Observation) -> Action:
        return rng.choice(eager_choices(observation.legal_actions))

    return choose


def eager_choices(legal: Sequence[Action]) -> Sequence[Action]:
    """The plays among `legal` if there are any (legal actions list plays first), else all."""
    if len(legal) > 1 and legal[-1].kind in _NOT_PLAYING:
        return legal[:-1]
    return legal


_NOT_PLAYING = frozenset({ActionKind.DRAW, ActionKind.KEEP})
