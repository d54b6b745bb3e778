"""A reinforcement-learning environment for UNO under the full rules (docs/rl.md).

    import uno_arena.env

    env = uno_arena.env.env(players=4, rules={"stacking": True}, reward="hand")
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else policy(observation)
        env.step(action)

- `env` / `raw_env`: the PettingZoo AEC environment, every seat an agent, 2 to 10 players, all house rules
  (`uno_arena.env.aec`).
- `single_agent(opponents=[...])`: a Gymnasium environment for one learner against SDK bots
  (`uno_arena.env.single`).

Needs the `rl` extra: `pip install 'uno-arena[rl]'` (PettingZoo, Gymnasium, numpy). The names above load
with their module on first use, so that this package imports nothing of them until then: the compiled
build (setup.py) compiles `uno_arena.env.table`, and builds where they are not installed must type-check
this package without them. Import from the modules themselves for precise types.
"""

import importlib
from typing import Any

# first of the namespace: it decides whether the compiled modules load (docs/building.md)
from uno_arena.rules import build as _build  # noqa: F401

_EXPORTS = {
    "env": "uno_arena.env.aec",
    "raw_env": "uno_arena.env.aec",
    "rules_for": "uno_arena.env.aec",
    "Observed": "uno_arena.env.aec",
    "single_agent": "uno_arena.env.single",
    "SingleAgentEnv": "uno_arena.env.single",
    "Reward": "uno_arena.env.rewards",
    "hand_rewards": "uno_arena.env.rewards",
    "match_rewards": "uno_arena.env.rewards",
    "IllegalActionError": "uno_arena.env.table",
    "ACTION_COUNT": "uno_arena.sdk.encoding",
    "FIELDS": "uno_arena.sdk.encoding",
    "OBSERVATION_SIZE": "uno_arena.sdk.encoding",
}
_NEEDED = ("numpy", "gymnasium", "pettingzoo")

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """The exported names, each loaded with its module on first use."""
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module 'uno_arena.env' has no attribute {name!r}")
    try:
        module = importlib.import_module(where)
    except ModuleNotFoundError as missing:
        if missing.name in _NEEDED:
            raise ModuleNotFoundError(
                f"uno_arena.env needs {missing.name}: pip install 'uno-arena[rl]'", name=missing.name
            ) from missing
        raise
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
