"""A match: hands one after another until a target score (RULINGS 22-24).

`Match` keeps the running totals and one event log for all its hands; the
functions at the bottom (`legal_actions`, `apply`, `play`, `observe`) accept a
`Match` or a lone `Hand`, so callers need not care which they hold.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from uno_arena.rules.action import Action
from uno_arena.rules.config import DealerRule, RulesConfig, Scoring
from uno_arena.rules.event import Event, HandEnded, HandStarted, MatchEnd, MatchEnded, Seat
from uno_arena.rules.hand import Hand, new_hand
from uno_arena.rules.hand import apply as apply_to_hand
from uno_arena.rules.legal import choices_are_public
from uno_arena.rules.legal import legal_actions as hand_legal_actions
from uno_arena.rules.observation import Observation, observe_hand
from uno_arena.rules.validate import HandOverError
from uno_arena.rules.validate import play as play_in_hand


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The outcome of a match: each hand's result, totals, winners and why it ended.

    `winners` has several seats when they share the win (a tie). `actions`
    replays the match from its config and seed (`uno_arena.rules.replay`).
    The match server adds what only it knows: `match_id`, the `bots` seated,
    the seats that `forfeited` (reason `FORFEIT`); a bot receives no `actions`.
    """

    hands: tuple[HandEnded, ...]
    totals: tuple[int, ...]
    winners: tuple[Seat, ...]
    reason: MatchEnd
    actions: tuple[Action, ...] = ()
    match_id: str = ""
    bots: tuple[str, ...] = ()
    forfeited: tuple[Seat, ...] = ()
    faults: tuple[int, ...] = ()  # by seat

    @property
    def shared(self) -> bool:
        return len(self.winners) > 1


class Match:
    """The state of a match in progress; change it only through `apply`/`play`."""

    __slots__ = (
        "actions",
        "config",
        "events",
        "hand",
        "hand_number",
        "hand_results",
        "result",
        "rng",
        "totals",
    )

    def __init__(self, config: RulesConfig, rng: random.Random, hand: Hand, events: list[Event]) -> None:
        """A match whose first hand, `hand`, logs to `events`; `new_match` deals it."""
        self.config = config
        self.rng = rng
        self.totals = [0] * config.players
        self.hand_results: list[HandEnded] = []
        self.events = events
        self.actions: list[Action] = []
        self.result: MatchResult | None = None
        self.hand_number = 1
        self.hand = hand

    @property
    def is_over(self) -> bool:
        return self.result is not None

    def clone(self) -> Match:
        """An independent copy (its own generator in the same state).

        Built through `__init__`, attribute by attribute: `Match.__new__(Match)` would run `__init__`
        once compiled, and a compiled class has no `__slots__` to loop over.
        """
        rng = random.Random()
        rng.setstate(self.rng.getstate())
        events = list(self.events)
        twin = Match(self.config, rng, self.hand.clone(rng, events), events)
        twin.totals = list(self.totals)
        twin.hand_results = list(self.hand_results)
        twin.actions = list(self.actions)
        twin.result = self.result
        twin.hand_number = self.hand_number
        return twin

    def totals_after(self, ended: HandEnded) -> list[int]:
        """The match totals as they stood once the hand that ended with `ended` was scored."""
        totals = [0] * self.config.players
        for hand in self.hand_results:
            totals = [t + p for t, p in zip(totals, hand.points, strict=True)]
            if hand is ended:
                break
        return totals

    def _settle_if_over(self) -> None:
        """After a hand ends: add its points, then end the match or deal the next hand.

        `_record` says whether the match ended rather than this loop re-reading `self.result`: a
        narrowed attribute stays narrowed across the call that sets it, which only fails compiled.
        """
        while self.hand.result is not None and self.result is None:
            if not self._record(self.hand.result):
                self._next_hand()

    def _record(self, ended: HandEnded) -> bool:
        """Add a hand's points; whether that ended the match."""
        self.hand_results.append(ended)
        self.totals = [t + p for t, p in zip(self.totals, ended.points, strict=True)]
        if max(self.totals) >= self.config.target_score:
            self._finish(MatchEnd.TARGET_REACHED)
        elif len(self.hand_results) >= self.config.max_hands_per_match:
            self._finish(MatchEnd.MAX_HANDS)
        else:
            return False
        return True

    def _finish(self, reason: MatchEnd) -> None:
        best = min(self.totals) if self.config.scoring is Scoring.PENALTY_POINTS else max(self.totals)
        winners = tuple(s for s, t in enumerate(self.totals) if t == best)
        self.events.append(MatchEnded(reason, winners, tuple(self.totals)))
        self.result = MatchResult(
            tuple(self.hand_results), tuple(self.totals), winners, reason, tuple(self.actions)
        )

    def _next_hand(self) -> None:
        dealer = None
        if self.config.dealer is DealerRule.ROTATE_LEFT:
            dealer = (self.hand.dealer + 1) % self.config.players
        self.hand_number += 1
        self.events.append(HandStarted(self.hand_number))
        self.hand = new_hand(self.config, self.rng, dealer=dealer, events=self.events)


def new_match(config: RulesConfig, rng: random.Random) -> Match:
    """Start a match: the first hand is dealt (its dealer drawn, RULINGS 3)."""
    events: list[Event] = [HandStarted(1)]
    match = Match(config, rng, new_hand(config, rng, events=events), events)
    match._settle_if_over()
    return match


State = Hand | Match


def _hand_of(state: State) -> Hand:
    return state.hand if isinstance(state, Match) else state


def legal_actions(state: State) -> list[Action]:
    """The sorted, complete legal actions of the seat to move (empty when over)."""
    if isinstance(state, Match) and state.result is not None:
        return []
    return hand_legal_actions(_hand_of(state))


def must_ask(state: State, legal: Sequence[Action]) -> bool:
    """Whether a host (the match server, the local arena) must ask the seat to move for the decision
    whose legal actions are `legal`, rather than apply the only one itself.

    It may skip the round trip only when there is one legal action and every seat can tell so from
    public information (`legal.choices_are_public`; today the swap after a 7 at two seats): otherwise
    the time the decision takes, or does not take, would tell the others something about the seat's
    cards (RULINGS 29), such as whether a kept card could have been played.
    """
    return len(legal) != 1 or not choices_are_public(_hand_of(state))


def apply(state: State, action: Action) -> None:
    """Apply a trusted legal action; a match then scores a finished hand and deals the next."""
    if isinstance(state, Match):
        state.actions.append(action)
        apply_to_hand(state.hand, action)
        state._settle_if_over()
    else:
        apply_to_hand(state, action)


def play(state: State, action: Action, seat: Seat | None = None) -> Action:
    """Validate and apply an untrusted action (see `uno_arena.rules.validate.play`)."""
    if isinstance(state, Match):
        if state.result is not None:
            raise HandOverError("the match is over")
        action = play_in_hand(state.hand, action, seat)
        state.actions.append(action)
        state._settle_if_over()
        return action
    return play_in_hand(state, action, seat)


def observe(state: State, seat: Seat, match_id: str = "") -> Observation:
    """What `seat` may see now (RULINGS 29); `match_id` names the match in it, for a host."""
    if isinstance(state, Match):
        return observe_hand(state.hand, seat, tuple(state.totals), state.hand_number, match_id)
    return observe_hand(state, seat, match_id=match_id)


def to_move(state: State) -> Seat:
    """The seat whose decision it is; -1 when the hand or match is over."""
    if isinstance(state, Match) and state.result is not None:
        return -1
    return _hand_of(state).to_move
