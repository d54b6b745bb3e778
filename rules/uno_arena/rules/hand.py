"""The state of one hand of UNO and the transitions that actions cause.

A `Hand` changes only through `apply` (trusted, fast) or `play` (validating,
in `uno_arena.rules.validate`). Chance (shuffles) comes from the `random.Random`
passed in, so `(config, seed, actions)` replays a hand exactly.

Sequencing of simultaneous rules, chosen so that every decision belongs to one
seat at a time:
- An uncalled UNO opens a catch window right after the play, before the card's
  effect: each other seat, in turn order from the next player, is asked to
  catch or pass. The first catch closes it; nobody else has acted, so the
  window is still open "until the next player begins their turn" (RULINGS 19).
- A Wild Draw Four's guilt (RULINGS 12, 17) is fixed when it is played.
- A Draw Two or Wild Draw Four played adds to `Hand.penalty`, the cards the
  next player must draw; with `stacking` (RULINGS 25) that player decides in
  phase STACK (Draw Two) or CHALLENGE (Wild Draw Four), and whoever does not
  stack draws the whole total. A first card is nobody's play: it is not
  stacked on (RULINGS 8, 10). A stacking card that ends the hand makes the
  next player draw the whole total (RULINGS 21): nobody plays after it.
- A play is whole before anything follows it: with `multi_play` (RULINGS 28)
  the player lays more cards of the same number or symbol in phase LAY, or is
  done; with `seven_zero` (27) a 7 then asks whom to swap with (phase SWAP, once
  per 7 laid) and a 0 passes the hands. Then UNO is judged (the catch window),
  then the cards' effects apply in order.
- Phase LAY follows every play in a turn (or a stack) with `multi_play`, even
  when the player holds no card to add: other seats must not learn that they
  do (RULINGS 29). Likewise a jump-in window asks every other seat, holder or
  not, but only while a copy of the card may be in someone's hand; and phase
  DRAWN follows every draw of at least one card, playable or not (then KEEP
  is the only action), so that nothing tells the two apart: not the phase,
  not whose decision it is, not a host's timing (RULINGS 29). A draw that
  finds no card at all (the piles are empty: public) ends the turn at once.
- Jump-in (RULINGS 26): once a play's effects have applied, before the next
  player begins their turn (or decides on a stacked penalty), every other seat
  is offered, in turn order from the player after the one who played, to play
  an identical card. The first to do so plays as if it were their turn; play
  continues from them. No window after a Wild, nor after a Draw Two without
  `stacking` (its penalty is paid at once), nor while a challenge is pending.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from typing import Final

from uno_arena.rules.action import Action, ActionKind
from uno_arena.rules.card import DECK_SIZE, FACES, Card, Colour, Rank, standard_deck
from uno_arena.rules.config import FirstWildChooser, FirstWildDrawFour, RulesConfig, Scoring
from uno_arena.rules.dealer import draw_for_dealer
from uno_arena.rules.event import (
    Accepted,
    CatchPassed,
    Caught,
    Challenged,
    ColourChosen,
    Dealt,
    DirectionChanged,
    DrawReason,
    Drew,
    Event,
    FirstCard,
    HandEnd,
    HandEnded,
    HandShown,
    HandsPassed,
    Kept,
    Played,
    Received,
    Reshuffled,
    Seat,
    Shuffled,
    ShuffleReason,
    Skipped,
    Swapped,
)


class Phase(enum.StrEnum):
    """Which decision the hand is waiting for, and from whom (`Hand.to_move`)."""

    CHOOSE_COLOUR = "choose_colour"  # name the colour of a first-card Wild
    TURN = "turn"  # play a card or draw
    DRAWN = "drawn"  # play the card just drawn, or keep it
    CATCH = "catch"  # catch the player who did not call UNO, or pass
    CHALLENGE = "challenge"  # challenge or accept a Wild Draw Four (or, with stacking, stack one)
    OVER = "over"
    STACK = "stack"  # stacking: play a Draw Two on the Draw Two, or accept (draw the penalty)
    JUMP_IN = "jump_in"  # jump_in: play a card identical to the top card out of turn, or pass
    LAY = "lay"  # multi_play: lay another card of the same number or symbol, or be done
    SWAP = "swap"  # seven_zero: choose whom to swap hands with after playing a 7


class DeckError(ValueError):
    """An explicit deck order that is not a permutation of the 108-card deck."""


_ATTRIBUTES = (
    "actions",
    "cards",
    "catch_queue",
    "colour",
    "config",
    "dealer",
    "direction",
    "discards",
    "draw_pile",
    "drawn",
    "events",
    "first_event",
    "jump_queue",
    "laid",
    "max_turns",
    "penalty",
    "pending",
    "phase",
    "players",
    "result",
    "resume_phase",
    "resume_seat",
    "rng",
    "shown",
    "stalled_turns",
    "swaps",
    "to_move",
    "turn_seat",
    "turns",
    "uno_called",
    "wild_draw_four_guilty",
    "wild_draw_four_seat",
)
"""Every attribute of a `Hand`: its slots, and what `Hand.clone` copies."""


class Hand:
    """One hand: cards, piles, whose decision it is, and the event log.

    Read the attributes freely; change the hand only through `apply`/`play`.
    `draw_pile` has its top card at the end; `discards` too (the top discard
    is `discards[-1]`).
    """

    __slots__ = _ATTRIBUTES

    def __init__(self, config: RulesConfig, rng: random.Random, events: list[Event]) -> None:
        self.config = config
        self.rng = rng
        self.players = config.players
        self.dealer: Seat = 0
        self.cards: list[list[Card]] = [[] for _ in range(config.players)]
        self.draw_pile: list[Card] = []
        self.discards: list[Card] = []
        self.colour: Colour | None = None
        self.direction = 1
        self.phase = Phase.TURN
        self.to_move: Seat = 0  # -1 once the hand is over
        self.turn_seat: Seat = 0  # whose turn it is (differs from to_move in CATCH/CHALLENGE)
        self.drawn: Card | None = None  # the card just drawn (the last one), in DRAWN; playable or not
        self.catch_queue: list[Seat] = []  # seats still to be asked, in CATCH
        self.pending: Card | None = None  # the card whose effect waits for a catch window
        self.wild_draw_four_seat: Seat = -1  # who played the Wild Draw Four being decided
        self.wild_draw_four_guilty = False
        self.penalty = 0  # cards the next player must draw for the Draw Twos / Wild Draw Fours played
        self.laid = 0  # cards laid by the current play (more than one only with multi_play)
        self.uno_called = False  # whether the current play called UNO (with any card it laid)
        self.swaps = 0  # swaps still owed in SWAP: one per 7 laid
        self.jump_queue: list[Seat] = []  # seats still to be offered a jump-in, in JUMP_IN
        self.resume_seat: Seat = 0  # after a jump-in window nobody took: who moves next,
        self.resume_phase = Phase.TURN  # and in which phase (TURN, or STACK on a stacked penalty)
        self.turns = 0
        self.max_turns = config.max_turns_per_hand
        self.stalled_turns = 0  # turns in a row begun with nothing left to draw (RULINGS 24)
        self.shown: list[tuple[Seat, Seat, tuple[Card, ...]]] = []  # (to, whose, cards)
        self.events = events
        self.first_event = len(events)
        self.actions: list[Action] = []
        self.result: HandEnded | None = None

    @property
    def top(self) -> Card:
        return self.discards[-1]

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def hand_events(self) -> list[Event]:
        """The events of this hand only (a match's log holds every hand's)."""
        return self.events[self.first_event :]

    def next_seat(self, seat: Seat, steps: int = 1) -> Seat:
        return (seat + steps * self.direction) % self.players

    def playable(self, card: Card) -> bool:
        """Matches the top discard by colour, number or symbol, or is a Wild (RULINGS 11, 12)."""
        return card.colour is None or card.colour is self.colour or card.rank is self.discards[-1].rank

    def clone(self, rng: random.Random | None = None, events: list[Event] | None = None) -> Hand:
        """An independent copy, to try an action or search ahead; chance included.

        The copy gets its own generator in the same state, unless `rng` (and
        `events`, the log to continue) are given by a cloning match.
        """
        # not `Hand.__new__(Hand)`, which runs `__init__` once compiled; nor `Hand.__slots__`, which a
        # compiled class does not have: a fresh hand, then every attribute copied
        twin = Hand(self.config, self.rng, self.events)
        for name in _ATTRIBUTES:
            setattr(twin, name, getattr(self, name))
        twin.rng = rng if rng is not None else _copy_rng(self.rng)
        twin.events = events if events is not None else list(self.events)
        twin.cards = [list(held) for held in self.cards]
        twin.draw_pile = list(self.draw_pile)
        twin.discards = list(self.discards)
        twin.catch_queue = list(self.catch_queue)
        twin.jump_queue = list(self.jump_queue)
        twin.shown = list(self.shown)
        twin.actions = list(self.actions)
        return twin

    def card_count(self) -> int:
        """All cards in hands and piles; always 108."""
        return len(self.draw_pile) + len(self.discards) + sum(map(len, self.cards))


def _copy_rng(rng: random.Random) -> random.Random:
    twin = random.Random()
    twin.setstate(rng.getstate())
    return twin


def _shuffle(rng: random.Random, cards: list[Card]) -> None:
    """`rng.shuffle(cards)`: the same order from the same generator state, cheaper once compiled."""
    if _SHUFFLE_MATCHES and type(rng) is random.Random:
        _fisher_yates(rng, cards)
    else:
        rng.shuffle(cards)


def _fisher_yates(rng: random.Random, cards: list[Card]) -> None:
    """The standard library's shuffle written out (each index drawn by `getrandbits` with rejection,
    as `Random._randbelow` does): compiled it costs a C call per card, where `random.shuffle` is
    Python code making Python calls per card."""
    getrandbits = rng.getrandbits
    for i in range(len(cards) - 1, 0, -1):
        below = i + 1
        bits = below.bit_length()
        j = getrandbits(bits)
        while j >= below:
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]


def _shuffle_matches() -> bool:
    """Whether `_fisher_yates` orders a few decks as `random.Random.shuffle` does on this Python:
    replays depend on it, so where it does not the standard library's shuffle is used."""
    for seed in range(4):
        ours, theirs = standard_deck(), standard_deck()
        _fisher_yates(random.Random(seed), ours)
        random.Random(seed).shuffle(theirs)
        if ours != theirs:
            return False
    return True


