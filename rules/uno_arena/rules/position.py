"""A hand arranged in a given position, for tests and puzzles.

`new_hand` deals from a deck order and starts at the first card; `arranged_hand` sets up a
position in the middle of a hand directly: who holds what, the piles, whose decision it is.
It refuses positions the rules could not reach (not the 108 cards, a phase its cards do not
fit), so `legal_actions`, `observe` and `apply` work on the result as on any hand.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from uno_arena.rules.card import Card, Colour, Rank, standard_deck
from uno_arena.rules.config import FirstWildChooser, RulesConfig
from uno_arena.rules.event import Seat
from uno_arena.rules.hand import Hand, Phase


class PositionError(ValueError):
    """A position the rules cannot reach; the message says what is wrong with it."""


def arranged_hand(
    config: RulesConfig,
    *,
    cards: Sequence[Sequence[Card]],
    discards: Sequence[Card],
    draw_pile: Sequence[Card],
    colour: Colour | None,
    phase: Phase,
    to_move: Seat,
    turn_seat: Seat | None = None,
    dealer: Seat = 0,
    direction: int = 1,
    drawn: Card | None = None,
    turns: int = 1,
    guilty: bool = False,
    penalty: int | None = None,
    laid: int | None = None,
    swaps: int | None = None,
    uno_called: bool = False,
    rng: random.Random | None = None,
) -> Hand:
    """A hand in this position, `to_move` deciding in `phase`.

    `cards[seat]` is what each seat holds; `discards` bottom first (the last is the top card);
    `draw_pile` top first; together exactly the 108 cards. `colour` is the colour to match (None
    only while a first-card Wild waits for its colour). `turn_seat` is whose turn it is: in
    CATCH the seat that did not call UNO, in CHALLENGE the one that played the Wild Draw Four
    (`guilty`: whether it held a card of the previous colour); elsewhere `to_move` (the default).
    In DRAWN, `drawn` is the card just drawn, among `cards[to_move]`, playable or not (then KEEP is
    the only legal action). In STACK (only
    with `stacking`) `turn_seat` played the Draw Two on top. `penalty` is the total the seat
    after `turn_seat` must draw for the Draw Two or Wild Draw Four on top (in CATCH, STACK,
    CHALLENGE, JUMP_IN and LAY; default 2 or 4 per card laid, more only when stacked with
    `stacking`).

    The house rules' phases: in JUMP_IN (`jump_in`) `turn_seat` (default: the seat before
    `to_move`) played the top card, its effect has applied, and `to_move` is asked to jump in,
    `direction` being the one after the effect; in LAY (`multi_play`) `to_move` has just played
    the top card; in SWAP (`seven_zero`) `to_move` has just played the 7 on top and owes `swaps`
    swaps (default 1). `laid` is how many cards of the top card's number or symbol the play laid,
    the top `laid` discards (default 1, or `swaps`; more only with `multi_play`), in CATCH,
    JUMP_IN, LAY and SWAP; `uno_called` whether the play called UNO (LAY and SWAP: it is judged
    when the play is whole).
    """
    if turn_seat is None:
        behind = phase is Phase.STACK or phase is Phase.JUMP_IN
        turn_seat = (to_move - direction) % config.players if behind else to_move
    _check_table(config, cards, discards, draw_pile, to_move, turn_seat, dealer, direction)
    top = discards[-1]
    if phase is Phase.CHOOSE_COLOUR:
        if not top.is_wild or len(discards) != 1 or colour is not None:
            raise PositionError("choose_colour: the first card turned up must be a Wild, alone in the "
                                "discards, with no colour named yet")  # fmt: skip
    elif colour is None:
        raise PositionError(f"the top card {top} is a Wild: name the colour chosen with it")
    elif not top.is_wild and colour is not top.colour:
        raise PositionError(f"the colour to match is the top card's ({top.colour}), not {colour}")
    hand = Hand(config, rng if rng is not None else random.Random(0), [])
    hand.cards = [list(held) for held in cards]
    hand.discards = list(discards)
    hand.draw_pile = list(reversed(draw_pile))  # the hand keeps its top card last
    hand.colour, hand.phase, hand.to_move, hand.turn_seat = colour, phase, to_move, turn_seat
    hand.dealer, hand.direction, hand.turns = dealer, direction, turns
    if phase is Phase.CHOOSE_COLOUR:
        _check_chooser(hand)
    elif phase is Phase.TURN and to_move != turn_seat:
        raise PositionError("turn: the seat to move is the one whose turn it is")
    elif phase is Phase.DRAWN:
        _arrange_drawn(hand, drawn)
    elif phase is Phase.CATCH:
        _arrange_catch(hand)
    elif phase is Phase.CHALLENGE:
        if top.rank is not Rank.WILD_DRAW_FOUR or to_move != hand.next_seat(turn_seat):
            raise PositionError("challenge: the top card must be a Wild Draw Four, just played by the "
                                "seat before the one to move (turn_seat)")  # fmt: skip
        hand.wild_draw_four_seat, hand.wild_draw_four_guilty = turn_seat, guilty
    elif phase is Phase.STACK:
        if not config.stacking:
            raise PositionError("stack: only with the stacking house rule")
        if top.rank is not Rank.DRAW_TWO or to_move != hand.next_seat(turn_seat):
            raise PositionError("stack: the top card must be a Draw Two, just played by the seat "
                                "before the one to move (turn_seat)")  # fmt: skip
    elif phase is Phase.OVER:
        raise PositionError("a hand that is over has no decision to arrange")
    if phase is not Phase.DRAWN and drawn is not None:
        raise PositionError(f"only phase drawn has a drawn card, not {phase}")
    hand.laid = _laid(hand, laid, swaps)
    if phase is Phase.JUMP_IN:
        _arrange_jump_in(hand)
    elif phase is Phase.LAY:
        _arrange_lay(hand)
    elif phase is Phase.SWAP:
        _arrange_swap(hand, swaps)
    elif swaps is not None:
        raise PositionError(f"swaps {swaps}: only in phase swap, not {phase}")
    _check_uno_called(hand, uno_called)
    hand.penalty = _penalty(hand, penalty)
    return hand


_PENALTY_CARDS = {Rank.DRAW_TWO: (2, 8), Rank.WILD_DRAW_FOUR: (4, 4)}  # each adds, copies in the deck


_PENDING = (Phase.CATCH, Phase.STACK, Phase.CHALLENGE, Phase.JUMP_IN, Phase.LAY)
"""Where a Draw Two or Wild Draw Four on top still has its penalty to pay."""


def _penalty(hand: Hand, penalty: int | None) -> int:
    """The pending total: the top cards' own unless stacked (RULINGS 25, 28); nothing between turns."""
    pending = hand.phase in _PENDING and hand.top.rank in _PENALTY_CARDS
    if not pending:
        if penalty:
            raise PositionError(f"penalty {penalty}: nothing is pending in {hand.phase} on {hand.top}")
        return 0
    step, copies = _PENALTY_CARDS[hand.top.rank]
    least = step * max(hand.laid, 1)  # the cards just laid; STACK and CHALLENGE come after the play
    if penalty is None:
        return least
    most = step * copies if hand.config.stacking else least
    if penalty % step or not least <= penalty <= most:
        raise PositionError(
            f"penalty {penalty}: {hand.top} makes it a multiple of {step} from {least} "
            f"to {most}" + ("" if hand.config.stacking else " (more only with stacking)")
        )
    return penalty


