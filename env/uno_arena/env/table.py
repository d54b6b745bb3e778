"""One match of the rules core as the environments drive it: whose decision it is, the legal action ids,
forced decisions applied as the match server applies them, the rewards each action brings, and each
seat's vector (the encoding of `uno_arena.sdk.encoding`) as float32 values in an `array`.

The environments' hot path, compiled with the rules core in the compiled build (setup.py), so it needs
nothing beyond the standard library and the rules core; `uno_arena.env.vectors` wraps its arrays as
numpy arrays. The vector is the one `uno_arena.sdk.encoder.Encoder` makes from the seat's
`Observation`, read here straight from the match, field by field as
`uno_arena.rules.observation.observe_hand` reads them for the seat: building an `Observation` for every
step, then the vector from it, would cost more than the rules core's whole step.
`tests/env/test_encoding.py` holds the two to the same vector, to the bit, for every seat at every
decision of random matches under every rules option and table size, and checks that changing what a seat
cannot see (the others' cards, the draw pile) changes nothing in its vector.
"""

from __future__ import annotations

import random
from array import array
from typing import Final

from uno_arena.env.rewards import Reward, hand_rewards, match_rewards
from uno_arena.rules import ACTIONS, COLOURS, Match, Phase, RulesConfig, apply, new_match
from uno_arena.rules.card import Card
from uno_arena.rules.config import MAX_PLAYERS
from uno_arena.rules.event import Dealt, Drew, Event, Played, Received
from uno_arena.rules.legal import choices_are_public, legal_actions
from uno_arena.sdk import encoding as layout
from uno_arena.sdk.encoding import ACTION_COUNT, FACE_COUNT, OBSERVATION_SIZE, PHASES

_ID: Final = {id(action): number for number, action in enumerate(ACTIONS)}
"""Action id by object identity (legal actions are the interned instances of `ACTIONS`)."""
_PHASE_AT: Final = {phase: layout.PHASE + i for i, phase in enumerate(PHASES)}
_COLOUR_AT: Final = {colour: layout.COLOUR + i for i, colour in enumerate(COLOURS)}
_ZEROS: Final = bytes(4 * OBSERVATION_SIZE)
_NO_FACES: Final = bytes(4 * FACE_COUNT)
_NO_ACTIONS: Final = bytes(ACTION_COUNT)
_NO_SHOWN: Final = bytes(4 * MAX_PLAYERS * FACE_COUNT)
_HAND: Final = layout.HAND
_HAND_END: Final = layout.HAND + FACE_COUNT
_TOP: Final = layout.TOP
_DRAWN: Final = layout.DRAWN
_DISCARDS: Final = layout.DISCARDS
_DISCARDS_END: Final = layout.DISCARDS + FACE_COUNT
_PENALTY: Final = layout.PENALTY
_DIRECTION: Final = layout.DIRECTION
_DRAW_PILE: Final = layout.DRAW_PILE
_TURN: Final = layout.TURN
_HAND_NUMBER: Final = layout.HAND_NUMBER
_SHOWN: Final = layout.SHOWN
_SHOWN_END: Final = layout.SHOWN + MAX_PLAYERS * FACE_COUNT
_DECK: Final = float(layout.MAX_CARDS_IN_HAND)


class IllegalActionError(ValueError):
    """An action id that is not among the legal actions of the seat to move."""