_SHUFFLE_MATCHES: Final = _shuffle_matches()


def new_hand(
    config: RulesConfig,
    rng: random.Random,
    *,
    dealer: Seat | None = None,
    deck: Sequence[Card] | None = None,
    events: list[Event] | None = None,
) -> Hand:
    """Deal a hand: draw for dealer unless `dealer` is given, shuffle unless `deck` is.

    `deck` is an explicit order, top card first, for tests, puzzles and
    reproducing reported games (see `uno_arena.rules.deck.stacked_deck`).
    """
    hand = Hand(config, rng, [] if events is None else events)
    if dealer is None:
        dealer = draw_for_dealer(config.players, rng, hand.events)
    if not 0 <= dealer < config.players:
        raise ValueError(f"dealer {dealer} is not a seat of {config.players}")
    hand.dealer = dealer
    hand.draw_pile = _ordered_pile(deck) if deck is not None else _shuffled_pile(hand)
    _deal(hand)
    _turn_up_first_card(hand)
    return hand


def _ordered_pile(deck: Sequence[Card]) -> list[Card]:
    if len(deck) != DECK_SIZE or sorted(deck) != standard_deck():
        raise DeckError(f"a deck order must hold exactly the {DECK_SIZE} cards of the deck")
    return list(reversed(deck))


