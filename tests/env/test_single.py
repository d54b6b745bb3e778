"""The Gymnasium single-agent environment: Gymnasium's checker, the bots' side of the match, illegal
actions, rewards and bad input."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tests.env.helpers import HOUSE_RULES
from uno_arena.env.rewards import hand_rewards, match_rewards
from uno_arena.env.single import SingleAgentEnv, single_agent
from uno_arena.rules import ACTIONS, Action, Event, MatchResult, Observation, safe_default, seen_by
from uno_arena.rules.event import Dealt, Drew, HandShown, Received
from uno_arena.sdk import Bot, HandResult, MatchInfo
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.sdk.examples.strong_bot import StrongBot


class RecordingBot(GreedyBot):
    """Greedy, and keeps what it was told."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.seat = -1
        self.events: list[Event] = []
        self.observations: list[Observation] = []

    def on_match_start(self, match: MatchInfo) -> None:
        self.calls.append("on_match_start")
        self.seat = match.seat

    def on_events(self, match_id: str, events: Sequence[Event]) -> None:
        self.calls.append("on_events")
        self.events += events

    def decide(self, observation: Observation) -> Action:
        self.calls.append("decide")
        self.observations.append(observation)
        return super().decide(observation)

    def on_hand_end(self, result: HandResult) -> None:
        self.calls.append("on_hand_end")

    def on_match_end(self, result: MatchResult) -> None:
        self.calls.append("on_match_end")


def play(env: SingleAgentEnv, seed: int) -> tuple[float, dict[str, Any]]:
    """A match of the learner at random among its legal actions: its summed reward and the last info."""
    chance = random.Random(seed)
    _, info = env.reset(seed=seed)
    total, terminated = 0.0, False
    while not terminated:
        legal = np.flatnonzero(info["action_mask"])
        assert np.array_equal(info["action_mask"], env.action_masks())
        _, reward, terminated, truncated, info = env.step(int(legal[chance.randrange(len(legal))]))
        assert not truncated and not info["illegal_action"]
        total += reward
    return total, info


@pytest.mark.filterwarnings("ignore:.*(render modes|spec).*")
def test_gymnasiums_check_env() -> None:
    check_env(single_agent([GreedyBot()]))
    check_env(single_agent([StrongBot(), GreedyBot(), StrongBot()], rules=HOUSE_RULES))


def test_the_bots_are_told_what_a_connected_bot_is_told_and_no_more() -> None:
    bot = RecordingBot()
    env = single_agent([bot, RandomBot(seed=1)], rules={"target_score": 150, **HOUSE_RULES})
    play(env, seed=3)
    assert bot.calls[0] == "on_match_start" and bot.calls[-1] == "on_match_end"
    assert {"on_events", "decide", "on_hand_end"} <= set(bot.calls)
    assert all(o.match_id == "env-1" and o.seat == bot.seat and o.is_my_move for o in bot.observations)
    events = env.table.match.events
    assert bot.events == [seen_by(event, bot.seat) for event in events]  # each once, in order, as seen
    for event in bot.events:
        if isinstance(event, Dealt | Drew | Received):
            assert event.cards is None or event.seat == bot.seat
        if isinstance(event, HandShown):
            assert event.cards is None or event.to == bot.seat


@pytest.mark.parametrize("reward", ["hand", "match"])
def test_the_learners_rewards(reward: str) -> None:
    env = single_agent([RandomBot(seed=2), RandomBot(seed=3)], rules={"target_score": 200}, reward=reward)
    total, info = play(env, seed=5)
    result = env.table.match.result
    assert result is not None and info["seat"] == env.seat
    if reward == "hand":
        expected = sum(hand_rewards(hand.points, env.rules)[env.seat] for hand in result.hands)
    else:
        expected = match_rewards(result.winners, 3)[env.seat]
    assert total == pytest.approx(expected)


def test_the_seat_is_drawn_each_match_unless_fixed() -> None:
    drawn = single_agent([GreedyBot(), GreedyBot(), GreedyBot()])
    seats = set()
    for seed in range(12):
        drawn.reset(seed=seed)
        seats.add(drawn.seat)
    assert seats == {0, 1, 2, 3}
    fixed = single_agent([GreedyBot()], seat=1)
    for seed in range(3):
        _, info = fixed.reset(seed=seed)
        assert fixed.seat == info["seat"] == 1


def test_an_illegal_action_gets_the_safe_default_and_the_illegal_reward() -> None:
    env = single_agent([GreedyBot()], illegal_reward=-0.5, seat=0, rules={"target_score": 2000})
    _, info = env.reset(seed=1)
    match = env.table.match
    legal = [ACTIONS[i] for i in np.flatnonzero(info["action_mask"])]
    applied = len(match.actions)
    _, reward, _, _, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert info["illegal_action"] is True
    assert match.actions[applied] is safe_default(legal)
    assert reward == pytest.approx(-0.5)  # and no hand ended (a long way to 2000)


def test_a_bot_that_fails_gets_the_safe_default_and_the_match_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken(Bot):
        def decide(self, observation: Observation) -> Action:
            raise RuntimeError("broken")

    env = single_agent([Broken()], rules={"target_score": 100})
    play(env, seed=2)
    assert env.table.over
    assert "Broken at seat" in caplog.text and "decide() raised RuntimeError('broken')" in caplog.text


def test_render_and_spaces() -> None:
    env = single_agent([GreedyBot()], render_mode="ansi", seat=0)
    vector, _ = env.reset(seed=1)
    assert env.observation_space.contains(vector)
    assert env.action_space.n == 141
    text = env.render()
    assert text is not None and "learner" in text and "GreedyBot" in text


@pytest.mark.parametrize(
    ("arguments", "error", "says"),
    [
        ({"opponents": []}, ValueError, "give at least one bot"),
        ({"opponents": [GreedyBot] * 10}, ValueError, "players: must be 2 to 10"),
        ({"opponents": [object()]}, TypeError, "is neither a uno_arena.sdk.Bot nor makes one"),
        ({"opponents": [GreedyBot], "seat": 2}, ValueError, "seat: must be 0 to 1 or None"),
        ({"opponents": [GreedyBot], "reward": "points"}, ValueError, "reward: 'points' is not one of"),
    ],
)
def test_bad_arguments_say_what_is_wrong(
    arguments: dict[str, Any], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        single_agent(**arguments)


def test_one_instance_per_seat() -> None:
    bot = GreedyBot()
    with pytest.raises(ValueError, match="the same bot instance twice"):
        single_agent([bot, bot])