class Table:
    """A match and what the environments ask of it. `deal` starts a match; `act` applies the decision
    of the seat to move and says what each seat was rewarded for it."""

    def __init__(self, rules: RulesConfig, reward: Reward) -> None:
        self.rules = rules
        self.reward = reward
        self.players = rules.players
        self.seats = SeatBuffers(rules)
        self.match: Match = new_match(rules, random.Random(0))  # replaced by `deal`
        self._scored = 0  # hands of the match whose rewards were given
        self._legal: list[int] | None = None  # the legal action ids of the seat to move, once asked

    def deal(self, seed: int) -> None:
        """A new match, dealt from `seed`."""
        self.match = new_match(self.rules, random.Random(seed))
        self._scored = 0
        self._legal = None
        self._apply_forced()

    @property
    def over(self) -> bool:
        return self.match.result is not None

    @property
    def to_move(self) -> int:
        """The seat whose decision it is; -1 once the match is over."""
        return -1 if self.match.result is not None else self.match.hand.to_move

    def legal_ids(self) -> list[int]:
        """The legal action ids of the seat to move, in order (empty once the match is over)."""
        legal = self._legal
        if legal is None:
            match = self.match
            found = legal_actions(match.hand) if match.result is None else []
            legal = self._legal = [_ID[id(action)] for action in found]
        return legal

    def mask_bits(self, seat: int) -> bytearray:
        """`seat`'s action mask: a byte per action id, 1 for its legal actions (none unless it is to move)."""
        bits = bytearray(_NO_ACTIONS)
        match = self.match
        if match.result is None and match.hand.to_move == seat:
            for action_id in self.legal_ids():
                bits[action_id] = 1
        return bits

    def vector(self, seat: int) -> array[float]:
        """`seat`'s vector now (float32 values)."""
        return self.seats.fill(self.match, seat)

    def act(self, action_id: int) -> list[float] | None:
        """Apply the decision `action_id` of the seat to move, then any forced decisions after it; the
        rewards by seat this brought (per the reward mode), or None when it brought none.

        Raises `IllegalActionError` for an action id that is not legal now.
        """
        if action_id not in self.legal_ids():
            named = str(ACTIONS[action_id]) if 0 <= action_id < ACTION_COUNT else "no such action"
            raise IllegalActionError(
                f"action {action_id} ({named}) is not legal for seat {self.to_move} now; "
                f"legal: {self.legal_ids()}"
            )
        match = self.match
        apply(match, ACTIONS[action_id])
        self._legal = None
        if choices_are_public(match.hand):
            self._apply_forced()
        if self._scored == len(match.hand_results):
            return None
        return self._rewards()

    def _apply_forced(self) -> None:
        """Apply the decisions the match server applies without asking: one legal action that every
        seat can tell is the only one (`uno_arena.rules.must_ask`; today the swap after a 7 at two seats)."""
        match = self.match
        while match.result is None and choices_are_public(match.hand):
            legal = legal_actions(match.hand)
            if len(legal) != 1:
                return
            apply(match, legal[0])

    def _rewards(self) -> list[float] | None:
        """The rewards of the hands (or the match) that ended since the last call."""
        match = self.match
        ended = match.hand_results
        rewards: list[float] | None = None
        if self.reward is Reward.HAND:
            rewards = [0.0] * self.players
            for hand in ended[self._scored :]:
                rewards = [r + h for r, h in zip(rewards, hand_rewards(hand.points, self.rules), strict=True)]
        elif match.result is not None:
            rewards = match_rewards(match.result.winners, self.players)
        self._scored = len(ended)
        return rewards


class Places:
    """Where the values of each seat go in `seat`'s vector while play goes in direction `step`: seats
    are numbered relative to `seat` (0), in the direction of play."""

    def __init__(self, players: int, seat: int, step: int) -> None:
        by_seat = {(seat + k * step) % players: k for k in range(players)}
        self.relative: list[int] = [by_seat[absolute] for absolute in range(players)]  # by absolute seat
        self.seats: list[tuple[int, int, int]] = [
            (absolute, layout.HAND_SIZES + k, layout.SCORES + k) for absolute, k in by_seat.items()
        ]
        self.to_move: list[int] = [layout.TO_MOVE + k for k in self.relative]
        self.turn_seat: list[int] = [layout.TURN_SEAT + k for k in self.relative]
        self.dealer: list[int] = [layout.DEALER + k for k in self.relative]