def _shuffled_pile(hand: Hand) -> list[Card]:
    pile = standard_deck()
    _shuffle(hand.rng, pile)
    hand.events.append(Shuffled(ShuffleReason.DEAL, len(pile)))
    return pile


def _deal(hand: Hand) -> None:
    """One card at a time, starting at the dealer's left (RULINGS 4)."""
    for _ in range(hand.config.hand_size):
        for offset in range(1, hand.players + 1):
            hand.cards[(hand.dealer + offset) % hand.players].append(hand.draw_pile.pop())
    for offset in range(1, hand.players + 1):
        seat = (hand.dealer + offset) % hand.players
        hand.events.append(Dealt(seat, len(hand.cards[seat]), tuple(hand.cards[seat])))


def _turn_up_first_card(hand: Hand) -> None:
    """RULINGS 5-10."""
    card = hand.draw_pile.pop()
    while (
        card.rank is Rank.WILD_DRAW_FOUR and hand.config.first_wild_draw_four is FirstWildDrawFour.RESHUFFLE
    ):
        hand.draw_pile.append(card)
        _shuffle(hand.rng, hand.draw_pile)
        hand.events.append(Shuffled(ShuffleReason.FIRST_CARD, len(hand.draw_pile)))
        card = hand.draw_pile.pop()
    hand.discards.append(card)
    hand.colour = card.colour
    hand.events.append(FirstCard(card))
    left = hand.next_seat(hand.dealer)
    if card.is_wild:
        chooser = hand.config.first_wild_chooser
        first_player_names = card.rank is Rank.WILD and chooser is FirstWildChooser.FIRST_PLAYER
        hand.phase = Phase.CHOOSE_COLOUR
        hand.to_move = hand.turn_seat = left if first_player_names else hand.dealer
    elif card.rank is Rank.REVERSE:
        hand.direction = -1
        hand.events.append(DirectionChanged(-1))
        _begin_turn(hand, hand.dealer)
    else:
        _effect_on(hand, left, card)


