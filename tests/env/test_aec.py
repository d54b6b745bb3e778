"""The PettingZoo AEC environment: PettingZoo's own API and seed tests, whose decision it is, every phase,
the rewards, rendering and bad input."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import uno_arena.env
from tests.env.helpers import HOUSE_RULES, SHORT, random_action
from uno_arena.env.aec import raw_env
from uno_arena.env.rewards import hand_rewards, match_rewards
from uno_arena.env.table import IllegalActionError
from uno_arena.rules import ConfigError, Phase, RulesConfig
from uno_arena.sdk.encoding import ACTION_COUNT, OBSERVATION_SIZE, PHASES
from uno_arena.sdk.encoding import PHASE as PHASE_AT

# PettingZoo's checks warn about a dict observation unless the game is one of its own classic ones
pytestmark = pytest.mark.filterwarnings("ignore:Observation (is not a NumPy array|space for each agent)")


@pytest.mark.parametrize(
    ("players", "rules"),
    [(2, None), (4, None), (10, None), (2, HOUSE_RULES), (4, HOUSE_RULES), (10, HOUSE_RULES)],
    ids=["2p", "4p", "10p", "2p-house", "4p-house", "10p-house"],
)
def test_pettingzoo_api_test(players: int, rules: dict[str, Any] | None) -> None:
    api_test(uno_arena.env.env(players=players, rules=rules), num_cycles=1000)


@pytest.mark.parametrize(
    ("players", "rules"), [(2, None), (3, HOUSE_RULES), (10, {**HOUSE_RULES, "draw_until_playable": True})]
)
def test_pettingzoo_seed_test(players: int, rules: dict[str, Any] | None) -> None:
    seed_test(lambda: uno_arena.env.env(players=players, rules=rules), num_cycles=500)


def test_the_same_seed_deals_the_same_matches_and_no_seed_goes_on() -> None:
    env = raw_env(players=3)
    firsts = []
    for _ in range(2):
        env.reset(seed=7)
        first = env.observe(env.agent_selection)["observation"]
        env.reset()
        firsts.append((first, env.observe(env.agent_selection)["observation"]))
    assert np.array_equal(firsts[0][0], firsts[1][0]) and np.array_equal(firsts[0][1], firsts[1][1])
    assert not np.array_equal(firsts[0][0], firsts[0][1])  # the next match is another deal


def test_the_agent_to_act_is_the_seat_to_move_even_out_of_turn() -> None:
    """In jump-in, catch and challenge windows the seat to decide is not the seat whose turn it is: the
    agent selected is the one to decide, and only its mask has legal actions."""
    env = raw_env(players=4, rules={**HOUSE_RULES, **SHORT})
    chance = random.Random(3)
    out_of_turn = Counter[Phase]()
    for seed in range(3):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            hand = env.table.match.hand
            assert agent == f"player_{hand.to_move}"
            for other in env.agents:
                other_mask = env.observe(other)["action_mask"]
                assert other_mask.any() == (other == agent)
            if hand.to_move != hand.turn_seat:
                out_of_turn[hand.phase] += 1
            env.step(random_action(observation, chance))
    assert {Phase.JUMP_IN, Phase.CATCH, Phase.CHALLENGE} <= set(out_of_turn)


def test_every_phase_is_asked() -> None:
    """Every kind of decision reaches an agent, read off the observation's phase field."""
    seen: set[Phase] = set()
    chance = random.Random(1)
    for players in (3, 5):
        env = raw_env(players=players, rules={**HOUSE_RULES, "target_score": 60})
        for seed in range(40):
            env.reset(seed=seed)
            for _agent in env.agent_iter():
                observation, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                phase_field = observation["observation"][PHASE_AT : PHASE_AT + len(PHASES)]
                seen.add(PHASES[int(np.argmax(phase_field))])
                env.step(random_action(observation, chance))
            if seen == set(Phase) - {Phase.OVER}:
                return
    pytest.fail(f"phases never asked: {sorted(set(Phase) - {Phase.OVER} - seen)}")


def test_a_swap_everyone_can_tell_is_the_only_one_is_not_asked() -> None:
    """As the match server: after a 7 at two seats the swap has one choice, applied without asking."""
    env = raw_env(players=2, rules={"seven_zero": True, "target_score": 200})
    chance = random.Random(2)
    for seed in range(6):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            assert env.table.match.hand.phase is not Phase.SWAP
            env.step(random_action(observation, chance))


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("scoring", ["winner_takes", "penalty_points"])
def test_hand_rewards_are_each_hands_score_margin(players: int, scoring: str) -> None:
    env = raw_env(players=players, rules={**SHORT, "scoring": scoring}, reward="hand")
    totals = _play_rewards(env, seed=players)
    result = env.table.match.result
    assert result is not None
    expected = [0.0] * players
    for hand in result.hands:
        expected = [e + r for e, r in zip(expected, hand_rewards(hand.points, env.rules), strict=True)]
    assert totals == pytest.approx(expected)
    assert sum(totals) == pytest.approx(0.0, abs=1e-9)  # zero-sum
    best = max(range(players), key=lambda seat: expected[seat])
    assert best in result.winners