class SeatBuffers:
    """Every seat's vector of one match at a time, made when asked; what changes little from step to step
    (each seat's card counts, the discard counts, the cards shown in challenges) is kept up to date
    rather than counted again."""

    def __init__(self, rules: RulesConfig) -> None:
        self.players = players = rules.players
        self._score_scale = 1 / rules.target_score
        self._turn_scale = 1 / rules.max_turns_per_hand
        self._hands_scale = 1 / rules.max_hands_per_match
        flags = layout.rules_flags(rules)
        self._templates: list[array[float]] = []  # per seat: what never changes in a match
        for seat in range(players):
            template = array("f", _ZEROS)
            for k in range(players):
                template[layout.SEATS + k] = 1.0
            template[layout.SEAT + seat] = 1.0
            for i, flag in enumerate(flags):
                template[layout.RULES + i] = flag
            self._templates.append(template)
        # by [direction > 0][seat]
        self._places = [[Places(players, seat, step) for seat in range(players)] for step in (-1, 1)]
        self._discards = array("f", _NO_FACES)  # how many of each face are in the discards
        self._discard_list: list[Card] = []  # the discard pile counted, as the hand holds it
        self._discard_seen = 0  # how many of its cards are counted
        self._hands = [array("f", _NO_FACES) for _ in range(players)]  # how many of each face each seat holds
        self._events: list[Event] = []  # the match log the counts above follow
        self._followed = 0  # how many of its events they have followed
        # per seat, its `shown` field as last made, and for what: the hand's list of showings, their
        # number and the direction of play then
        self._shown_of: list[object] = [None] * players
        self._shown_count = [0] * players
        self._shown_forward = [True] * players
        self._shown = [array("f", _NO_SHOWN) for _ in range(players)]

    def fill(self, match: Match, seat: int) -> array[float]:
        """`seat`'s vector now: what `Encoder(rules).encode(observe(match, seat))` gives, to the bit."""
        hand = match.hand
        out = self._templates[seat][:]
        events = match.events
        if len(events) != self._followed or events is not self._events:
            self._follow(events)
        out[_HAND:_HAND_END] = self._hands[seat]
        discards = hand.discards
        if len(discards) != self._discard_seen or discards is not self._discard_list:
            self._count_discards(discards)
        out[_DISCARDS:_DISCARDS_END] = self._discards
        out[_TOP + discards[-1].index] = 1.0
        colour = hand.colour
        if colour is not None:
            out[_COLOUR_AT[colour]] = 1.0
        # as observe_hand shows this seat: its own drawn card and decision only when it is to move
        phase = hand.phase
        to_move = hand.to_move
        if to_move == seat and phase is not Phase.OVER:
            drawn = hand.drawn
            if drawn is not None:
                out[_DRAWN + drawn.index] = 1.0
        elif phase is Phase.DRAWN:
            phase = Phase.TURN
        out[_PHASE_AT[phase]] = 1.0
        if hand.penalty:
            out[_PENALTY] = hand.penalty / 4
        forward = hand.direction > 0
        if forward:
            out[_DIRECTION] = 1.0
        places = self._places[1 if forward else 0][seat]
        cards = hand.cards
        totals = match.totals
        score_scale = self._score_scale
        for absolute, size_at, score_at in places.seats:
            out[size_at] = len(cards[absolute]) / 10
            out[score_at] = totals[absolute] * score_scale
        if to_move >= 0:
            out[places.to_move[to_move]] = 1.0
        out[places.turn_seat[hand.turn_seat]] = 1.0
        out[places.dealer[hand.dealer]] = 1.0
        out[_DRAW_PILE] = len(hand.draw_pile) / _DECK
        out[_TURN] = hand.turns * self._turn_scale
        out[_HAND_NUMBER] = match.hand_number * self._hands_scale
        showings = hand.shown
        if showings:
            if (
                self._shown_of[seat] is not showings
                or self._shown_count[seat] != len(showings)
                or self._shown_forward[seat] != forward
            ):
                self._make_shown(showings, seat, forward, places.relative)
            out[_SHOWN:_SHOWN_END] = self._shown[seat]
        return out

    def _follow(self, events: list[Event]) -> None:
        """Bring every seat's card counts up to date with the match log: cards change hands only by the
        deal, draws, plays and the house rules' swaps and passes, and each says which cards (the log
        holds every card; the counts of a seat are only ever read into that seat's own vector)."""
        hands = self._hands
        if events is not self._events:
            self._events = events
            self._followed = 0
            for row in hands:
                row[:] = array("f", _NO_FACES)
        for event in events[self._followed :]:
            if isinstance(event, Played):
                hands[event.seat][event.card.index] -= 1.0
            elif isinstance(event, Drew | Dealt | Received):
                row = hands[event.seat]
                if not isinstance(event, Drew):  # the whole hand, as dealt or as received
                    row[:] = array("f", _NO_FACES)
                for card in event.cards or ():
                    row[card.index] += 1.0
        self._followed = len(events)

    def _make_shown(
        self, showings: list[tuple[int, int, tuple[Card, ...]]], seat: int, forward: bool, relative: list[int]
    ) -> None:
        """`seat`'s `shown` field: per relative seat, the cards it last showed `seat` this hand."""
        field = array("f", _NO_SHOWN)
        latest = {whose: cards for to, whose, cards in showings if to == seat}
        for whose, cards in latest.items():
            base = relative[whose] * FACE_COUNT
            for card in cards:
                field[base + card.index] += 1.0
        self._shown[seat] = field
        self._shown_of[seat] = showings
        self._shown_count[seat] = len(showings)
        self._shown_forward[seat] = forward

    def _count_discards(self, discards: list[Card]) -> None:
        """Bring the discard counts up to date: the pile only grows, card by card, until a reshuffle or a
        new hand puts a new list in its place (the same list object is never the discard pile again)."""
        counts = self._discards
        if discards is not self._discard_list:
            self._discard_list = discards
            self._discard_seen = 0
            counts[:] = array("f", _NO_FACES)
        for card in discards[self._discard_seen :]:
            counts[card.index] += 1.0
        self._discard_seen = len(discards)