def _effect_on(hand: Hand, target: Seat, card: Card) -> None:
    """A card's effect on `target`, the player next in turn, who then plays or is skipped.

    Used for first cards and played Numbers, Wilds and Skips; a played Draw Two
    or Wild Draw Four adds to `penalty` instead (see `_resolve`), so here they
    only arrive as a first card (RULINGS 8, 10), which is never stacked on.
    """
    if _forced_draw(hand, target, card) or card.rank is Rank.SKIP:
        hand.events.append(Skipped(target))
        target = hand.next_seat(target)
    _begin_turn(hand, target)


def _forced_draw(hand: Hand, target: Seat, card: Card) -> bool:
    """Make `target` draw for a first-card Draw Two or Wild Draw Four; whether it did."""
    if card.rank is Rank.DRAW_TWO:
        _draw(hand, target, 2, DrawReason.DRAW_TWO)
    elif card.rank is Rank.WILD_DRAW_FOUR:
        _draw(hand, target, 4, DrawReason.WILD_DRAW_FOUR)
    else:
        return False
    return True


def _begin_turn(hand: Hand, seat: Seat) -> None:
    """Start `seat`'s turn, unless the hand can make no more progress (RULINGS 24)."""
    if hand.draw_pile or len(hand.discards) > 1:
        hand.stalled_turns = 0
    elif hand.stalled_turns >= hand.players:
        _end(hand, HandEnd.NO_PROGRESS, None)
        return
    else:
        hand.stalled_turns += 1
    if hand.turns >= hand.max_turns:
        _end(hand, HandEnd.MAX_TURNS, None)
        return
    hand.turns += 1
    hand.phase = Phase.TURN
    hand.to_move = hand.turn_seat = seat


def _draw(hand: Hand, seat: Seat, count: int, reason: DrawReason) -> None:
    drawn = [card for card in (_take(hand) for _ in range(count)) if card is not None]
    hand.cards[seat].extend(drawn)
    hand.events.append(Drew(seat, len(drawn), tuple(drawn), reason))


def _take(hand: Hand) -> Card | None:
    """The top of the draw pile, reshuffling the discards first if it is empty (RULINGS 16)."""
    if not hand.draw_pile and len(hand.discards) > 1:
        top = hand.discards.pop()
        hand.draw_pile = hand.discards
        _shuffle(hand.rng, hand.draw_pile)
        hand.discards = [top]
        hand.events.append(Reshuffled(len(hand.draw_pile)))
    return hand.draw_pile.pop() if hand.draw_pile else None


def apply(hand: Hand, action: Action) -> None:
    """Apply a legal action without checking it (see `validate.play` for untrusted input)."""
    hand.actions.append(action)
    _HANDLERS[action.kind](hand, action)


def _apply_play(hand: Hand, action: Action) -> None:
    seat, card, phase = hand.to_move, action.card, hand.phase
    assert card is not None
    held = hand.cards[seat]
    held.remove(card)
    previous_colour = hand.colour
    hand.discards.append(card)
    hand.colour = card.colour or action.colour
    hand.drawn = None
    hand.turn_seat = seat  # a stacking or jump-in play comes from a seat whose turn it was not
    if phase is Phase.LAY:
        hand.laid += 1
        hand.uno_called = hand.uno_called or action.uno
    else:
        hand.laid, hand.uno_called = 1, action.uno
    jumped = phase is Phase.JUMP_IN
    if jumped:
        hand.jump_queue = []
    hand.events.append(Played(seat, card, action.colour, action.uno, len(held), jumped))
    if card.rank is Rank.WILD_DRAW_FOUR:
        hand.wild_draw_four_seat = seat
        hand.wild_draw_four_guilty = any(c.colour is previous_colour for c in held)
        hand.penalty += 4
    elif card.rank is Rank.DRAW_TWO:
        hand.penalty += 2
    if not held:
        _go_out(hand, seat, card)
    elif _lays_more(hand.config, phase, card):
        hand.phase = Phase.LAY  # even with nothing to add: others must not learn that (RULINGS 29)
    else:
        _finish_play(hand, seat, card)


