"""The PettingZoo AEC environment: every seat an agent, full rules, 2 to 10 players (docs/rl.md).

`env(...)` is `raw_env(...)` inside PettingZoo's standard wrappers, as PettingZoo's own classic games
wrap theirs: an illegal action ends the match with reward -1 to its agent, an action outside the action
space fails an assertion, and calls out of order raise. `raw_env` raises `IllegalActionError` on an
illegal action instead, and costs a fraction of the wrappers' time per step (docs/rl.md, "Speed").
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from uno_arena.env.render import table_text
from uno_arena.env.rewards import Reward, reward_mode
from uno_arena.env.table import Table
from uno_arena.rules import RulesConfig
from uno_arena.sdk.encoder import observation_bounds
from uno_arena.sdk.encoding import ACTION_COUNT

Observed = dict[str, Any]
"""An agent's observation: {"observation": a float32 numpy vector, "action_mask": an int8 numpy mask over
the action ids}."""

RENDER_MODES = ("ansi",)
_F32 = np.dtype(np.float32)
_I8 = np.dtype(np.int8)


def rules_for(players: int | None, rules: RulesConfig | Mapping[str, Any] | None) -> RulesConfig:
    """The rules to play: `rules` (a `RulesConfig`, or a mapping of option names as `RulesConfig.from_dict`
    takes them) with `players` seats. `players` overrides what `rules` says; without either, 2.

    Raises `ConfigError` (a `ValueError`) naming an unknown option or a bad value.
    """
    if rules is None:
        options: dict[str, Any] = {}
    elif isinstance(rules, RulesConfig):
        options = rules.to_dict()
    elif isinstance(rules, Mapping):
        options = dict(rules)
    else:
        raise TypeError(f"rules: expected a RulesConfig or a mapping of rules options, got {rules!r}")
    if players is not None:
        options["players"] = players
    options.setdefault("players", 2)
    return RulesConfig.from_dict(options)


def render_mode_of(render_mode: str | None) -> str | None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode: {render_mode!r} is not one of None, {', '.join(RENDER_MODES)}")
    return render_mode


def observation_space(rules: RulesConfig) -> spaces.Box:
    low, high = observation_bounds(rules)
    return spaces.Box(low, high, dtype=np.float32)


class raw_env(AECEnv[str, Observed, Any]):
    """A match of UNO under `rules`, each seat an agent `player_0` ... `player_{n-1}`.

    The agent to act (`agent_selection`) is the rules core's seat to move, which in a catch, challenge
    or jump-in window is not the seat whose turn it is. Decisions the match server applies without
    asking (one legal action that everyone can tell, e.g. the swap after a 7 heads-up) are applied
    here too, so every agent step is a real decision.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 (declared so by AECEnv)
        "name": "uno_arena_v1",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
    }

    def __init__(
        self,
        players: int | None = None,
        rules: RulesConfig | Mapping[str, Any] | None = None,
        reward: str | Reward = Reward.HAND,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.rules = rules_for(players, rules)
        self.reward = reward_mode(reward)
        self.render_mode = render_mode_of(render_mode)
        self.table = Table(self.rules, self.reward)
        self.possible_agents = [f"player_{seat}" for seat in range(self.rules.players)]
        self.agents = list(self.possible_agents)
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        shared_observation = spaces.Dict(
            {
                "observation": observation_space(self.rules),
                "action_mask": spaces.Box(0, 1, (ACTION_COUNT,), dtype=np.int8),
            }
        )
        self.observation_spaces = {agent: shared_observation for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(ACTION_COUNT) for agent in self.possible_agents}
        self._seeds: random.Random | None = None
        self._rewarded = False  # whether `rewards` holds anything to clear on the next step
        self._reset_agents()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new match. `seed` restarts the environment's sequence of deals (the same seed, the
        same matches); without it the sequence goes on (from fresh entropy the first time)."""
        if seed is not None:
            self._seeds = random.Random(seed)
        elif self._seeds is None:
            self._seeds = random.Random(secrets.randbits(64))
        self.table.deal(self._seeds.getrandbits(64))
        self._reset_agents()
        self.agent_selection = self.possible_agents[self.table.to_move]

    def _reset_agents(self) -> None:
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[0]
        self._rewarded = False

    def observe(self, agent: str) -> Observed:
        seat, table = self._seat[agent], self.table  # inlined `vectors.vector` and `vectors.mask`: per step
        return {
            "observation": np.frombuffer(table.seats.fill(table.match, seat), _F32),
            "action_mask": np.frombuffer(table.mask_bits(seat), _I8),
        }

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent}: an action is needed (None is only for an agent whose match is over)")
        table = self.table
        rewards = table.act(int(action))  # first: an illegal action raises with nothing changed
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        self._cumulative_rewards[agent] = 0.0
        if rewards is not None:
            for seat, reward in enumerate(rewards):
                self.rewards[self.possible_agents[seat]] = reward
            self._accumulate_rewards()
            self._rewarded = True
        match = table.match
        if match.result is None:
            self.agent_selection = self.possible_agents[match.hand.to_move]
        else:
            self.terminations = dict.fromkeys(self.agents, True)

    def render(self) -> str | None:
        """The table as text (`render_mode="ansi"`); None, with a warning, without a render mode."""
        if self.render_mode is None:
            logger.warn("render() called without a render_mode: uno_arena.env.env(render_mode='ansi')")
            return None
        return table_text(self.table.match, self.possible_agents)

    def close(self) -> None:
        """Nothing to release: no window, no process."""


def env(
    players: int | None = None,
    rules: RulesConfig | Mapping[str, Any] | None = None,
    reward: str | Reward = Reward.HAND,
    render_mode: str | None = None,
) -> AECEnv[str, Observed, Any]:
    """`raw_env` inside PettingZoo's standard wrappers: an illegal action ends the match (-1 to the agent
    that made it), an action outside the space or a call out of order fails loudly."""
    wrapped: AECEnv[str, Observed, Any] = raw_env(players, rules, reward, render_mode)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
