"""Replays: the same config, seed and actions rebuild the same hand or match, event for event.

Recorded action lists of earlier versions read too. Up to uno-arena 0.2 a draw whose card could not
be played ended the turn by itself, with no KEEP among the actions; now every draw asks the drawer
(phase DRAWN, KEEP its only action when the card does not play: RULINGS 29). Replaying, such a
decision is taken as KEEP whenever the next recorded action is not KEEP (`keep_skipped`): the list
of an earlier version never holds a KEEP there (its next action is the next seat's), and a list of
this version always does. The events are the same either way, so an old record replays to its log.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from uno_arena.rules.action import KEEP, Action
from uno_arena.rules.card import Card
from uno_arena.rules.config import RulesConfig
from uno_arena.rules.hand import Hand, Phase, new_hand
from uno_arena.rules.match import Match, State, legal_actions, new_match, play


def keep_skipped(state: State, following: Action | None) -> bool:
    """Whether a recorded action list skips a KEEP here, as lists of earlier versions did: the seat
    to move drew a card that does not play (phase DRAWN, KEEP the only legal action) and the next
    recorded action, `following`, is not KEEP (None: the list ends here). Only for replaying
    recorded lists (`play_recorded`); a live match asks the seat."""
    hand = state.hand if isinstance(state, Match) else state
    if hand.phase is not Phase.DRAWN or following is KEEP:
        return False
    legal = legal_actions(state)
    return len(legal) == 1 and legal[0] is KEEP


def play_recorded(state: State, action: Action) -> bool:
    """Validate and apply the next action of a recorded list, after the KEEP an earlier version's
    list skips before it (`keep_skipped`); whether it took one."""
    skipped = keep_skipped(state, action)
    if skipped:
        play(state, KEEP)
    play(state, action)
    return skipped


def replay_match(config: RulesConfig, seed: int, actions: Iterable[Action]) -> Match:
    """Rebuild a match; each action is validated, so a tampered log raises. A list of an earlier
    version reads too (`play_recorded`); one that ends on a draw whose card does not play is left
    in that DRAWN decision, as a list of this version cut there would be."""
    match = new_match(config, random.Random(seed))
    for action in actions:
        play_recorded(match, action)
    return match


def replay_hand(
    config: RulesConfig,
    seed: int,
    actions: Iterable[Action],
    *,
    dealer: int | None = None,
    deck: Sequence[Card] | None = None,
) -> Hand:
    """Rebuild a lone hand, dealt as `new_hand` deals it with the same arguments (a list of an earlier
    version reads too, as in `replay_match`)."""
    hand = new_hand(config, random.Random(seed), dealer=dealer, deck=deck)
    for action in actions:
        play_recorded(hand, action)
    return hand
