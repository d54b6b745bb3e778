"""The Gymnasium single-agent environment: one seat learns, the others are SDK bots (docs/rl.md).

The bots are called as the local arena and the match server call them (`uno_arena.sdk.arena`):
`on_match_start`, `on_events` with what their seat may see, `decide`, `on_hand_end`, `on_match_end`.
A bot whose `decide` raises or answers something illegal gets the safe default applied (draw, keep,
accept, pass), as the server would, and a warning is logged.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from uno_arena.env.aec import observation_space, render_mode_of, rules_for
from uno_arena.env.render import table_text
from uno_arena.env.rewards import Reward, reward_mode
from uno_arena.env.table import Table
from uno_arena.env.vectors import mask, vector
from uno_arena.rules import ACTIONS, Action, RulesConfig, observe, safe_default, seen_by
from uno_arena.rules.event import HandEnded
from uno_arena.sdk.bot import Bot
from uno_arena.sdk.encoding import ACTION_COUNT
from uno_arena.sdk.messages import HandResult, MatchInfo

log = logging.getLogger(__name__)

Opponent = Bot | Callable[[], Bot]
"""A bot instance, or a `Bot` subclass (or any function) that makes one."""

LEARNER = "learner"  # the learner's name among the bots' names in `MatchInfo.bots`


class SingleAgentEnv(gymnasium.Env[npt.NDArray[np.float32], np.int64]):
    """One seat of a match to the learner, the others to `opponents` (one SDK bot per seat).

    Observation: the seat's vector (a `Box`, docs/rl.md, "The observation"); action: a `Discrete(141)`
    action id. The legal actions are in `info["action_mask"]` (int8, 1 = legal) and `action_masks()`.
    An illegal action is not an error: the safe default is applied instead (as the match server does
    with a bot's illegal answer), `info["illegal_action"]` says so and `illegal_reward` is added.
    An episode is one match; `terminated` is True at its end, `truncated` never.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}  # noqa: RUF012 (declared so by gymnasium.Env)

    def __init__(
        self,
        opponents: Sequence[Opponent],
        rules: RulesConfig | Mapping[str, Any] | None = None,
        reward: str | Reward = Reward.HAND,
        seat: int | None = None,
        illegal_reward: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        if not opponents:
            raise ValueError("opponents: give at least one bot (a Bot instance, or a Bot subclass)")
        bots = [_bot(opponent) for opponent in opponents]
        if len({id(bot) for bot in bots}) != len(bots):
            raise ValueError("opponents: the same bot instance twice; give one per seat (or the class)")
        self.rules = rules_for(len(bots) + 1, rules)
        if seat is not None and not 0 <= seat < self.rules.players:
            raise ValueError(f"seat: must be 0 to {self.rules.players - 1} or None (a seat drawn each match)")
        self.reward = reward_mode(reward)
        self.render_mode = render_mode_of(render_mode)
        self.fixed_seat = seat
        self.illegal_reward = float(illegal_reward)
        self.opponents = bots
        self.table = Table(self.rules, self.reward)
        self.observation_space: spaces.Box = observation_space(self.rules)  # type: ignore[assignment]
        self.action_space = spaces.Discrete(ACTION_COUNT)
        self.seat = 0 if seat is None else seat
        self._seeds: random.Random | None = None
        self._matches = 0
        self._match_id = ""
        self._seated: list[Bot | None] = []
        self._told = [0] * self.rules.players  # events each bot has been given
        self._hands_told = 0  # hands of the match whose end the bots were told
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- Gymnasium -------------------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        """Deal a new match (`seed` restarts the sequence of deals and seats) and play the bots up to the
        learner's first decision."""
        super().reset(seed=seed)
        if seed is not None:
            self._seeds = random.Random(seed)
        elif self._seeds is None:
            self._seeds = random.Random(secrets.randbits(64))
        players = self.rules.players
        self.seat = self._seeds.randrange(players) if self.fixed_seat is None else self.fixed_seat
        self.table.deal(self._seeds.getrandbits(64))
        self._matches += 1
        self._match_id = f"env-{self._matches}"
        others = iter(self.opponents)
        self._seated = [None if seat == self.seat else next(others) for seat in range(players)]
        self._told = [0] * players
        self._hands_told = 0
        names = tuple(LEARNER if bot is None else type(bot).__name__ for bot in self._seated)
        for seat, bot in enumerate(self._seated):
            if bot is not None:
                _call(bot, "on_match_start", MatchInfo(self._match_id, seat, names, self.rules, 1.0))
                self._tell(seat)
        self._play_bots()
        return self._observe(), self._info(False)

    def step(
        self, action: np.int64 | int
    ) -> tuple[npt.NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        if self.table.over:
            raise RuntimeError("the match is over: call reset() for the next one")
        table = self.table
        action_id = int(action)
        legal = table.legal_ids()
        illegal = action_id not in legal
        reward = self.illegal_reward if illegal else 0.0
        if illegal:
            action_id = safe_default([ACTIONS[i] for i in legal]).id
        rewards = table.act(action_id)
        if rewards is not None:
            reward += rewards[self.seat]
        self._tell_hand_ends()
        reward += self._play_bots()
        return self._observe(), reward, table.over, False, self._info(illegal)

    def action_masks(self) -> npt.NDArray[np.int8]:
        """The legal action ids now, as `info["action_mask"]` has them (the name sb3-contrib looks for)."""
        return mask(self.table, self.seat)

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode: single_agent(render_mode='ansi')")
            return None
        return table_text(self.table.match, [_name(bot) for bot in self._seated])

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    # --- the bots' side ---------------------------------------------------------------------------------

    def _observe(self) -> npt.NDArray[np.float32]:
        return vector(self.table, self.seat)

    def _info(self, illegal: bool) -> dict[str, Any]:
        table = self.table
        return {
            "action_mask": mask(table, self.seat),
            "seat": self.seat,
            "hand_number": table.match.hand_number,
            "illegal_action": illegal,
        }

    def _play_bots(self) -> float:
        """Let the bots decide until the learner is to move or the match is over; the learner's rewards."""
        table, earned = self.table, 0.0
        while not table.over and table.to_move != self.seat:
            rewards = table.act(self._decide(table.to_move).id)
            if rewards is not None:
                earned += rewards[self.seat]
            self._tell_hand_ends()
        if table.over:
            self._finish()
        return earned

    def _tell_hand_ends(self) -> None:
        """When hands ended since the bots were last told, tell every bot now (as the server does)."""
        ended = len(self.table.match.hand_results)
        if ended != self._hands_told:
            self._hands_told = ended
            for seat in range(self.rules.players):
                self._tell(seat)

    def _decide(self, seat: int) -> Action:
        bot = self._seated[seat]
        assert bot is not None
        self._tell(seat, hands=False)
        observation = observe(self.table.match, seat, self._match_id)
        legal = observation.legal_actions
        try:
            answer: object = bot.decide(observation)
            if inspect.isawaitable(answer):
                answer = self._event_loop().run_until_complete(_awaited(answer))
        except Exception as error:
            log.warning(
                "%s at seat %d: decide() raised %r; the safe default applied", _name(bot), seat, error
            )
            return safe_default(legal)
        if isinstance(answer, Action) and answer in legal:
            return answer
        log.warning("%s at seat %d: decide() returned %r, not a legal action; applied the safe default",
                    _name(bot), seat, answer)  # fmt: skip
        return safe_default(legal)

    def _tell(self, seat: int, hands: bool = True) -> None:
        """Give `seat`'s bot the events it has not had, as it may see them; then the result of each hand
        among them (`hands`: at a hand's end, as the server does)."""
        bot = self._seated[seat]
        if bot is None:
            return
        events = self.table.match.events
        first, self._told[seat] = self._told[seat], len(events)
        if first == len(events):
            return
        _call(bot, "on_events", self._match_id, [seen_by(events[i], seat) for i in range(first, len(events))])
        if hands:
            for event in events[first:]:
                if isinstance(event, HandEnded):
                    totals = tuple(self.table.match.totals_after(event))
                    _call(bot, "on_hand_end", HandResult(self._match_id, event, totals))

    def _finish(self) -> None:
        result = self.table.match.result
        assert result is not None
        names = tuple(_name(bot) for bot in self._seated)
        for seat, bot in enumerate(self._seated):
            if bot is not None:
                self._tell(seat)
                _call(bot, "on_match_end", replace(result, match_id=self._match_id, bots=names))

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop


def single_agent(
    opponents: Sequence[Opponent],
    rules: RulesConfig | Mapping[str, Any] | None = None,
    reward: str | Reward = Reward.HAND,
    seat: int | None = None,
    illegal_reward: float = 0.0,
    render_mode: str | None = None,
) -> SingleAgentEnv:
    """A `SingleAgentEnv`: the learner against `opponents` (Bot instances or classes), one per seat, at
    `len(opponents) + 1` seats; `seat` fixes the learner's seat (default: drawn for each match)."""
    return SingleAgentEnv(opponents, rules, reward, seat, illegal_reward, render_mode)


def _bot(opponent: Opponent) -> Bot:
    made = opponent if isinstance(opponent, Bot) or not callable(opponent) else opponent()
    if not isinstance(made, Bot):
        raise TypeError(f"opponents: {opponent!r} is neither a uno_arena.sdk.Bot nor makes one")
    return made


def _name(bot: Bot | None) -> str:
    return LEARNER if bot is None else type(bot).__name__


def _call(bot: Bot, hook: str, *args: object) -> None:
    """A callback other than `decide`: an error in it is logged, never fatal (as in the arena)."""
    try:
        getattr(bot, hook)(*args)
    except Exception as error:
        log.warning("%s: %s() raised %r", type(bot).__name__, hook, error)


async def _awaited(answer: Any) -> object:
    return await answer