_LAYING = (Phase.TURN, Phase.STACK, Phase.LAY)
"""Where a play may be followed by more cards (multi_play): not after a draw (RULINGS 13) nor a jump-in."""


def _lays_more(config: RulesConfig, phase: Phase, card: Card) -> bool:
    """Whether a play of `card` in `phase` may be followed by more cards of its number or symbol
    (multi_play, RULINGS 28): never a Wild, nor after a draw or a jump-in."""
    return config.multi_play and phase in _LAYING and not card.is_wild


def may_lay_more(hand: Hand, card: Card) -> bool:
    """Whether the seat to move, playing `card` now, may lay more cards with it (RULINGS 28)."""
    return _lays_more(hand.config, hand.phase, card)


def _apply_done(hand: Hand, action: Action) -> None:
    _finish_play(hand, hand.to_move, hand.discards[-1])


def _finish_play(hand: Hand, seat: Seat, card: Card) -> None:
    """The play is whole: Seven-0's swaps (a decision each) and passes, then UNO is judged."""
    if hand.config.seven_zero:
        if card.rank is Rank.SEVEN:
            hand.swaps = hand.laid
            hand.phase = Phase.SWAP
            return
        if card.rank is Rank.ZERO:
            for _ in range(hand.laid):
                _pass_hands(hand)
    _judge_uno(hand, seat, card)


def _judge_uno(hand: Hand, seat: Seat, card: Card) -> None:
    """RULINGS 19 on the hand as the whole play left it (after any swap or pass, RULINGS 27, 28)."""
    if len(hand.cards[seat]) == 1 and not hand.uno_called:
        _open_catch_window(hand, seat, card)
    else:
        _resolve(hand, seat, card)


def _apply_swap(hand: Hand, action: Action) -> None:
    seat, other = hand.to_move, action.seat
    assert other is not None
    cards = hand.cards
    cards[seat], cards[other] = cards[other], cards[seat]
    hand.events.append(Swapped(seat, other))
    hand.events.append(Received(seat, other, len(cards[seat]), tuple(sorted(cards[seat]))))
    hand.events.append(Received(other, seat, len(cards[other]), tuple(sorted(cards[other]))))
    hand.swaps -= 1
    if not hand.swaps:
        _judge_uno(hand, seat, hand.discards[-1])


def _pass_hands(hand: Hand) -> None:
    """RULINGS 27: every hand moves one seat in the direction of play."""
    before = hand.cards
    givers = [hand.next_seat(seat, -1) for seat in range(hand.players)]
    hand.cards = [before[giver] for giver in givers]
    hand.events.append(HandsPassed(hand.direction))
    for seat, giver in enumerate(givers):
        held = hand.cards[seat]
        hand.events.append(Received(seat, giver, len(held), tuple(sorted(held))))


def _open_catch_window(hand: Hand, seat: Seat, card: Card) -> None:
    hand.pending = card
    hand.catch_queue = [hand.next_seat(seat, k) for k in range(hand.players - 1, 0, -1)]
    hand.phase = Phase.CATCH
    hand.to_move = hand.catch_queue.pop()


