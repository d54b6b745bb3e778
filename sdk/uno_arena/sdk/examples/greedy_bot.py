"""Greedy: shed the most valuable card, keep Wilds for when nothing else plays.

It names the colour it holds most, always calls UNO, always catches, and
accepts a Wild Draw Four rather than risk six cards. With the house rules it
sheds whenever it can: it stacks to pass a penalty on rather than draw it
(`stacking`), jumps in whenever it holds the identical card (`jump_in`), lays
every card it can with a play (`multi_play`), and swaps hands with the
smallest one (`seven_zero`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from uno_arena.sdk import Action, Bot, Card, Colour, Kind, Observation


def colour_held_most(cards: Iterable[Card]) -> Colour:
    counts = Counter(c.colour for c in cards if c.colour is not None)
    return max(Colour, key=lambda colour: (counts[colour], -list(Colour).index(colour)))


def calling(plays: Sequence[Action]) -> list[Action]:
    """Each play once, with the UNO call wherever it is offered.

    A call that turns out not to be needed costs nothing (RULINGS 20), and with `seven_zero`
    every 7 and 0 comes with it, so `legal.plays(uno=True) or legal.plays()` would keep only
    the 7s and 0s: pick the card first, then its calling variant.
    """
    called = {(a.card, a.colour) for a in plays if a.uno}
    return [a for a in plays if a.uno or (a.card, a.colour) not in called]


def smallest_hand(observation: Observation, swaps: Sequence[Action]) -> Action:
    """The swap that takes the smallest hand (the first such seat when several tie)."""
    return min(swaps, key=lambda a: (observation.hand_sizes[a.seat] if a.seat is not None else 0, a.id))


class GreedyBot(Bot):
    def decide(self, observation: Observation) -> Action:
        legal = observation.legal
        if legal.catch is not None:
            return legal.catch
        plays = calling(legal.plays())
        if legal.accept is not None:  # a penalty is pending: pass it on if it can, else draw it
            return self._stack(observation, plays) if plays else legal.accept
        if legal.colour_choices():
            best = colour_held_most(observation.hand)
            return next(a for a in legal.colour_choices() if a.colour is best)
        if legal.swaps():
            return smallest_hand(observation, legal.swaps())
        if not plays:  # nothing to jump in with, nothing more to lay, or draw
            return legal.safe_default()
        coloured = [a for a in plays if a.card is not None and not a.card.is_wild]
        if coloured:
            return max(coloured, key=lambda a: (a.card.points if a.card else 0, -a.id))
        return self._wild(observation, plays)

    @staticmethod
    def _stack(observation: Observation, stacks: list[Action]) -> Action:
        """A Draw Two on a Draw Two, or a Wild Draw Four on one, keeping the colour held most."""
        rest = list(observation.hand)
        card = stacks[0].card
        if card in rest:
            rest.remove(card)
        best = colour_held_most(rest)
        keeps_best = [a for a in stacks if best in (a.colour, a.card.colour if a.card else None)]
        return (keeps_best or stacks)[0]

    @staticmethod
    def _wild(observation: Observation, plays: list[Action]) -> Action:
        """A Wild (plain before Draw Four), naming the colour held most among the cards left."""
        wild = min(plays, key=lambda a: (a.card.kind is not Kind.WILD if a.card else True, a.id)).card
        rest = list(observation.hand)
        if wild in rest:
            rest.remove(wild)
        best = colour_held_most(rest)
        return next(a for a in plays if a.card is wild and a.colour is best)
