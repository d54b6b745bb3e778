"""Hosting one match: ask the seated bots, keep the clocks, never trust an answer.

A bot's fault never crashes or hangs the match. Each becomes a recorded
`Fault` (TIMEOUT, ILLEGAL, INVALID, DISCONNECTED); the server applies the safe
default action (draw, keep, accept, pass, done: no jump-in, no more cards laid;
the first legal action otherwise: the first colour for a first-card Wild, a
seven-0 swap with the first other seat) and counts a strike. At `max_strikes` strikes, or when a disconnected
bot is not back within the grace period (a DISCONNECTED fault too), the seat forfeits: with one seat
left the match ends at once (MATCH_END_FORFEIT), otherwise the forfeited seat
plays on by default actions so the others finish their match.

Every recorded fault says where it happened (`action_index`, `event_index`: the decision's place in
the match's actions and log), so a replay can show it, and the automatic moves, where they were made.

A bot may also report that its own code failed on a request (BotError): that
is recorded as a BOT_ERROR fault, so organisers see it, without a strike unless
the server's `bot_errors_strike` says otherwise.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from uno_arena.rules import (
    ACCEPT,
    DONE,
    DRAW,
    KEEP,
    PASS,
    Action,
    InvalidActionError,
    Phase,
    RulesConfig,
    action_from_id,
    apply,
    canonical,
    legal_actions,
    new_match,
    public,
    seen_by,
)
from uno_arena.rules.event import Event, HandEnded
from uno_arena.server import wire
from uno_arena.server.gateway import BotConnection, Disconnected, Gateway, PendingDecision
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb

log = logging.getLogger(__name__)

UNKNOWN_REQUEST = -2  # answer() sentinel: the bot answered a request id we never sent
_DEFAULTS = (DRAW, KEEP, ACCEPT, PASS, DONE)
ASKED_KEPT = 1024  # requests per match a BotError may still quote (the connection keeps as many answered)


LOG_CHUNK_EVENTS = 2000  # events per `log` message: well under the 4 MiB message limit


def log_chunks(events: list[Event]) -> list[control_pb2.MatchProgress]:
    """The complete log as `log` progress messages, in order."""
    return [
        control_pb2.MatchProgress(log=wire.event_log_chunk(events[i : i + LOG_CHUNK_EVENTS]))
        for i in range(0, len(events), LOG_CHUNK_EVENTS)
    ]


def _time_out(future: asyncio.Future[int]) -> None:
    """The decision clock: cheaper than `asyncio.wait_for`, which costs an extra task wake-up."""
    if not future.done():
        future.set_exception(TimeoutError())


def _answered(asked: Asked) -> Action | None:
    """The legal action a bot answered to a request whose decision is not applied yet, if any."""
    future = asked.future
    if not future.done() or future.cancelled() or future.exception() is not None:
        return None
    return next((a for a in asked.legal if a.id == future.result()), None)


def default_action(legal: list[Action]) -> Action:
    """The safe choice applied for a faulty seat."""
    for action in _DEFAULTS:
        if action in legal:
            return action
    return legal[0]


@dataclass(eq=False, slots=True)
class Asked:
    """A request sent to a seat, kept so that a later BotError can be recorded against it."""

    seat: int
    legal: list[Action]
    future: asyncio.Future[int]
    at: tuple[int, int]  # the decision's place: (action index, event index), for a later BotError
    applied: Action | None = None  # once the decision is settled
    reported: bool = False  # a BotError was recorded for it


@dataclass(frozen=True, slots=True)
class MatchSpec:
    match_id: str
    bots: tuple[str, ...]
    config: RulesConfig
    seed: int
    decision_timeout: float
    max_strikes: int
    disconnect_grace: float


@dataclass(eq=False)
class MatchHost:
    """One running match and everyone watching it."""

    spec: MatchSpec
    gateway: Gateway
    subscribers: list[asyncio.Queue[control_pb2.MatchProgress | None]] = field(default_factory=list)
    spectators: list[asyncio.Queue[control_pb2.SpectatorEvent | None]] = field(default_factory=list)
    ending: list[control_pb2.MatchProgress] | None = None  # log chunks, then `finished`
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.match = new_match(self.spec.config, random.Random(self.spec.seed))
        players = len(self.spec.bots)
        self.strikes = [0] * players
        self.forfeited: list[int] = []
        self.faults: list[pb.Fault] = []
        self.seated: list[BotConnection | None] = [None] * players  # the connection told of this match
        self.sent = [0] * players  # events delivered per seat
        self.published = 0  # events published to spectators and subscribers
        self.lost_at: dict[int, float] = {}  # seat -> monotonic time its connection was lost
        # per seat, so that a seat's request ids say nothing of how often the others were asked
        # (whether a drawn card could be played, whether a hand held a playable card: RULINGS 29)
        self._requests = [itertools.count(1) for _ in range(players)]
        self._asked: OrderedDict[str, Asked] = OrderedDict()  # request id -> what was asked, newest last
        self.started_at = time.monotonic()

    # --- the match loop ---------------------------------------------------

    async def run(self) -> None:
        """Play to the end; always finishes (the result says how), never raises for a bot's sake."""
        reason: pb.MatchEnd | None = None
        self.gateway.take_bot_errors(self.spec.match_id, self.bot_error)
        try:
            for seat in range(len(self.spec.bots)):
                self._seat(seat)
            self._publish()
            while self.match.result is None and reason is None:
                seat = self.match.hand.to_move
                legal = legal_actions(self.match)
                action = await self._decision(seat, legal)
                apply(self.match, action)
                if len(self.forfeited) >= len(self.spec.bots) - 1:
                    reason = pb.MATCH_END_FORFEIT
                self._publish()
        except asyncio.CancelledError:
            reason = pb.MATCH_END_ABORTED
            self.finish(reason)
            raise
        self.finish(reason)

    async def _decision(self, seat: int, legal: list[Action]) -> Action:
        if seat in self.forfeited:
            return default_action(legal)
        live = self.gateway.connection(self.spec.bots[seat])
        if len(legal) == 1 and (live is None or live.closed or not live.ask_single):
            return legal[0]  # nothing to choose: no round trip, and no wait for a lost bot
        connection = await self._connection(seat)
        if connection is None:
            applied = default_action(legal)
            detail = f"not connected, nor back within the {self.spec.disconnect_grace:g} s grace period"
            self._record(seat, pb.FAULT_KIND_DISCONNECTED, detail, applied, self._position(), forfeit=True)
            return applied
        return await self._ask(connection, seat, legal)

    def _position(self) -> tuple[int, int]:
        """Where the decision now due stands: (its action's index, the events logged before it)."""
        return len(self.match.actions), len(self.match.events)

    async def _connection(self, seat: int) -> BotConnection | None:
        """The seat's live connection, waiting out the rest of a disconnect grace period."""
        name = self.spec.bots[seat]
        lost = self.lost_at.get(seat)
        live = self.gateway.connection(name)
        if live is None or live.closed:
            lost = lost if lost is not None else time.monotonic()
            self.lost_at[seat] = lost
            remaining = self.spec.disconnect_grace - (time.monotonic() - lost)
            live = await self.gateway.wait_for_connection(name, max(remaining, 0.0))
            if live is None:
                return None
        self.lost_at.pop(seat, None)
        if live is not self.seated[seat]:
            self._seat(seat, live)
        return live

    async def _ask(self, connection: BotConnection, seat: int, legal: list[Action]) -> Action:
        request_id = f"{self.spec.match_id}#{seat}.{next(self._requests[seat])}"
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        connection.pending[request_id] = PendingDecision(self.spec.match_id, future)
        asked = self._asked[request_id] = Asked(seat, legal, future, self._position())
        while len(self._asked) > ASKED_KEPT:
            self._asked.popitem(last=False)
        asked.applied = await self._answer(connection, request_id, future, seat, legal)
        return asked.applied

    async def _answer(
        self, connection: BotConnection, request_id: str, future: asyncio.Future[int], seat: int,
        legal: list[Action],
    ) -> Action:  # fmt: skip
        deadline_ms = int(self.spec.decision_timeout * 1000)
        events = [wire.event_element(e) for e in self._unsent(seat)]
        request = wire.decision_request_bytes(
            self.match, seat, legal, self.spec.match_id, request_id, deadline_ms, events
        )
        connection.send(request)
        clock = asyncio.get_running_loop().call_later(self.spec.decision_timeout, _time_out, future)
        try:
            action_id = await future
        except TimeoutError:
            connection.expire(request_id)
            return self._fault(
                seat, pb.FAULT_KIND_TIMEOUT, f"no answer within {self.spec.decision_timeout:g} s", legal
            )
        except Disconnected as lost:
            self.lost_at[seat] = time.monotonic()
            return self._fault(seat, pb.FAULT_KIND_DISCONNECTED, str(lost), legal)
        finally:
            clock.cancel()
        return self._checked(seat, action_id, legal)

    def _checked(self, seat: int, action_id: int, legal: list[Action]) -> Action:
        if action_id == UNKNOWN_REQUEST:
            return self._fault(seat, pb.FAULT_KIND_INVALID, "answered an unknown request id", legal)
        try:
            action = canonical(self.match.hand, action_from_id(action_id))
        except InvalidActionError as error:
            return self._fault(seat, pb.FAULT_KIND_INVALID, str(error), legal)
        if action not in legal:
            detail = f"{action} (id {action_id}) is not legal now; legal ids: {[a.id for a in legal]}"
            return self._fault(seat, pb.FAULT_KIND_ILLEGAL, detail, legal)
        return action

    # --- faults -------------------------------------------------------------

    def _fault(self, seat: int, kind: pb.FaultKind, detail: str, legal: list[Action]) -> Action:
        applied = default_action(legal)
        self._record(seat, kind, detail, applied, self._position())
        return applied

    def bot_error(self, connection: BotConnection, request_id: str, detail: str) -> str | None:
        """Record a bot's report that its code failed on `request_id` (a `BotError`), once per request.

        Returns None when recorded, else why it was ignored. `applied` is what the bot answered if
        that is known and legal by now, else the safe default (what the SDK answers).
        """
        asked = self._asked.get(request_id)
        if asked is None:
            return f"BotError for {request_id!r}: not a recent request of this match: ignored"
        if asked.reported:
            return f"duplicate BotError for {request_id!r}: ignored (it was recorded)"
        asked.reported = True
        applied = asked.applied if asked.applied is not None else _answered(asked)
        if applied is None:
            applied = default_action(asked.legal)
        strike = connection.settings.bot_errors_strike
        self._record(asked.seat, pb.FAULT_KIND_BOT_ERROR, detail or "(no detail)", applied, asked.at,
                     strike=strike)  # fmt: skip
        return None

    def _record(
        self, seat: int, kind: pb.FaultKind, detail: str, applied: Action, at: tuple[int, int],
        strike: bool = True, forfeit: bool = False,
    ) -> None:  # fmt: skip
        """Record, log and announce a fault at decision `at` (`_position`); a strike may make the seat
        forfeit, and `forfeit` makes it."""
        if strike:
            self.strikes[seat] += 1
        struck_out = strike and self.strikes[seat] >= self.spec.max_strikes
        forfeits = seat not in self.forfeited and (forfeit or struck_out)
        fault = pb.Fault(
            match_id=self.spec.match_id,
            seat=seat,
            kind=kind,
            detail=detail,
            applied=wire.action_message(applied),
            strikes=self.strikes[seat],
            forfeited=forfeits,
            action_index=at[0],
            event_index=at[1],
        )
        self.faults.append(fault)
        log.info("match %s seat %d (%s): %s: %s", self.spec.match_id, seat, self.spec.bots[seat],
                 pb.FaultKind.Name(kind), detail)  # fmt: skip
        self._tell(seat, bot_pb2.ServerMessage(fault=fault))
        self._progress(control_pb2.MatchProgress(fault=fault))
        if forfeits:
            self._forfeit(seat)

    def _forfeit(self, seat: int) -> None:
        if seat not in self.forfeited:
            self.forfeited.append(seat)
            log.info("match %s: seat %d (%s) forfeits", self.spec.match_id, seat, self.spec.bots[seat])

    # --- telling people -----------------------------------------------------

    def _seat(self, seat: int, connection: BotConnection | None = None) -> None:
        """Tell a (re)connected bot about this match and everything it has missed."""
        connection = connection or self.gateway.connection(self.spec.bots[seat])
        self.seated[seat] = connection
        self.sent[seat] = 0
        if connection is None:
            return
        started = bot_pb2.MatchStarted(
            match_id=self.spec.match_id,
            seat=seat,
            bots=list(self.spec.bots),
            rules=wire.rules(self.spec.config),
            decision_timeout_ms=int(self.spec.decision_timeout * 1000),
            max_strikes=self.spec.max_strikes,
        )
        connection.send(bot_pb2.ServerMessage(match_started=started))
        self._deliver(seat)

    def _tell(self, seat: int, message: bot_pb2.ServerMessage) -> None:
        connection = self.seated[seat]
        if connection is not None and not connection.closed:
            connection.send(message)

    def _unsent(self, seat: int) -> list[Event]:
        """The events `seat` has not been sent, as it may see them; from now on they count as sent."""
        events = self.match.events[self.sent[seat] :]
        self.sent[seat] = len(self.match.events)
        return [seen_by(e, seat) for e in events]

    def _deliver(self, seat: int) -> None:
        """Send `seat` what it has not had (an Events message), then results of hands among it."""
        first = self.sent[seat]
        events = [wire.event(e) for e in self._unsent(seat)]
        if not events:
            return
        self._tell(
            seat, bot_pb2.ServerMessage(events=bot_pb2.Events(match_id=self.spec.match_id, events=events))
        )
        for event in self.match.events[first:]:
            if isinstance(event, HandEnded):
                result = bot_pb2.HandResult(match_id=self.spec.match_id, hand=wire.hand_ended(event))
                result.totals.extend(self._totals_after(event))
                self._tell(seat, bot_pb2.ServerMessage(hand_result=result))

    def _totals_after(self, ended: HandEnded) -> list[int]:
        totals = [0] * len(self.spec.bots)
        for hand in self.match.hand_results:
            totals = [t + p for t, p in zip(totals, hand.points, strict=True)]
            if hand is ended:
                break
        return totals

    def _publish(self, final: bool = False) -> None:
        """New events: to spectators and control callers now, to the seats at the end of a hand.

        Held while a seat decides whether to play the card it drew: a batch ending with that draw
        would tell spectators the card can be played (RULINGS 29). They go out with the decision's.
        """
        if not final and self.match.result is None and self.match.hand.phase is Phase.DRAWN:
            return
        events = self.match.events[self.published :]
        self.published = len(self.match.events)
        if not events:
            return
        if any(isinstance(e, HandEnded) for e in events):
            for seat in range(len(self.spec.bots)):
                if self.seated[seat] is not None:
                    self._deliver(seat)
        if self.spectators:  # encode public events only when someone watches
            spectated = control_pb2.SpectatorEvent(
                match_id=self.spec.match_id, events=[wire.event(public(e)) for e in events]
            )
            for queue in self.spectators:
                queue.put_nowait(spectated)
        for event in events:
            if isinstance(event, HandEnded):
                self._progress(control_pb2.MatchProgress(hand=wire.hand_ended(event)))

    def _progress(self, message: control_pb2.MatchProgress) -> None:
        for queue in self.subscribers:
            queue.put_nowait(message)

    # --- the end ------------------------------------------------------------

    def finish(self, reason: pb.MatchEnd | None) -> None:
        self.gateway.drop_bot_errors(self.spec.match_id)  # a BotError quoting this match is a stray now
        self._publish(final=True)  # events held back for a drawn-card decision that will not come
        match, players = self.match, len(self.spec.bots)
        if reason is None and match.result is not None:
            code, winners, totals = (
                wire.MATCH_ENDS[match.result.reason],
                match.result.winners,
                match.result.totals,
            )
        else:
            code, totals = reason or pb.MATCH_END_ABORTED, tuple(match.totals)
            standing = [s for s in range(players) if s not in self.forfeited]
            winners = tuple(standing) if code == pb.MATCH_END_FORFEIT else ()
        faults_by_seat = [sum(1 for f in self.faults if f.seat == s) for s in range(players)]
        result = wire.match_result(
            self.spec.match_id, code, winners, totals, match.hand_results, list(self.spec.bots),
            sorted(self.forfeited), faults_by_seat,
        )  # fmt: skip
        finished = control_pb2.FinishedMatch(
            result=result,
            event_count=len(match.events),
            actions=[a.id for a in match.actions],
            seed=self.spec.seed,
            rules=wire.rules(self.spec.config),
            faults=self.faults,
        )
        for seat in range(players):
            self._deliver(seat)
            self._tell(seat, bot_pb2.ServerMessage(match_finished=bot_pb2.MatchFinished(result=result)))
        self.ending = [*log_chunks(match.events), control_pb2.MatchProgress(finished=finished)]
        for message in self.ending:
            self._progress(message)
        for queue in self.subscribers:
            queue.put_nowait(None)
        for spectator in self.spectators:
            spectator.put_nowait(None)
        self.done.set()
        elapsed = time.monotonic() - self.started_at
        log.info(
            "match %s finished: %s bots=%s winners=%s totals=%s hands=%d faults=%d forfeited=%s %.1fs",
            self.spec.match_id, pb.MatchEnd.Name(code), ",".join(self.spec.bots), list(winners), list(totals),
            len(match.hand_results), len(self.faults), sorted(self.forfeited), elapsed,
        )  # fmt: skip
