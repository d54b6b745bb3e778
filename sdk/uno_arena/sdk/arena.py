"""The local arena: bots play whole matches in-process, no server, no Redis, no network.

```python
from uno_arena.sdk.arena import play
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot

result = play([GreedyBot, RandomBot], seats=2, matches=100, seed=1)
for bot in result.bots:
    print(bot.name, bot.win_rate, bot.win_low, bot.win_high)
```

Each bot gets what a connected bot gets, the rules core's own values (a connected bot has them from
the codec, `uno_arena.v1.codec`), and the same callbacks in the server's order: `on_match_start`, then
`on_events` (the events its seat may see, batched as the server batches them: the deal, before each of
its decisions, at each hand's end), `decide`, `on_hand_end`, `on_match_end`, and `on_fault` when its
`decide` raised, returned something that is not legal, or (with a `deadline`) ran out of time: the
arena then applies the safe default (draw, keep, accept, pass), as the SDK and the server would. It
asks what the server asks: every decision but one whose single legal action every seat can tell is
the only one (`uno_arena.rules.must_ask`: the swap after a 7 at two seats), which it applies without
asking unless `ask_single`. The arena never forfeits a seat: it measures strength, and every match
runs to its end.

Every seat has its own instance of its bot, kept from match to match as a connection keeps it; bots
listed fewer than the seats fill them in turn, and the seating rotates by one seat each match so no
bot keeps the first seat. Match `i` is dealt from seed `seed + i`: a run is repeated by its seed (and
bots that draw their own random numbers from seeded generators).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeAlias

from uno_arena.rules import (
    Action,
    ConfigError,
    Event,
    Match,
    MatchResult,
    Observation,
    RulesConfig,
    apply,
    legal_actions,
    must_ask,
    new_match,
    observe,
    safe_default,
    seen_by,
)
from uno_arena.rules.config import MAX_PLAYERS, MIN_PLAYERS
from uno_arena.rules.event import HandEnded
from uno_arena.rules.statistics import wilson
from uno_arena.sdk import _bot_errors
from uno_arena.sdk.bot import Bot
from uno_arena.sdk.decision_threads import DecisionThreads
from uno_arena.sdk.messages import Fault, FaultKind, HandResult, MatchInfo

log = logging.getLogger(__name__)

BotFactory: TypeAlias = Callable[[], Bot]  # a Bot subclass, or any function making a fresh bot
DEFAULT_DECISION_TIMEOUT = 1.0  # what `MatchInfo.decision_timeout` says when no deadline is enforced
LOGGED_ERRORS_PER_BOT = 10  # errors logged at WARNING per bot; later ones at DEBUG (all are counted)


@dataclass(frozen=True, slots=True)
class BotStats:
    """One bot's results over an arena run (all its seats together).

    `wins` counts a shared win as 1/winners, so the win rates of a run add up to 1; `win_low` and
    `win_high` bound the win rate's 95% Wilson interval. `points_per_match` is the mean final total
    of its seats (the leaderboard's points per match). `exceptions` counts its `decide` raising or
    returning something that is not legal (each a `BOT_ERROR` fault) and errors in its other
    callbacks; `timeouts` its decisions abandoned at the deadline; `decisions` the times `decide`
    was asked.
    """

    name: str
    matches: int
    wins: float
    win_rate: float
    win_low: float
    win_high: float
    points_per_match: float
    exceptions: int
    timeouts: int
    decisions: int


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """One match of a run: what replays it (`config`, `seed`, `result.actions`) and who sat where.

    `bots` names each seat's player (a bot filling several seats is `Name#1`, `Name#2` ...), `entries`
    the index of its bot in `ArenaResult.bots`; `faults` are the `Fault` views its bots were given.
    """

    match_id: str
    index: int
    seed: int
    config: RulesConfig
    bots: tuple[str, ...]
    entries: tuple[int, ...]
    result: MatchResult
    faults: tuple[Fault, ...]
    decisions: int
    seconds: float

    @property
    def winners(self) -> tuple[int, ...]:
        return self.result.winners

    @property
    def totals(self) -> tuple[int, ...]:
        return self.result.totals


@dataclass(frozen=True, slots=True)
class ArenaResult:
    """A whole run: per-bot statistics, the matches (unless not kept) and the speed.

    `actions` counts every action applied (forced ones too), `decisions` the ones a bot was asked.
    """

    seed: int
    seats: int
    config: RulesConfig
    deadline: float | None
    bots: tuple[BotStats, ...]
    matches: tuple[MatchOutcome, ...]
    played: int
    actions: int
    decisions: int
    seconds: float

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else 0.0

    @property
    def actions_per_s(self) -> float:
        return self.actions / self.seconds if self.seconds > 0 else 0.0

    def stats(self, name: str) -> BotStats:
        found = next((b for b in self.bots if b.name == name), None)
        if found is None:
            raise KeyError(f"no bot {name!r} in this run (bots: {', '.join(b.name for b in self.bots)})")
        return found


class ArenaError(ValueError):
    """Arguments the arena cannot play: the message says which and why."""


def play(
    bots: Sequence[BotFactory] | Mapping[str, BotFactory],
    *,
    seats: int | None = None,
    matches: int = 1,
    rules: RulesConfig | None = None,
    seed: int | None = None,
    deadline: float | None = None,
    ask_single: bool = False,
    on_match: Callable[[MatchOutcome], None] | None = None,
    keep_matches: bool = True,
) -> ArenaResult:
    """Play `matches` matches of `bots` at `seats` seats (default: one per bot, at least 2).

    `bots` are Bot classes or factories (named by their `__name__`; a mapping names them itself).
    `rules` gives the rules (`players` is set to `seats`); `seed` the first match's deal (a
    fresh one if None, in `ArenaResult.seed`). `deadline`, in seconds, runs each `decide` in a worker
    thread (or under `asyncio.wait_for`) and abandons it at the deadline; off by default.
    `on_match` is called after each match; `keep_matches=False` keeps only the statistics (long runs).
    """
    named = _named(bots)
    seats = seats if seats is not None else max(MIN_PLAYERS, len(named))
    if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise ArenaError(f"seats: must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {seats}")
    if len(named) > seats:
        raise ArenaError(f"{len(named)} bots for {seats} seats: list at most as many bots as seats")
    if matches < 0:
        raise ArenaError(f"matches: must be >= 0, got {matches}")
    if deadline is not None and not deadline > 0:
        raise ArenaError(f"deadline: must be > 0 seconds, got {deadline}")
    try:
        config = RulesConfig.from_dict({**(rules or RulesConfig()).to_dict(), "players": seats})
    except ConfigError as error:
        raise ArenaError(f"rules: {error}") from None
    seed = secrets.randbits(63) if seed is None else seed
    arena = _Arena(named, seats, config, deadline, ask_single)
    outcomes: list[MatchOutcome] = []
    started = time.perf_counter()
    try:
        for index in range(matches):
            outcome = arena.play_match(index, seed + index, f"arena-{seed}-{index}")
            if keep_matches:
                outcomes.append(outcome)
            if on_match is not None:
                on_match(outcome)
    finally:
        arena.close()
    seconds = time.perf_counter() - started
    return ArenaResult(seed, seats, config, deadline, arena.stats(), tuple(outcomes), arena.played,
                       arena.actions, arena.decisions, seconds)  # fmt: skip


def _named(bots: Sequence[BotFactory] | Mapping[str, BotFactory]) -> list[tuple[str, BotFactory]]:
    """(name, factory) pairs; a name given twice gets `-2`, `-3` ... so each bot has its own row."""
    pairs = list(bots.items()) if isinstance(bots, Mapping) else [(_name_of(f), f) for f in bots]
    if not pairs:
        raise ArenaError("no bots: give at least one")
    named: list[tuple[str, BotFactory]] = []
    taken: set[str] = set()
    for name, factory in pairs:
        if not callable(factory):
            raise ArenaError(f"bot {name!r}: expected a Bot class or a function making one, got {factory!r}")
        unique, copy = name, 1
        while unique in taken:
            copy += 1
            unique = f"{name}-{copy}"
        taken.add(unique)
        named.append((unique, factory))
    return named


def _name_of(factory: BotFactory) -> str:
    return str(getattr(factory, "__name__", None) or type(factory).__name__)


# --- one bot instance at one seat -------------------------------------------------------------------


@dataclass(eq=False)
class _Player:
    """One instance of a bot, with its tallies; it plays one seat per match, a different one each match."""

    name: str  # its seat's name in replays: the bot's name, `Name#2` for a bot's second instance
    entry: int
    bot: Bot
    is_async: bool
    tally: _Tally


@dataclass(eq=False)
class _Tally:
    matches: int = 0
    wins: float = 0.0
    points: int = 0
    seats: int = 0
    exceptions: int = 0
    timeouts: int = 0
    decisions: int = 0
    logged: int = 0


# --- deadlines ----------------------------------------------------------------------------------------


# --- the arena ----------------------------------------------------------------------------------------


class _Arena:
    def __init__(self, named: list[tuple[str, BotFactory]], seats: int, config: RulesConfig,
                 deadline: float | None, ask_single: bool) -> None:  # fmt: skip
        self.names = [name for name, _ in named]
        self.config = config
        self.deadline = deadline
        self.ask_single = ask_single
        self.seats = seats
        self.timeout = deadline if deadline is not None else DEFAULT_DECISION_TIMEOUT
        tallies = [_Tally() for _ in named]
        copies = [sum(1 for k in range(seats) if k % len(named) == entry) for entry in range(len(named))]
        self.players: list[_Player] = []
        for k in range(seats):
            entry = k % len(named)
            name, factory = named[entry]
            label = name if copies[entry] == 1 else f"{name}#{k // len(named) + 1}"
            try:
                bot = factory()
            except Exception as error:
                raise ArenaError(f"bot {name!r}: making it raised {_bot_errors.raised(error)}") from error
            if not isinstance(bot, Bot):
                raise ArenaError(
                    f"bot {name!r}: its factory made {type(bot).__name__}, not a uno_arena.sdk.Bot"
                )
            self.players.append(
                _Player(label, entry, bot, inspect.iscoroutinefunction(bot.decide), tallies[entry])
            )
        self.tallies = tallies
        self.played = self.actions = self.decisions = 0
        self._workers = DecisionThreads("arena-decide")
        self._loop: asyncio.AbstractEventLoop | None = None

    def close(self) -> None:
        self._workers.close()
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def stats(self) -> tuple[BotStats, ...]:
        rows = []
        for name, tally in zip(self.names, self.tallies, strict=True):
            low, high = wilson(tally.wins, tally.matches)
            rate = tally.wins / tally.matches if tally.matches else 0.0
            per_match = tally.points / tally.seats if tally.seats else 0.0
            rows.append(BotStats(name, tally.matches, tally.wins, rate, low, high, per_match,
                                 tally.exceptions, tally.timeouts, tally.decisions))  # fmt: skip
        return tuple(rows)

    # --- one match ---

    def play_match(self, index: int, seed: int, match_id: str) -> MatchOutcome:
        started = time.perf_counter()
        seated = [self.players[(seat + index) % self.seats] for seat in range(self.seats)]
        match = new_match(self.config, random.Random(seed))
        game = _Match(self, match_id, match, seated)
        game.run()
        result = match.result
        assert result is not None
        for seat, player in enumerate(seated):
            tally = player.tally
            tally.seats += 1
            tally.points += result.totals[seat]
            if seat in result.winners:
                tally.wins += 1 / len(result.winners)
        for entry in {player.entry for player in seated}:
            self.tallies[entry].matches += 1
        self.played += 1
        self.actions += len(result.actions)
        self.decisions += game.decisions
        return MatchOutcome(match_id, index, seed, self.config, tuple(p.name for p in seated),
                            tuple(p.entry for p in seated), result, tuple(game.faults), game.decisions,
                            time.perf_counter() - started)  # fmt: skip

    # --- calling the bot's code ---

    def hook(self, player: _Player, name: str, *args: object) -> None:
        """A callback other than `decide`; an error in it is counted and logged, never fatal."""
        try:
            getattr(player.bot, name)(*args)
        except Exception as error:
            player.tally.exceptions += 1
            self.log_error(player, f"{name}() raised {_bot_errors.raised(error)}")

    def decide(self, player: _Player, observation: Observation) -> object:
        """The bot's answer (anything: the caller checks it), `_Raised` when it raised, or `TIMED_OUT`."""
        bot = player.bot
        try:
            if self.deadline is None:
                answer: object = bot.decide(observation)
                if inspect.isawaitable(answer):
                    answer = self._event_loop().run_until_complete(_awaited(answer))
                return answer
            started = time.perf_counter()
            if player.is_async:
                answer = bot.decide(observation)  # a coroutine: it runs once awaited, below
            else:
                future = self._workers.submit(bot.decide, observation)
                done, _ = concurrent.futures.wait((future,), self.deadline)
                if not done:
                    return TIMED_OUT  # abandoned: its thread finishes on its own and goes back to the pool
                answer = future.result()
            if inspect.isawaitable(answer):
                left = self.deadline - (time.perf_counter() - started)
                try:
                    answer = self._event_loop().run_until_complete(asyncio.wait_for(_awaited(answer), left))
                except TimeoutError:
                    if time.perf_counter() - started >= self.deadline:
                        return TIMED_OUT
                    raise  # the bot's own TimeoutError
            return answer
        except Exception as error:
            return _Raised(error)

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop

    def log_error(self, player: _Player, message: str) -> None:
        player.tally.logged += 1
        if player.tally.logged <= LOGGED_ERRORS_PER_BOT:
            log.warning("%s: %s", player.name, message)
            if player.tally.logged == LOGGED_ERRORS_PER_BOT:
                log.warning("%s: further errors are counted, logged at debug level only", player.name)
        else:
            log.debug("%s: %s", player.name, message)