_LAID_PHASES = (Phase.CATCH, Phase.JUMP_IN, Phase.LAY, Phase.SWAP)
"""Where the cards laid by the play just made are still to take effect."""


def _laid(hand: Hand, laid: int | None, swaps: int | None) -> int:
    """How many cards the play on top laid (RULINGS 28): the top `laid` discards share its rank."""
    if hand.phase not in _LAID_PHASES:
        if laid is not None:
            raise PositionError(f"laid {laid}: only in phases catch, jump_in, lay and swap, not {hand.phase}")
        return 0
    if laid is None:
        laid = swaps if hand.phase is Phase.SWAP and swaps is not None else 1
    top = hand.top
    if laid < 1:
        raise PositionError(f"laid {laid}: a play lays at least one card")
    if laid > 1 and not hand.config.multi_play:
        raise PositionError(f"laid {laid}: more than one card at once only with the multi_play house rule")
    if laid > 1 and top.is_wild:
        raise PositionError(f"laid {laid}: Wilds are never laid together")
    together = hand.discards[-laid:]
    if len(together) < laid or any(c.rank is not top.rank for c in together):
        raise PositionError(f"laid {laid}: the top {laid} discards must all be {top.rank.value} cards, "
                            f"not {', '.join(map(str, together))}")  # fmt: skip
    return laid


