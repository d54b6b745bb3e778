"""The SDK's views built straight from the rules core's values, with no protobuf in between.

For running bots in-process (the local arena, the test kit): each function gives the view EQUAL
to what a connected bot gets for the same moment through the server's encoder and the SDK's
decoding (tests/sdk/test_from_rules.py plays whole matches both ways). Cards and actions are the
same objects the wire path gives (one per face, one per id), and events are cached by value, so a
view costs little more than the rules core's own `observe`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, get_args

from uno_arena import rules
from uno_arena.rules.event import Event as RulesEvent
from uno_arena.rules.event import ShuffleReason as RulesShuffleReason
from uno_arena.sdk.actions import Action, ActionKind, LegalActions
from uno_arena.sdk.actions import interned as interned_action
from uno_arena.sdk.cards import Card, Colour, Kind
from uno_arena.sdk.cards import interned as interned_card
from uno_arena.sdk.events import (
    DrawReason,
    Event,
    EventKind,
    HandEnd,
    HandResult,
    MatchEnd,
    MatchInfo,
    MatchResult,
    ShuffleReason,
    event_with,
)
from uno_arena.sdk.observation import Observation, Phase
from uno_arena.v1 import game_pb2 as pb

# rules value -> SDK value, by value; a member either side lacks fails here, at import
COLOUR: dict[rules.Colour | None, Colour | None] = {None: None, **{c: Colour(c.value) for c in rules.Colour}}
PHASE: dict[rules.Phase, Phase] = {p: Phase(p.value) for p in rules.Phase}
HAND_END: dict[rules.HandEnd, HandEnd] = {h: HandEnd(h.value) for h in rules.HandEnd}
MATCH_END: dict[rules.MatchEnd, MatchEnd] = {m: MatchEnd(m.value) for m in rules.MatchEnd}
_KIND: dict[rules.ActionKind, ActionKind] = {k: ActionKind(k.value) for k in rules.ActionKind}
_ENUMS: dict[Any, Any] = {
    **{(type(k), k): v for k, v in COLOUR.items() if k is not None},
    **{(type(k), k): v for k, v in HAND_END.items()},
    **{(type(k), k): v for k, v in MATCH_END.items()},
    **{(RulesShuffleReason, k): ShuffleReason(k.value) for k in RulesShuffleReason},
}


def _card_view(face: rules.Card) -> Card:
    if face.rank.is_number:
        return interned_card(Card(COLOUR[face.colour], Kind.NUMBER, int(face.rank.value), face.index))
    return interned_card(Card(COLOUR[face.colour], Kind(face.rank.value), None, face.index))


CARDS: tuple[Card, ...] = tuple(_card_view(face) for face in rules.FACES)
"""The view of each face, by `index`."""

ACTIONS: tuple[Action, ...] = tuple(
    interned_action(Action(a.id, _KIND[a.kind], None if a.card is None else CARDS[a.card.index],
                           COLOUR[a.colour], a.uno, str(a), a.seat))
    for a in rules.ACTIONS
)  # fmt: skip
"""The view of each action, by `id`."""

# Keyed by the rules core's interned objects (cards compare by identity), for one lookup each.
_CARD_OF: dict[rules.Card, Card] = {face: CARDS[face.index] for face in rules.FACES}
_ACTION_OF: dict[rules.Action, Action] = {a: ACTIONS[a.id] for a in rules.ACTIONS}
_card = _CARD_OF.__getitem__
# by identity, a few times cheaper than hashing an Action: `legal_actions` gives the interned ones,
# which `rules.ACTIONS` keeps alive (so their ids are never reused)
_ACTION_AT: dict[int, Action] = {id(a): ACTIONS[a.id] for a in rules.ACTIONS}


def _legal(actions: tuple[rules.Action, ...]) -> LegalActions:
    try:
        return LegalActions([_ACTION_AT[id(a)] for a in actions])
    except KeyError:  # an action built outside the rules core's constructors
        return LegalActions([_ACTION_OF[a] for a in actions])


def card_of(card: rules.Card) -> Card:
    return _CARD_OF[card]


def action_of(action: rules.Action) -> Action:
    """The view of a rules action: the same object `action_from` gives for its id."""
    return _ACTION_OF[action]


@functools.lru_cache(maxsize=1024)
def _shown(shown: tuple[tuple[int, tuple[rules.Card, ...]], ...]) -> tuple[tuple[int, tuple[Card, ...]], ...]:
    """Hands shown in challenges: they stay in every later view of the hand, so convert them once."""
    return tuple((seat, tuple(map(_card, cards))) for seat, cards in shown)


def observation_of(match_id: str, seen: rules.Observation) -> Observation:
    """The view of what `seen.seat` sees (`rules.observe`); `legal` from `seen.legal_actions`."""
    drawn = seen.drawn
    return Observation(
        match_id,
        seen.seat,
        seen.players,
        PHASE[seen.phase],
        seen.turn_seat,
        seen.dealer,
        seen.direction,
        tuple(map(_card, seen.cards)),
        _CARD_OF[seen.top],
        COLOUR[seen.colour],
        tuple(map(_card, seen.discards)),
        seen.hand_sizes,
        seen.draw_pile_size,
        None if drawn is None else _CARD_OF[drawn],
        seen.penalty,
        _shown(seen.shown) if seen.shown else (),
        seen.turn,
        seen.scores,
        seen.target_score,
        seen.hand_number,
        _legal(seen.legal_actions),
    )


def _value(value: object) -> Any:
    """A field of a rules event as its SDK value (the protocol's types: a tuple for a list)."""
    if isinstance(value, rules.Card):
        return _CARD_OF[value]
    if isinstance(value, tuple):
        return tuple(_CARD_OF[v] if isinstance(v, rules.Card) else v for v in value)
    if isinstance(value, rules.Colour | rules.HandEnd | rules.MatchEnd | RulesShuffleReason):
        return _ENUMS[(type(value), value)]
    return value


_Layout = tuple[EventKind, tuple[tuple[str, Callable[[object], Any]], ...]]
_LAYOUTS: dict[type, _Layout] = {}


def _upper_snake(name: str) -> str:
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(name)).upper()