def _resolve(hand: Hand, seat: Seat, card: Card) -> None:
    """The effect of the `hand.laid` cards like `card` just played by `seat`, each in turn
    (RULINGS 14, 15, 28): two Skips skip two players, two Reverses cancel."""
    if card in _NO_EFFECT:  # the common case, kept short
        _next(hand, seat, (seat + hand.direction) % hand.players, Phase.TURN)
        return
    rank = card.rank
    if rank is Rank.REVERSE:
        for _ in range(hand.laid):
            hand.direction = -hand.direction
            hand.events.append(DirectionChanged(hand.direction))
        if hand.players == 2 and hand.laid % 2:
            hand.events.append(Skipped(hand.next_seat(seat)))
            _next(hand, seat, seat, Phase.TURN)
        else:
            _next(hand, seat, hand.next_seat(seat), Phase.TURN)
    elif rank is Rank.WILD_DRAW_FOUR:
        hand.phase = Phase.CHALLENGE
        hand.to_move = hand.next_seat(seat)
    elif rank is Rank.DRAW_TWO:
        target = hand.next_seat(seat)
        if hand.config.stacking:
            _next(hand, seat, target, Phase.STACK)
        else:
            _draw_penalty(hand, target, DrawReason.DRAW_TWO)
            hand.events.append(Skipped(target))
            _begin_turn(hand, hand.next_seat(target))  # no jump-in on a paid Draw Two (RULINGS 26)
    else:  # Skip
        target = hand.next_seat(seat)
        for _ in range(hand.laid):
            hand.events.append(Skipped(target))
            target = hand.next_seat(target)
        _next(hand, seat, target, Phase.TURN)


def _next(hand: Hand, played_by: Seat, seat: Seat, phase: Phase) -> None:
    """`seat` moves next in `phase` (TURN, or STACK on a stacked penalty), after a jump-in
    window if one opens (RULINGS 26)."""
    if hand.config.jump_in and _jumpable(hand):
        hand.resume_seat, hand.resume_phase = seat, phase
        hand.jump_queue = [hand.next_seat(played_by, k) for k in range(hand.players - 1, 0, -1)]
        hand.phase = Phase.JUMP_IN
        hand.to_move = hand.jump_queue.pop()
    elif phase is Phase.STACK:
        hand.phase = Phase.STACK
        hand.to_move = seat
    else:
        _begin_turn(hand, seat)


def _jumpable(hand: Hand) -> bool:
    """Whether someone may hold a copy of the top card, judged on public cards only (two of each
    card but the 0s; those in the discards since the last reshuffle are out of reach)."""
    top = hand.discards[-1]
    if top.is_wild:
        return False
    copies = 1 if top.rank is Rank.ZERO else 2
    return hand.discards.count(top) < copies


def _go_out(hand: Hand, seat: Seat, card: Card) -> None:
    """The last card: a Draw Two or Wild Draw Four still makes the next player draw (RULINGS 21),
    the whole stacked total with `stacking` (RULINGS 25)."""
    if card.rank is Rank.DRAW_TWO or card.rank is Rank.WILD_DRAW_FOUR:
        reason = DrawReason.DRAW_TWO if card.rank is Rank.DRAW_TWO else DrawReason.WILD_DRAW_FOUR
        _draw_penalty(hand, hand.next_seat(seat), reason)
    _end(hand, HandEnd.PLAYED_OUT, seat)


def _draw_penalty(hand: Hand, seat: Seat, reason: DrawReason, extra: int = 0) -> None:
    """`seat` draws the pending total (plus `extra`, a lost challenge's two); nothing is pending after."""
    count, hand.penalty = hand.penalty + extra, 0
    _draw(hand, seat, count, reason)


def _end(hand: Hand, reason: HandEnd, winner: Seat | None) -> None:
    hand.phase = Phase.OVER
    hand.to_move = -1
    hand.result = HandEnded(reason, winner, _hand_points(hand, winner))
    hand.events.append(hand.result)


def _hand_points(hand: Hand, winner: Seat | None) -> tuple[int, ...]:
    """What each seat scores from the hand (RULINGS 22, 23); nobody scores without a winner."""
    left = [sum(c.rank.points for c in held) for held in hand.cards]
    if winner is None:
        return (0,) * hand.players
    if hand.config.scoring is Scoring.PENALTY_POINTS:
        return tuple(left)
    return tuple(sum(left) if seat == winner else 0 for seat in range(hand.players))


def _apply_draw(hand: Hand, action: Action) -> None:
    """Draw one card, or until playable with `draw_until_playable` (RULINGS 13, 16)."""
    seat = hand.to_move
    drawn: list[Card] = []
    while (card := _take(hand)) is not None:
        drawn.append(card)
        if hand.playable(card) or not hand.config.draw_until_playable:
            break
    hand.cards[seat].extend(drawn)
    hand.events.append(Drew(seat, len(drawn), tuple(drawn), DrawReason.DRAW))
    if drawn:  # a decision even when the card does not play (only KEEP then): RULINGS 29
        hand.phase = Phase.DRAWN
        hand.drawn = drawn[-1]
    else:  # nothing was left to draw, which everyone sees: no decision to hide
        _keep_drawn(hand, seat)