def _arrange_jump_in(hand: Hand) -> None:
    """RULINGS 26: the window after `turn_seat`'s play took effect; `to_move` is asked, then
    the seats after it up to the player; if nobody jumps in, the player due next moves."""
    player, seat, top = hand.turn_seat, hand.to_move, hand.top
    if not hand.config.jump_in:
        raise PositionError("jump_in: only with the jump_in house rule")
    if player == seat:
        raise PositionError("jump_in: the seat to move is asked about another's play (turn_seat)")
    if top.is_wild:
        raise PositionError(f"jump_in: no window opens after a Wild ({top})")
    if top.rank is Rank.DRAW_TWO and not hand.config.stacking:
        raise PositionError("jump_in: no window opens after a Draw Two without stacking (it is paid at once)")
    copies = 1 if top.rank is Rank.ZERO else 2
    if hand.discards.count(top) >= copies:
        raise PositionError(f"jump_in: every copy of {top} is in the discards: no window opens")
    order = [hand.next_seat(player, k) for k in range(1, hand.players)]
    hand.jump_queue = list(reversed(order[order.index(seat) + 1 :]))
    hand.resume_seat, hand.resume_phase = _due_next(hand, player, top)


def _due_next(hand: Hand, player: Seat, top: Card) -> tuple[Seat, Phase]:
    """Who moves after `player`'s play of `hand.laid` cards like `top` took effect, and in which
    phase (as `hand._resolve` leaves it; `direction` is already the one after any Reverse)."""
    if top.rank is Rank.SKIP:
        return hand.next_seat(player, hand.laid + 1), Phase.TURN
    if top.rank is Rank.REVERSE and hand.players == 2 and hand.laid % 2:
        return player, Phase.TURN
    if top.rank is Rank.DRAW_TWO:
        return hand.next_seat(player), Phase.STACK
    return hand.next_seat(player), Phase.TURN


def _arrange_lay(hand: Hand) -> None:
    if not hand.config.multi_play:
        raise PositionError("lay: only with the multi_play house rule")
    if hand.to_move != hand.turn_seat:
        raise PositionError("lay: the seat to move is the one that just played (turn_seat)")
    if hand.top.is_wild:
        raise PositionError(f"lay: nothing is laid with a Wild ({hand.top})")


def _arrange_swap(hand: Hand, swaps: int | None) -> None:
    if not hand.config.seven_zero:
        raise PositionError("swap: only with the seven_zero house rule")
    if hand.to_move != hand.turn_seat:
        raise PositionError("swap: the seat to move is the one that just played the 7 (turn_seat)")
    if hand.top.rank is not Rank.SEVEN:
        raise PositionError(f"swap: the top card must be the 7 just played, not {hand.top}")
    owed = 1 if swaps is None else swaps
    if not 1 <= owed <= hand.laid:
        raise PositionError(f"swaps {owed}: one per 7 laid, from 1 to {hand.laid}")
    hand.swaps = owed