async def _awaited(answer: Awaitable[object]) -> object:
    return await answer


TIMED_OUT = object()  # `_Arena.decide`: no answer by the deadline


@dataclass(frozen=True, slots=True)
class _Raised:
    """`_Arena.decide`: the bot's `decide` raised this."""

    error: Exception


class _Match:
    """One match in progress, and what each seat has been told of it (as the server's `MatchHost`)."""

    def __init__(self, arena: _Arena, match_id: str, match: Match, seated: list[_Player]) -> None:
        self.arena = arena
        self.match_id = match_id
        self.match = match
        self.seated = seated
        self.sent = [0] * len(seated)  # events delivered per seat
        self.strikes = [0] * len(seated)
        self.faults: list[Fault] = []
        self.decisions = 0

    def run(self) -> None:
        arena, match = self.arena, self.match
        bots = tuple(p.name for p in self.seated)
        for seat, player in enumerate(self.seated):
            info = MatchInfo(self.match_id, seat, bots, arena.config, int(arena.timeout * 1000) / 1000)
            arena.hook(player, "on_match_start", info)
            self._deliver(seat)
        ask_single = arena.ask_single
        hands = len(match.hand_results)
        while match.result is None:
            seat = match.hand.to_move
            legal = legal_actions(match)
            asked = ask_single or must_ask(match, legal)  # as the server asks (docs/protocol.md)
            action = self._ask(seat, legal) if asked else legal[0]
            apply(match, action)
            if len(match.hand_results) != hands:  # a hand ended: every seat hears of it now
                hands = len(match.hand_results)
                for other in range(len(self.seated)):
                    self._deliver(other)
        result = match.result
        forfeited: tuple[int, ...] = ()
        for seat, player in enumerate(self.seated):
            self._deliver(seat)
            arena.hook(player, "on_match_end", replace(result, match_id=self.match_id, bots=bots,
                                                        forfeited=forfeited))  # fmt: skip

    def _events_for(self, seat: int) -> list[Event]:
        """The events `seat` has not been told, as it may see them; from now on they count as told."""
        events = self.match.events
        first, self.sent[seat] = self.sent[seat], len(events)
        return [seen_by(events[i], seat) for i in range(first, len(events))]

    def _deliver(self, seat: int) -> None:
        """As the server's `_deliver`: an `on_events` of what `seat` has not had, then the result of
        each hand that ended among them."""
        first = self.sent[seat]
        told = self._events_for(seat)
        if not told:
            return
        player = self.seated[seat]
        self.arena.hook(player, "on_events", self.match_id, told)
        for event in self.match.events[first:]:
            if isinstance(event, HandEnded):
                result = HandResult(self.match_id, event, tuple(self.match.totals_after(event)))
                self.arena.hook(player, "on_hand_end", result)

    def _ask(self, seat: int, legal: list[Action]) -> Action:
        arena, player = self.arena, self.seated[seat]
        told = self._events_for(seat)
        if told:
            arena.hook(player, "on_events", self.match_id, told)
        observation = observe(self.match, seat, self.match_id)
        player.tally.decisions += 1
        self.decisions += 1
        answer = arena.decide(player, observation)
        if isinstance(answer, Action) and answer in legal:
            return answer
        applied = default = safe_default(legal)
        if answer is TIMED_OUT:
            player.tally.timeouts += 1
            kind, detail = FaultKind.TIMEOUT, f"no answer within {arena.deadline:g} s"
            self.strikes[seat] += 1
        else:
            player.tally.exceptions += 1
            kind = FaultKind.BOT_ERROR
            if isinstance(answer, _Raised):
                detail = f"decide() raised {_bot_errors.raised(answer.error)}"
            else:
                detail = _bot_errors.returned(answer)
        arena.log_error(player, f"match {self.match_id} seat {seat}: {detail}; applied {default}")
        fault = Fault(self.match_id, seat, kind, detail, default.id, self.strikes[seat], False,
                      len(self.match.actions), len(self.match.events))  # fmt: skip
        self.faults.append(fault)
        arena.hook(player, "on_fault", fault)
        return applied
