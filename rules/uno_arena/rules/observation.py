"""What one seat may see (RULINGS 29), and nothing more.

An `Observation` is built fresh for a seat: its own cards, public counts and
piles, the hands shown to it in challenges, and its legal actions when it is
the one to move. It never holds another seat's cards, the draw pile's order,
the random generator or a seed, nor whether another seat's drawn card could
have been played.
"""

from __future__ import annotations

from dataclasses import dataclass

from uno_arena.rules.action import Action
from uno_arena.rules.card import Card, Colour
from uno_arena.rules.choices import LegalActions
from uno_arena.rules.event import Seat
from uno_arena.rules.hand import Hand, Phase
from uno_arena.rules.legal import legal_actions
from uno_arena.rules.value import Value


@dataclass(frozen=True, slots=True)
class Observation(Value):
    """One seat's view of the game at a decision point.

    `discards` is the discard pile since the last reshuffle, bottom first (its
    last card is the top). `drawn` is set only for the seat that just drew (phase
    `drawn`): the card drawn, playable or not (its legal actions say: its plays and
    `keep`, or `keep` alone). Every draw of a card asks the drawer this decision, so
    to every other seat the drawer's turn looks the same either way, its phase
    reading `turn`: whether a drawn card could be played stays hidden (RULINGS 29).
    `shown` lists (seat, cards) of hands shown to this seat in challenges this
    hand. `scores` are match totals (zeros for a lone hand). `penalty` is the
    number of cards pending for the next player from the Draw Twos and Wild
    Draw Fours just played: what the seat to move draws if it accepts in
    phase `stack` or `challenge` (stacked totals with `stacking`); 0 otherwise.
    `match_id` names the match for a bot that plays several at once ("" when
    no host named it: a lone hand, the rules core's own matches).

    A bot reads `hand` (its cards) and `legal` (`legal_actions` with filters:
    `legal.plays()`, `legal.safe_default()` ...).
    """

    seat: Seat
    players: int
    phase: Phase
    to_move: Seat
    turn_seat: Seat
    dealer: Seat
    direction: int
    cards: tuple[Card, ...]
    top: Card
    colour: Colour | None
    discards: tuple[Card, ...]
    hand_sizes: tuple[int, ...]
    draw_pile_size: int
    drawn: Card | None
    penalty: int
    shown: tuple[tuple[Seat, tuple[Card, ...]], ...]
    turn: int
    scores: tuple[int, ...]
    target_score: int
    hand_number: int
    legal_actions: tuple[Action, ...]
    match_id: str

    def __init__(
        self,
        seat: Seat,
        players: int,
        phase: Phase,
        to_move: Seat,
        turn_seat: Seat,
        dealer: Seat,
        direction: int,
        cards: tuple[Card, ...],
        top: Card,
        colour: Colour | None,
        discards: tuple[Card, ...],
        hand_sizes: tuple[int, ...],
        draw_pile_size: int,
        drawn: Card | None,
        penalty: int,
        shown: tuple[tuple[Seat, tuple[Card, ...]], ...],
        turn: int,
        scores: tuple[int, ...],
        target_score: int,
        hand_number: int,
        legal_actions: tuple[Action, ...],
        match_id: str = "",
    ) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "to_move", to_move)
        object.__setattr__(self, "turn_seat", turn_seat)
        object.__setattr__(self, "dealer", dealer)
        object.__setattr__(self, "direction", direction)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "top", top)
        object.__setattr__(self, "colour", colour)
        object.__setattr__(self, "discards", discards)
        object.__setattr__(self, "hand_sizes", hand_sizes)
        object.__setattr__(self, "draw_pile_size", draw_pile_size)
        object.__setattr__(self, "drawn", drawn)
        object.__setattr__(self, "penalty", penalty)
        object.__setattr__(self, "shown", shown)
        object.__setattr__(self, "turn", turn)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "target_score", target_score)
        object.__setattr__(self, "hand_number", hand_number)
        object.__setattr__(self, "legal_actions", legal_actions)
        object.__setattr__(self, "match_id", match_id)

    @property
    def is_my_move(self) -> bool:
        return self.to_move == self.seat

    @property
    def hand(self) -> tuple[Card, ...]:
        """This seat's cards, sorted: `cards` by the name bots use."""
        return self.cards

    @property
    def legal(self) -> LegalActions:
        """The legal actions with the questions a bot asks of them (`plays()`, `draw`, `safe_default()`)."""
        return LegalActions(self.legal_actions)

    @property
    def next_seat(self) -> Seat:
        """Who plays after the seat whose turn it is."""
        return (self.turn_seat + self.direction) % self.players

    @property
    def opponents(self) -> tuple[Seat, ...]:
        return tuple(s for s in range(self.players) if s != self.seat)


def observe_hand(
    hand: Hand,
    seat: Seat,
    scores: tuple[int, ...] | None = None,
    hand_number: int = 0,
    match_id: str = "",
) -> Observation:
    """`seat`'s view of `hand`; `scores` and `hand_number` come from the match, if any, and
    `match_id` from whoever hosts it."""
    if not 0 <= seat < hand.players:
        raise ValueError(f"seat {seat} is not a seat of {hand.players}")
    mine = hand.to_move == seat and hand.phase is not Phase.OVER
    # Only the drawer sees its decision after a draw, and whether its card plays (RULINGS 29).
    phase = Phase.TURN if hand.phase is Phase.DRAWN and not mine else hand.phase
    return Observation(
        seat=seat,
        players=hand.players,
        phase=phase,
        to_move=hand.to_move,
        turn_seat=hand.turn_seat,
        dealer=hand.dealer,
        direction=hand.direction,
        cards=tuple(sorted(hand.cards[seat])),
        top=hand.discards[-1],
        colour=hand.colour,
        discards=tuple(hand.discards),
        hand_sizes=tuple(len(held) for held in hand.cards),
        draw_pile_size=len(hand.draw_pile),
        drawn=hand.drawn if mine else None,
        penalty=hand.penalty,
        shown=tuple((whose, cards) for to, whose, cards in hand.shown if to == seat),
        turn=hand.turns,
        scores=scores if scores is not None else (0,) * hand.players,
        target_score=hand.config.target_score,
        hand_number=hand_number,
        legal_actions=tuple(legal_actions(hand)) if mine else (),
        match_id=match_id,
    )