def _layout(kind: type) -> _Layout:
    """(kind, (field, converter) ...) of a rules event class, in the protocol message's field order."""
    layout = _LAYOUTS.get(kind)
    if layout is None:
        event_kind = EventKind(_upper_snake(kind.__name__).lower())
        proto = pb.Event.DESCRIPTOR.fields_by_name[event_kind.value].message_type
        assert proto is not None  # every member of the oneof is a message
        ours = {f.name for f in dataclasses.fields(kind)}
        converters: list[tuple[str, Callable[[object], Any]]] = []
        for descriptor in proto.fields:
            name = descriptor.name
            if name == "hidden":  # another seat's cards: the rules core says None, the protocol `hidden`
                converters.append((name, lambda e: getattr(e, "cards") is None))  # noqa: B009
            elif name == "cards" and "hidden" in proto.fields_by_name:
                converters.append((name, lambda e: _value(getattr(e, "cards") or ())))  # noqa: B009
            elif event_kind is EventKind.DREW and name == "reason":
                converters.append((name, lambda e: DrawReason(getattr(e, "reason"))))  # noqa: B009
            elif name in ours:
                converters.append((name, functools.partial(_attribute, name)))
            else:
                raise TypeError(f"the rules core's {kind.__name__} has no field {name!r} of the protocol's")
        layout = _LAYOUTS[kind] = (event_kind, tuple(converters))
    return layout


def _attribute(name: str, event: object) -> Any:
    return _value(getattr(event, name))


@functools.lru_cache(maxsize=16384)
def event_of(event: RulesEvent) -> Event:
    """The view of a rules event already filtered for its receiver (`rules.seen_by`).

    Cached by value, like the server's encodings: most events recur, and views are immutable.
    """
    kind, converters = _layout(type(event))
    return event_with(kind, {name: convert(event) for name, convert in converters})


EVENT_CLASSES: dict[EventKind, type] = {_layout(kind)[0]: kind for kind in get_args(RulesEvent)}
"""The rules core's class of each event kind (every class is checked against the protocol here, at import)."""


def hand_result_of(match_id: str, ended: rules.HandEnded, totals: Sequence[int]) -> HandResult:
    """`totals`: the match totals after this hand."""
    return HandResult(match_id, HAND_END[ended.reason], ended.winner, tuple(ended.points), tuple(totals))


def match_result_of(
    match_id: str, result: rules.MatchResult, bots: Sequence[str], forfeited: Sequence[int] = ()
) -> MatchResult:
    return MatchResult(match_id, MATCH_END[result.reason], tuple(result.winners), tuple(result.totals),
                       tuple(bots), tuple(sorted(forfeited)))  # fmt: skip


_RULES_FIELDS = frozenset(pb.RulesConfig.DESCRIPTOR.fields_by_name)


def match_info_of(
    match_id: str,
    seat: int,
    bots: Sequence[str],
    config: rules.RulesConfig,
    decision_timeout: float,
    max_strikes: int = 3,
) -> MatchInfo:
    """`decision_timeout` in seconds, kept to whole milliseconds as the protocol carries it."""
    options = {name: value for name, value in config.to_dict().items() if name in _RULES_FIELDS}
    return MatchInfo(match_id, seat, tuple(bots), options, int(decision_timeout * 1000) / 1000, max_strikes)


__all__ = [
    "ACTIONS",
    "CARDS",
    "EVENT_CLASSES",
    "action_of",
    "card_of",
    "event_of",
    "hand_result_of",
    "match_info_of",
    "match_result_of",
    "observation_of",
]