def _check_uno_called(hand: Hand, uno_called: bool) -> None:
    """A call is judged when the play is whole (LAY, SWAP); it is offered with the play that leaves
    one card, or with any 7 or 0 under `seven_zero` (RULINGS 19, 27)."""
    if not uno_called:
        return
    if hand.phase is not Phase.LAY and hand.phase is not Phase.SWAP:
        raise PositionError(f"uno_called: only in phases lay and swap, not {hand.phase}")
    seven_zero = hand.config.seven_zero and hand.top.rank in (Rank.SEVEN, Rank.ZERO)
    if len(hand.cards[hand.to_move]) != 1 and not seven_zero:
        raise PositionError(f"uno_called: UNO is called with the play that leaves one card, and seat "
                            f"{hand.to_move} holds {len(hand.cards[hand.to_move])}")  # fmt: skip
    hand.uno_called = True


def _check_table(
    config: RulesConfig,
    cards: Sequence[Sequence[Card]],
    discards: Sequence[Card],
    draw_pile: Sequence[Card],
    to_move: Seat,
    turn_seat: Seat,
    dealer: Seat,
    direction: int,
) -> None:
    players = config.players
    if len(cards) != players:
        raise PositionError(f"{len(cards)} hands for {players} players")
    for name, seat in (("to_move", to_move), ("turn_seat", turn_seat), ("dealer", dealer)):
        if not 0 <= seat < players:
            raise PositionError(f"{name} {seat} is not a seat of {players}")
    if direction not in (1, -1):
        raise PositionError(f"direction is 1 or -1, not {direction}")
    empty = [seat for seat, held in enumerate(cards) if not held]
    if empty:
        raise PositionError(f"seat {empty[0]} holds no card: the hand would be over")
    if not discards:
        raise PositionError("the discards hold at least the top card")
    counted = Counter(c for held in cards for c in held)
    counted.update(discards)
    counted.update(draw_pile)
    deck = Counter(standard_deck())
    extra = sorted((counted - deck).elements())
    if extra:
        raise PositionError(f"more copies than the deck holds: {', '.join(map(str, extra))}")
    missing = sorted((deck - counted).elements())
    if missing:
        raise PositionError(f"{len(missing)} of the 108 cards are nowhere: {', '.join(map(str, missing[:8]))}"
                            + (" ..." if len(missing) > 8 else ""))  # fmt: skip


def _check_chooser(hand: Hand) -> None:
    """RULINGS 9: the dealer names a first Wild's colour, or the player to its left if so configured."""
    left = hand.next_seat(hand.dealer)
    first_player = (
        hand.top.rank is Rank.WILD and hand.config.first_wild_chooser is FirstWildChooser.FIRST_PLAYER
    )
    chooser = left if first_player else hand.dealer
    if hand.to_move != chooser or hand.turn_seat != chooser:
        who = "the player left of the dealer" if first_player else "the dealer"
        raise PositionError(
            f"choose_colour: {who} (seat {chooser}) names the colour, not seat {hand.to_move}"
        )


def _arrange_drawn(hand: Hand, drawn: Card | None) -> None:
    if hand.to_move != hand.turn_seat:
        raise PositionError("drawn: the seat to move is the one whose turn it is")
    if drawn is None or drawn not in hand.cards[hand.to_move]:
        raise PositionError("drawn: the card just drawn must be given, and held by the seat to move")
    hand.drawn = drawn


def _arrange_catch(hand: Hand) -> None:
    """The window after `turn_seat` played its next-to-last card without calling UNO (see hand.py)."""
    offender, seat = hand.turn_seat, hand.to_move
    if offender == seat:
        raise PositionError("catch: the seat to move cannot catch itself (turn_seat did not call UNO)")
    if len(hand.cards[offender]) != 1:
        raise PositionError(f"catch: seat {offender} did not call UNO, so it holds one card, "
                            f"not {len(hand.cards[offender])}")  # fmt: skip
    order = [hand.next_seat(offender, k) for k in range(1, hand.players)]  # who is asked, in turn
    hand.pending = hand.top
    hand.catch_queue = list(reversed(order[order.index(seat) + 1 :]))