def test_match_rewards_come_once_at_the_end() -> None:
    env = raw_env(players=3, rules={"target_score": 1000}, reward="match")
    rewarded_steps = []
    chance = random.Random(5)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    env.reset(seed=11)
    steps = 0
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if reward:
            rewarded_steps.append(steps)
        if terminated or truncated:
            env.step(None)
            continue
        env.step(random_action(observation, chance))
        steps += 1
    result = env.table.match.result
    assert result is not None and len(result.hands) > 1
    assert rewarded_steps and min(rewarded_steps) >= steps  # only once the match was over
    assert list(totals.values()) == pytest.approx(match_rewards(result.winners, 3))
    assert sorted(match_rewards((1,), 3)) == pytest.approx([-0.5, -0.5, 1.0])
    assert match_rewards((0, 1), 2) == [0.0, 0.0]


def _play_rewards(env: raw_env, seed: int) -> list[float]:
    """Play a match at random; each agent's rewards summed as `last()` gave them."""
    chance = random.Random(seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    env.reset(seed=seed)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            assert not truncated  # a match always ends by its rules: terminated
            env.step(None)
            continue
        env.step(random_action(observation, chance))
    return [totals[agent] for agent in env.possible_agents]


def test_spaces_and_observation_shapes() -> None:
    env = uno_arena.env.env(players=5)
    env.reset(seed=1)
    observation = env.observe(env.agent_selection)
    assert observation["observation"].shape == (OBSERVATION_SIZE,) == (851,)
    assert observation["observation"].dtype == np.float32
    assert observation["action_mask"].shape == (ACTION_COUNT,) == (141,)
    assert observation["action_mask"].dtype == np.int8
    assert env.action_space("player_4").n == 141
    assert env.observation_space("player_4").contains(observation)


def test_render_ansi_shows_the_table() -> None:
    env = uno_arena.env.env(players=3, render_mode="ansi")
    env.reset(seed=4)
    text = env.render()
    assert isinstance(text, str)
    assert "hand 1" in text and "player_2" in text and "to move" in text
    quiet = uno_arena.env.env(players=3)
    quiet.reset(seed=4)
    with pytest.warns(UserWarning, match="render_mode='ansi'"):
        assert quiet.render() is None


def test_an_illegal_action_raises_in_raw_env_and_ends_the_match_in_env(
    caplog: pytest.LogCaptureFixture,
) -> None:
    raw = raw_env(players=2)
    raw.reset(seed=3)
    illegal = int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match=f"action {illegal} .* is not legal for seat"):
        raw.step(illegal)
    with pytest.raises(ValueError, match="an action is needed"):
        raw.step(None)
    wrapped = uno_arena.env.env(players=2)
    wrapped.reset(seed=3)
    agent = wrapped.agent_selection
    wrapped.last()
    wrapped.step(illegal)
    assert "Illegal move made" in caplog.text  # PettingZoo's TerminateIllegalWrapper logs it
    assert all(wrapped.terminations.values())
    assert wrapped.rewards[agent] == -1


@pytest.mark.parametrize(
    ("arguments", "error", "says"),
    [
        ({"players": 11}, ConfigError, "players: must be 2 to 10"),
        ({"rules": {"stackin": True}}, ConfigError, "stackin: unknown rules option"),
        ({"rules": {"stacking": "yes"}}, ConfigError, "stacking: expected bool"),
        ({"rules": 3}, TypeError, "rules: expected a RulesConfig or a mapping"),
        ({"reward": "points"}, ValueError, "reward: 'points' is not one of hand, match"),
        ({"render_mode": "human"}, ValueError, "render_mode: 'human' is not one of None, ansi"),
    ],
)
def test_bad_arguments_say_what_is_wrong(
    arguments: dict[str, Any], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        raw_env(**arguments)


def test_players_override_the_rules_and_default_to_two() -> None:
    assert raw_env().rules.players == 2
    assert raw_env(rules=RulesConfig(players=5, stacking=True)).rules.players == 5
    overridden = raw_env(players=3, rules=RulesConfig(players=5, stacking=True)).rules
    assert overridden.players == 3 and overridden.stacking