def _apply_keep(hand: Hand, action: Action) -> None:
    _keep_drawn(hand, hand.to_move)


def _keep_drawn(hand: Hand, seat: Seat) -> None:
    """End a turn that drew and did not play: a `keep` action, whether the drawn card could have
    been played or not, or a draw that found no card; the same `Kept` (RULINGS 29)."""
    hand.events.append(Kept(seat))
    hand.drawn = None
    _begin_turn(hand, (seat + hand.direction) % hand.players)


def _apply_catch(hand: Hand, action: Action) -> None:
    victim = hand.turn_seat
    hand.events.append(Caught(hand.to_move, victim))
    _draw(hand, victim, hand.config.uno_penalty, DrawReason.UNO_PENALTY)
    _close_catch_window(hand)


def _apply_pass(hand: Hand, action: Action) -> None:
    if hand.phase is Phase.JUMP_IN:  # no event: a pass says nothing others should learn
        if hand.jump_queue:
            hand.to_move = hand.jump_queue.pop()
        else:
            _next_after_window(hand)
        return
    hand.events.append(CatchPassed(hand.to_move))
    if hand.catch_queue:
        hand.to_move = hand.catch_queue.pop()
    else:
        _close_catch_window(hand)


def _next_after_window(hand: Hand) -> None:
    """Nobody jumped in: the player who was next moves."""
    if hand.resume_phase is Phase.STACK:
        hand.phase = Phase.STACK
        hand.to_move = hand.resume_seat
    else:
        _begin_turn(hand, hand.resume_seat)


def _close_catch_window(hand: Hand) -> None:
    card, hand.pending = hand.pending, None
    hand.catch_queue = []
    assert card is not None
    _resolve(hand, hand.turn_seat, card)


def _apply_accept(hand: Hand, action: Action) -> None:
    """Draw the pending total and lose the turn: a Wild Draw Four's, or with stacking a Draw Two's."""
    seat = hand.to_move
    hand.events.append(Accepted(seat))
    _draw_penalty(hand, seat, DrawReason.DRAW_TWO if hand.phase is Phase.STACK else DrawReason.WILD_DRAW_FOUR)
    hand.events.append(Skipped(seat))
    _begin_turn(hand, hand.next_seat(seat))


def _apply_challenge(hand: Hand, action: Action) -> None:
    """RULINGS 17: the hand is shown to the challenger; the named colour stands.

    Only the last Wild Draw Four can be challenged (RULINGS 25): guilty, its player draws the
    whole total; innocent, the challenger draws the total plus two.
    """
    challenger, challenged = hand.to_move, hand.wild_draw_four_seat
    guilty = hand.wild_draw_four_guilty
    shown = tuple(sorted(hand.cards[challenged]))
    hand.shown.append((challenger, challenged, shown))
    hand.events.append(Challenged(challenger, challenged, guilty))
    hand.events.append(HandShown(challenged, challenger, shown))
    if guilty:
        _draw_penalty(hand, challenged, DrawReason.CHALLENGE)
        _begin_turn(hand, challenger)
    else:
        _draw_penalty(hand, challenger, DrawReason.CHALLENGE, extra=2)
        hand.events.append(Skipped(challenger))
        _begin_turn(hand, hand.next_seat(challenger))


def _apply_choose_colour(hand: Hand, action: Action) -> None:
    """The colour of a first-card Wild; a first Wild Draw Four then hits the next player."""
    assert action.colour is not None
    hand.colour = action.colour
    hand.events.append(ColourChosen(hand.to_move, action.colour))
    _effect_on(hand, hand.next_seat(hand.dealer), hand.top)


_NO_EFFECT = frozenset(face for face in FACES if face.rank.is_number or face.rank is Rank.WILD)

_HANDLERS = {
    ActionKind.PLAY: _apply_play,
    ActionKind.DRAW: _apply_draw,
    ActionKind.KEEP: _apply_keep,
    ActionKind.CATCH: _apply_catch,
    ActionKind.PASS: _apply_pass,
    ActionKind.ACCEPT: _apply_accept,
    ActionKind.CHALLENGE: _apply_challenge,
    ActionKind.CHOOSE_COLOUR: _apply_choose_colour,
    ActionKind.DONE: _apply_done,
    ActionKind.SWAP: _apply_swap,
}
