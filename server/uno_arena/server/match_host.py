"""Hosting one match: ask the seated bots, keep the clocks, never trust an answer.

A bot's fault never crashes or hangs the match. Each becomes a recorded
`Fault` (TIMEOUT, ILLEGAL, INVALID, DISCONNECTED); the server applies the safe
default action (draw, keep, accept, pass, done: no jump-in, no more cards laid;
the first legal action otherwise: the first colour for a first-card Wild, a
seven-0 swap with the first other seat) and counts a strike. At `max_strikes` strikes, or when a disconnected
bot is not back within the grace period (a DISCONNECTED fault too), the seat forfeits: with one seat
left the match ends at once (MATCH_END_FORFEIT), otherwise the forfeited seat
plays on by default actions so the others finish their match.

A deadline that passes with nothing at all heard from the bot since it was asked is not charged at
once: a dead link looks the same, and the server's keepalive needs a few seconds to tell (`_hold`), so
the decision waits for that verdict, and a dead link is a disconnect, with its grace period, rather than
a string of timeouts that forfeits the seat first.

Every recorded fault says where it happened (`action_index`, `event_index`: the decision's place in
the match's actions and log), so a replay can show it, and the automatic moves, where they were made.

A bot may also report that its own code failed on a request (BotError): that
is recorded as a BOT_ERROR fault, so organisers see it, without a strike unless
the server's `bot_errors_strike` says otherwise.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from uno_arena.rules import (
    Action,
    InvalidActionError,
    Phase,
    RulesConfig,
    action_from_id,
    apply,
    canonical,
    legal_actions,
    must_ask,
    new_match,
    safe_default,
)
from uno_arena.rules.event import HandEnded
from uno_arena.server.gateway import UNKNOWN_REQUEST, BotConnection, Gateway
from uno_arena.server.spectators import Spectator
from uno_arena.v1 import bot_pb2, codec, control_pb2
from uno_arena.v1 import game_pb2 as pb

log = logging.getLogger(__name__)

ASKED_KEPT: Final = 1024  # requests per match a BotError may quote (a connection keeps as many answered)
_DRAWN: Final = Phase.DRAWN
_SETTLED: Final[list[Action]] = []  # a settled decision's legal actions (never changed)


# What PlayMatch streams: a MatchProgress, or one serialized already (a match's log, which is only sent)
Progress: TypeAlias = control_pb2.MatchProgress | bytes
LOG_CHUNK_EVENTS: Final = 2000  # events per `log` message: well under the 4 MiB message limit


def log_chunks(encoder: codec.MatchEncoder) -> list[bytes]:
    """The complete log as serialized `log` progress messages, in order."""
    logged = encoder.catch_up()
    return [
        codec.log_progress(encoder.log(i, min(i + LOG_CHUNK_EVENTS, logged)))
        for i in range(0, logged, LOG_CHUNK_EVENTS)
    ]


class Asked:
    """A request sent to a seat: the decision its answer, deadline or lost connection settles (a
    `gateway.PendingDecision`), kept afterwards so that a later BotError can be recorded against it.
    """

    __slots__ = ("applied", "at", "connection", "deadline", "heard", "held", "host", "legal", "match_id",
                 "reported", "request_id", "seat", "sent", "verdict")  # fmt: skip

    def __init__(
        self, host: MatchHost, seat: int, legal: list[Action], at: tuple[int, int], request_id: str,
        connection: BotConnection, sent: float, deadline: float,
    ) -> None:  # fmt: skip
        self.host = host
        self.match_id = host.spec.match_id
        self.seat = seat
        self.legal = legal
        self.at = at  # the decision's place: (action index, event index), for a later BotError
        self.request_id = request_id
        self.connection = connection
        self.sent = sent  # the event loop's time, as the request was queued: its answer's round trip
        self.deadline = deadline  # the event loop's time
        self.heard = connection.heard  # the bot's messages read before it was asked
        self.held = False  # past the deadline, waiting for the keepalive's verdict (`MatchHost._hold`)
        self.verdict = deadline  # when a held decision times out if the connection is still up
        self.applied: Action | None = None  # once the decision is settled
        self.reported = False  # a BotError was recorded for it

    def answered(self, action_id: int) -> None:
        self.host.answered(self, action_id)

    def lost(self, reason: str) -> None:
        self.host.lost(self, reason)

    def heard_from(self) -> None:
        self.host.heard_from(self)


@dataclass(frozen=True, slots=True)
class MatchSpec:
    match_id: str
    bots: tuple[str, ...]
    config: RulesConfig
    seed: int
    decision_timeout: float
    max_strikes: int
    disconnect_grace: float


# What the match's task is woken with: a seat whose lost connection it must wait for (with the
# legal actions of the decision due), or None once the match is over.
Stalled = tuple[int, list[Action]] | None


@dataclass(eq=False)
class MatchHost:
    """One running match and everyone watching it.

    Decisions follow one another without a task in between: the bot's answer (handed over by the
    task that read it), the deadline (one timer per match, re-armed lazily) or the loss of its
    connection settles the decision due and asks the next at once (`_play`). The match's own
    task starts the match, waits for a lost seat's connection within its grace period, and
    finishes the match.
    """

    spec: MatchSpec
    gateway: Gateway
    subscribers: list[asyncio.Queue[Progress | None]] = field(default_factory=list)
    spectators: list[Spectator] = field(default_factory=list)
    ending: list[Progress] | None = None  # log chunks, then `finished`
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.match = new_match(self.spec.config, random.Random(self.spec.seed))
        players = len(self.spec.bots)
        self.encoder = codec.MatchEncoder(
            self.match, self.spec.match_id, int(self.spec.decision_timeout * 1000)
        )
        self.strikes = [0] * players
        self.forfeited: list[int] = []
        self.faults: list[pb.Fault] = []
        self.seated: list[BotConnection | None] = [None] * players  # the connection told of this match
        self.sent = [0] * players  # events delivered per seat
        self.published = 0  # events published to spectators and subscribers
        self._so_far: tuple[int, bytes] | None = None  # (published, the catch-up message) last built
        self._hands_published = 0  # hands whose end was published
        self.lost_at: dict[int, float] = {}  # seat -> monotonic time its connection was lost
        # per seat, so that a seat's request ids say nothing of how often the others were asked
        # (whether a drawn card could be played, whether a hand held a playable card: RULINGS 29)
        self._requests = [itertools.count(1) for _ in range(players)]
        self._asked: OrderedDict[str, Asked] = OrderedDict()  # request id -> what was asked, newest last
        self.started_at = time.monotonic()
        self._due: Asked | None = None  # the decision asked and not settled yet
        self._forfeit_end = False  # all seats but one forfeited: the match ends
        self._clock: asyncio.TimerHandle | None = None  # fires at or before the due decision's deadline
        self._stalled: asyncio.Future[Stalled] | None = None  # what the match's task waits for
        # the loop `run` runs in, kept: asyncio.get_running_loop() makes a getpid system call
        self._loop: asyncio.AbstractEventLoop | None = None
        # what a decision counts (`metrics`): the children, kept, so a decision pays one call on each
        self._metrics = metrics = self.gateway.metrics
        self._decisions = metrics.decisions
        self._round_trip = metrics.decision_seconds

    # --- the match loop ---------------------------------------------------

    async def run(self) -> None:
        """Play to the end; always finishes (the result says how), never raises for a bot's sake."""
        self.gateway.take_bot_errors(self.spec.match_id, self.bot_error)
        loop = self._loop = asyncio.get_running_loop()
        try:
            for seat in range(len(self.spec.bots)):
                self._seat(seat)
            self._publish()
            resume: Callable[[], None] = self._play
            while True:
                self._stalled = loop.create_future()
                resume()
                stalled = await self._stalled
                if stalled is None:
                    break
                seat, legal = stalled
                connection = await self._connection(seat)
                resume = functools.partial(self._resume, seat, legal, connection)
        except asyncio.CancelledError:
            self.finish(pb.MATCH_END_ABORTED)
            raise
        self.finish(pb.MATCH_END_FORFEIT if self._forfeit_end else None)

    def _play(self) -> None:
        """Apply the decisions that need nobody, until one is asked (what settles it goes on from
        there), a lost seat's connection must be waited for (the match's task does), or the end.

        Needing nobody: a forfeited seat's (the default, at once, whatever it could do) and one whose
        single legal action every seat can tell is the only one (`must_ask`). A decision with one
        legal action that only its seat can know of (a drawn card that does not play, a turn with
        nothing to play, a stack, lay or jump-in with nothing to add) is asked like any other: the
        time it takes, round trip included, must not tell the others what the seat holds (RULINGS 29).
        """
        match = self.match
        while match.result is None and not self._forfeit_end:
            seat = match.hand.to_move
            legal = legal_actions(match)
            if seat in self.forfeited:
                action = safe_default(legal)
            else:
                ask = must_ask(match, legal)
                live = self.gateway.connection(self.spec.bots[seat])
                if live is not None and not live.closed:
                    if ask or live.ask_single:
                        self._ask(live, seat, legal)
                        return
                elif ask:
                    self._wake((seat, legal))
                    return
                action = legal[0]  # one public choice: no round trip, and no wait for a lost bot
            self._apply(action)
        self._wake(None)

    def _resume(self, seat: int, legal: list[Action], connection: BotConnection | None) -> None:
        """Go on after waiting for `seat`'s connection: ask it, or forfeit the seat if it did not come."""
        if connection is not None:
            self._ask(connection, seat, legal)
            return
        applied = safe_default(legal)
        detail = f"not connected, nor back within the {self.spec.disconnect_grace:g} s grace period"
        self._record(seat, pb.FAULT_KIND_DISCONNECTED, detail, applied, self._position(), forfeit=True)
        self._apply(applied)
        self._play()

    def _apply(self, action: Action) -> None:
        apply(self.match, action)
        if len(self.forfeited) >= len(self.spec.bots) - 1:
            self._forfeit_end = True
        self._publish()

    def _wake(self, stalled: Stalled) -> None:
        """Hand the match to its task: a seat's connection to wait for, or the end."""
        if self._stalled is not None and not self._stalled.done():
            self._stalled.set_result(stalled)

    def _crash(self, error: Exception) -> None:
        """A bug of ours met while settling a decision (never a bot's): the match's task raises it."""
        if self._stalled is not None and not self._stalled.done():
            self._stalled.set_exception(error)
        else:
            log.error("match %s: error after its end", self.spec.match_id, exc_info=error, extra=self._ids())

    def _ids(self, seat: int | None = None) -> dict[str, object]:
        """What a log line about this match (and one of its seats) carries as fields (`--log-format json`)."""
        if seat is None:
            return {"match_id": self.spec.match_id}
        return {"match_id": self.spec.match_id, "seat": seat, "bot": self.spec.bots[seat]}

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
        return live

    # --- one decision: asked, then settled by its answer, deadline or lost connection ----------

    def _ask(self, connection: BotConnection, seat: int, legal: list[Action]) -> None:
        if connection is not self.seated[seat]:
            self._seat(seat, connection)
            if connection.closed:  # it did not take what it had missed: its grace period runs on
                self.lost_at.setdefault(seat, time.monotonic())
                self._wake((seat, legal))
                return
        self.lost_at.pop(seat, None)
        request_id = f"{self.spec.match_id}#{seat}.{next(self._requests[seat])}"
        loop = self._loop
        assert loop is not None  # asked only while `run` runs
        now = loop.time()
        asked = Asked(self, seat, legal, self._position(), request_id, connection, now,
                      now + self.spec.decision_timeout)  # fmt: skip
        self._asked[request_id] = asked
        if len(self._asked) > ASKED_KEPT:
            self._asked.popitem(last=False)
        request, self.sent[seat] = self.encoder.request(seat, legal, request_id, self.sent[seat])
        connection.pending[request_id] = asked  # before sending: a send that fails loses it
        self._due = asked
        connection.send(request)
        self._decisions.inc()
        if self._clock is None:
            self._clock = loop.call_at(asked.deadline, self._on_clock)

    def answered(self, asked: Asked, action_id: int) -> None:
        """The bot's answer to `asked` (handed over by its connection)."""
        if asked is self._due:
            if asked.held:  # past its deadline (the connection's `heard_from` comes first: not reached)
                self._time_out(asked)
                return
            self._due = None
            try:
                loop = self._loop
                if loop is not None:
                    self._round_trip.observe(loop.time() - asked.sent)
                self._settle(asked, self._checked(asked.seat, action_id, asked.legal))
            except Exception as error:
                self._crash(error)

    def lost(self, asked: Asked, reason: str) -> None:
        """`asked`'s connection ended before an answer."""
        if asked is self._due:
            self._due = None
            try:
                self._unhold(asked)
                self.lost_at[asked.seat] = time.monotonic()
                self._settle(asked, self._fault(asked.seat, pb.FAULT_KIND_DISCONNECTED, reason, asked.legal))
            except Exception as error:
                self._crash(error)

    def heard_from(self, asked: Asked) -> None:
        """The bot of a held decision sent something: its connection is alive, so the decision timed out."""
        if asked is self._due and asked.held:
            self._time_out(asked)

    def _on_clock(self) -> None:
        """The decision clock: one timer per match, moved on to the due decision's deadline when it
        fires early (deadlines only move later), rather than one timer set and cancelled per decision.
        (A held decision's timer, set at its verdict, is cancelled when the decision settles sooner.)"""
        self._clock = None
        asked = self._due
        if asked is None:
            return
        loop = asyncio.get_running_loop()
        due = asked.verdict if asked.held else asked.deadline
        if loop.time() < due:
            self._clock = loop.call_at(due, self._on_clock)
            return
        connection = asked.connection
        if not asked.held and connection.heard == asked.heard and not connection.closed:
            self._hold(asked, loop)
            return
        self._time_out(asked)

    def _hold(self, asked: Asked, loop: asyncio.AbstractEventLoop) -> None:
        """The deadline passed and nothing at all came from the bot since it was asked: a bot slow to
        answer, or a link that stopped carrying bytes (its answer may be on the way into a blackhole).
        Only the keepalive can tell: hold the decision until the bot's stream has either been closed
        by it (`lost`: a disconnect, and the grace period applies) or outlived its bound (`dead_link_s`
        past the deadline: the bot is alive and timed out), or the bot sends anything (`heard_from`:
        alive, timed out). A timeout charged while the link was dead would forfeit the seat in a few
        decisions, before the disconnect could be noticed."""
        connection = asked.connection
        asked.held, connection.holding = True, connection.holding + 1
        asked.verdict = asked.deadline + connection.settings.dead_link_s
        self._clock = loop.call_at(asked.verdict, self._on_clock)
        log.info("match %s seat %d (%s): no answer within %g s and nothing else heard since it was asked: "
                 "waiting up to %g s more for its connection's keepalive", self.spec.match_id, asked.seat,
                 connection.name, self.spec.decision_timeout, connection.settings.dead_link_s,
                 extra=self._ids(asked.seat))  # fmt: skip

    def _unhold(self, asked: Asked) -> None:
        """`asked` settles: no longer held (its timer, set at the verdict, goes: the next decision sets its
        own), and once its connection holds nothing, matches may take the bot again (`Gateway.reserve`)."""
        if not asked.held:
            return
        asked.held = False
        connection = asked.connection
        connection.holding -= 1
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None
        if not connection.holding:
            self.gateway.wake()

    def _time_out(self, asked: Asked) -> None:
        """`asked` got no answer in time: TIMEOUT, a strike, the safe default."""
        self._due = None
        try:
            self._unhold(asked)
            asked.connection.expire(asked.request_id)
            timeout = f"no answer within {self.spec.decision_timeout:g} s"
            self._settle(asked, self._fault(asked.seat, pb.FAULT_KIND_TIMEOUT, timeout, asked.legal))
        except Exception as error:
            self._crash(error)

    def _settle(self, asked: Asked, action: Action) -> None:
        asked.applied = action
        asked.legal = _SETTLED  # not needed once applied: one object fewer kept per decision asked
        self._apply(action)
        self._play()

    def _checked(self, seat: int, action_id: int, legal: list[Action]) -> Action:
        if action_id == UNKNOWN_REQUEST:
            return self._fault(seat, pb.FAULT_KIND_INVALID, "answered an unknown request id", legal)
        try:
            action = action_from_id(action_id)
        except InvalidActionError as error:
            return self._fault(seat, pb.FAULT_KIND_INVALID, str(error), legal)
        for candidate in legal:  # the rules' actions are interned: the usual answer is one of them
            if candidate is action:
                return action
        try:
            action = canonical(self.match.hand, action)
        except InvalidActionError as error:
            return self._fault(seat, pb.FAULT_KIND_INVALID, str(error), legal)
        if action not in legal:
            detail = f"{action} (id {action_id}) is not legal now; legal ids: {[a.id for a in legal]}"
            return self._fault(seat, pb.FAULT_KIND_ILLEGAL, detail, legal)
        return action

    # --- faults -------------------------------------------------------------

    def _fault(self, seat: int, kind: pb.FaultKind, detail: str, legal: list[Action]) -> Action:
        applied = safe_default(legal)
        self._record(seat, kind, detail, applied, self._position())
        return applied

    def bot_error(self, connection: BotConnection, request_id: str, detail: str) -> str | None:
        """Record a bot's report that its code failed on `request_id` (a `BotError`), once per request.

        Returns None when recorded, else why it was ignored. `applied` is what was applied if the
        decision is settled (an answer is applied as it arrives), else the safe default (what the
        SDK answers).
        """
        asked = self._asked.get(request_id)
        if asked is None:
            return f"BotError for {request_id!r}: not a recent request of this match: ignored"
        if asked.reported:
            return f"duplicate BotError for {request_id!r}: ignored (it was recorded)"
        asked.reported = True
        applied = asked.applied if asked.applied is not None else safe_default(asked.legal)
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
            applied=codec.action_message(applied),
            strikes=self.strikes[seat],
            forfeited=forfeits,
            action_index=at[0],
            event_index=at[1],
        )
        self.faults.append(fault)
        self._metrics.fault(kind).inc()
        log.info("match %s seat %d (%s): %s: %s", self.spec.match_id, seat, self.spec.bots[seat],
                 pb.FaultKind.Name(kind), detail, extra=self._ids(seat))  # fmt: skip
        self._tell(seat, bot_pb2.ServerMessage(fault=fault))
        self._progress(control_pb2.MatchProgress(fault=fault))
        if forfeits:
            self._forfeit(seat)

    def _forfeit(self, seat: int) -> None:
        if seat not in self.forfeited:
            self.forfeited.append(seat)
            log.info("match %s: seat %d (%s) forfeits", self.spec.match_id, seat, self.spec.bots[seat],
                     extra=self._ids(seat))  # fmt: skip

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
            rules=codec.rules(self.spec.config),
            decision_timeout_ms=int(self.spec.decision_timeout * 1000),
            max_strikes=self.spec.max_strikes,
        )
        connection.send(bot_pb2.ServerMessage(match_started=started))
        self._deliver(seat)

    def _tell(self, seat: int, message: bot_pb2.ServerMessage | bytes) -> None:
        connection = self.seated[seat]
        if connection is not None and not connection.closed:
            connection.send(message)

    def _deliver(self, seat: int) -> None:
        """Send `seat` what it has not had (an Events message), then results of hands among it."""
        first, logged = self.sent[seat], self.encoder.catch_up()
        if first >= logged:
            return
        self.sent[seat] = logged
        self._tell(seat, codec.events_message(self.spec.match_id, self.encoder.seen_by(seat, first, logged)))
        for event in self.match.events[first:logged]:
            if isinstance(event, HandEnded):
                result = bot_pb2.HandResult(match_id=self.spec.match_id, hand=codec.hand_ended(event))
                result.totals.extend(self.match.totals_after(event))
                self._tell(seat, bot_pb2.ServerMessage(hand_result=result))

    def _publish(self, final: bool = False) -> None:
        """New events: to spectators and control callers now, to the seats at the end of a hand.

        Held while a seat decides whether to play the card it drew: a batch ending with that draw
        would tell spectators the card can be played (RULINGS 29). They go out with the decision's.
        """
        if not final and self.match.result is None and self.match.hand.phase is _DRAWN:
            return
        first, logged = self.published, len(self.match.events)
        if first == logged:
            return
        self.published = logged
        hands_ended = len(self.match.hand_results)  # a hand's result and its HandEnded come together
        new_results = hands_ended != self._hands_published
        self._hands_published = hands_ended
        if new_results:
            for seat in range(len(self.spec.bots)):
                if self.seated[seat] is not None:
                    self._deliver(seat)
        if self.spectators:  # public events (a spectator's view), built only when someone watches
            self.encoder.catch_up()
            spectated = codec.spectator_event(self.spec.match_id, self.encoder.seen_by(-1, first, logged))
            for spectator in self.spectators:
                spectator.put(spectated)  # the same bytes for every stream
        if new_results:
            for event in self.match.events[first:logged]:
                if isinstance(event, HandEnded):
                    self._progress(control_pb2.MatchProgress(hand=codec.hand_ended(event)))

    def spectated_so_far(self) -> bytes:
        """The public events published so far as one serialized SpectatorEvent: what a Spectate stream
        begins with, built once for every stream that starts before the next batch."""
        so_far = self._so_far
        if so_far is None or so_far[0] != self.published:
            self.encoder.catch_up()
            events = self.encoder.seen_by(-1, 0, self.published)
            so_far = self._so_far = (self.published, codec.spectator_event(self.spec.match_id, events))
        return so_far[1]

    def _progress(self, message: Progress) -> None:
        for queue in self.subscribers:
            queue.put_nowait(message)

    # --- the end ------------------------------------------------------------

    def finish(self, reason: pb.MatchEnd | None) -> None:
        self.gateway.drop_bot_errors(self.spec.match_id)  # a BotError quoting this match is a stray now
        due, self._due = self._due, None  # an abort's: its answer is now a stray
        if due is not None:
            due.connection.pending.pop(due.request_id, None)
            self._unhold(due)  # the connection may take new matches again
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None
        self._publish(final=True)  # events held back for a drawn-card decision that will not come
        match, players = self.match, len(self.spec.bots)
        if reason is None and match.result is not None:
            code, winners, totals = (
                codec.MATCH_ENDS[match.result.reason],
                match.result.winners,
                match.result.totals,
            )
        else:
            code, totals = reason or pb.MATCH_END_ABORTED, tuple(match.totals)
            standing = [s for s in range(players) if s not in self.forfeited]
            winners = tuple(standing) if code == pb.MATCH_END_FORFEIT else ()
        faults_by_seat = [sum(1 for f in self.faults if f.seat == s) for s in range(players)]
        result = codec.match_result(
            self.spec.match_id, code, winners, totals, match.hand_results, list(self.spec.bots),
            sorted(self.forfeited), faults_by_seat,
        )  # fmt: skip
        finished = control_pb2.FinishedMatch(
            result=result,
            event_count=len(match.events),
            actions=codec.action_ids(match.actions),
            seed=self.spec.seed,
            rules=codec.rules(self.spec.config),
            faults=self.faults,
        )
        for seat in range(players):
            self._deliver(seat)
            self._tell(seat, bot_pb2.ServerMessage(match_finished=bot_pb2.MatchFinished(result=result)))
        self.ending = [*log_chunks(self.encoder), control_pb2.MatchProgress(finished=finished)]
        for message in self.ending:
            self._progress(message)
        for queue in self.subscribers:
            queue.put_nowait(None)
        for spectator in self.spectators:
            spectator.end()
        self.done.set()
        self._metrics.match_finished(code).inc()
        elapsed = time.monotonic() - self.started_at
        log.info(
            "match %s finished: %s bots=%s winners=%s totals=%s hands=%d faults=%d forfeited=%s %.1fs",
            self.spec.match_id, pb.MatchEnd.Name(code), ",".join(self.spec.bots), list(winners), list(totals),
            len(match.hand_results), len(self.faults), sorted(self.forfeited), elapsed, extra=self._ids(),
        )  # fmt: skip
