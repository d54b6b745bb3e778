"""Translation between the rules core's values and the `uno_arena.v1` messages.

The wire model is not the internal state: only what the receiver may see is
encoded (callers pass events already filtered with `seen_by`).

The server's hot path writes the protobuf wire format itself (`event_bytes`, `MatchEncoder`), a few
times cheaper than the generated classes; the reference encoders that build the same messages with
the generated classes live with the tests (tests/reference_encoder.py), which hold the two byte for
byte equal over whole matches, and the golden files pin the request bytes. The decoders at the end
read the wire back into the rules core's values.

Two ways back, likewise. The decoders of parsed messages (`decision_from`, `events_from` ...) are
the reference; the bot's hot path reads a serialized ServerMessage's bytes itself
(`DecisionDecoder`, `decision_from_bytes`: any valid encoding, the server's fastest), and the tests
hold the two equal over whole matches and other encodings of the same messages.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import typing
from collections.abc import Sequence
from typing import Final, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from uno_arena.rules import (
    ACTIONS,
    FACES,
    Action,
    ActionKind,
    Card,
    Colour,
    Hand,
    Match,
    MatchResult,
    Observation,
    Phase,
    Rank,
    RulesConfig,
)
from uno_arena.rules.event import (
    EVENT_CLASSES,
    DrawReason,
    Event,
    EventKind,
    HandEnd,
    HandEnded,
    MatchEnd,
    ShuffleReason,
)
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import number_of

_Member = TypeVar("_Member", bound=enum.Enum)
_Number = TypeVar("_Number", bound=int)


def _numbering(ours: type[_Member], theirs: type[_Number]) -> dict[_Member, _Number]:
    """Each member of a rules enum -> the number of the proto value of its name: `Colour.RED` ->
    `COLOUR_RED`, `Rank.ZERO` ("0") -> `RANK_0`. Built at import: a member the .proto lacks fails it."""
    return {member: number_of(theirs, str(member.value)) for member in ours}


# Rules enum -> proto enum number, from the generated bindings (the one source of the numbers)
COLOURS: Final = _numbering(Colour, pb.Colour)
RANKS: Final = _numbering(Rank, pb.Rank)
ACTION_KINDS: Final = _numbering(ActionKind, pb.ActionKind)
PHASES: Final = _numbering(Phase, pb.Phase)
HAND_ENDS: Final = _numbering(HandEnd, pb.HandEnd)
MATCH_ENDS: Final = _numbering(MatchEnd, pb.MatchEnd)
SHUFFLE_REASONS: Final = _numbering(ShuffleReason, pb.ShuffleReason)

# keyed by (class, member): str enums of different classes compare equal by value ("catch")
_NUMBERS: Final[dict[tuple[type[enum.Enum], enum.Enum], int]] = {
    (type(member), member): number
    for table in (COLOURS, RANKS, ACTION_KINDS, PHASES, HAND_ENDS, MATCH_ENDS, SHUFFLE_REASONS)
    for member, number in table.items()
}


def enum_number(value: enum.Enum) -> int:
    """Rules enum member -> proto enum number, by name: `Colour.RED` -> `COLOUR_RED`."""
    return _NUMBERS[(type(value), value)]


def colour_number(value: Colour | None) -> pb.Colour:
    """`COLOUR_UNSPECIFIED` for None (a Wild's own colour, no colour named yet)."""
    return pb.COLOUR_UNSPECIFIED if value is None else COLOURS[value]


def _card(value: Card) -> pb.Card:
    return pb.Card(colour=colour_number(value.colour), rank=RANKS[value.rank], index=value.index)


_CARD_MESSAGES: Final[tuple[pb.Card, ...]] = tuple(_card(face) for face in FACES)


def card(value: Card) -> pb.Card:
    """The (shared: copy it, do not change it) message of a card face."""
    return _CARD_MESSAGES[value.index]


def cards(values: tuple[Card, ...] | list[Card]) -> list[pb.Card]:
    return [_CARD_MESSAGES[c.index] for c in values]


def action(value: Action) -> pb.Action:
    message = pb.Action(id=value.id, kind=ACTION_KINDS[value.kind], uno=value.uno, text=str(value))
    if value.card is not None:
        message.card.CopyFrom(card(value.card))
    if value.colour is not None:
        message.colour = COLOURS[value.colour]
    if value.seat is not None:
        message.seat = value.seat
    return message


_ACTION_MESSAGES: Final[tuple[pb.Action, ...]] = tuple(action(a) for a in ACTIONS)


def action_message(value: Action) -> pb.Action:
    """The (shared, read-only) message of an action."""
    return _ACTION_MESSAGES[value.id]


_LAYOUT: Final[dict[type, tuple[str, tuple[str, ...]]]] = {}
_KIND_OF: Final[dict[type, EventKind]] = {kind: name for name, kind in EVENT_CLASSES.items()}


def _layout(kind: type) -> tuple[str, tuple[str, ...]]:
    """(oneof field of `Event`, field names) of an event class; looked up once per class."""
    layout = _LAYOUT.get(kind)
    if layout is None:
        fields = tuple(f.name for f in dataclasses.fields(kind))
        layout = _LAYOUT[kind] = (_KIND_OF[kind].value, fields)
    return layout


# --- the hot path: the wire format written directly ------------------------------------
# Serialized messages concatenate as a merge (repeated fields append), so the parts that are
# the same every time are encoded once: each card as an element of Observation.cards /
# .discards, each action as an element of legal_actions. Fields are written in field-number
# order, and proto3 defaults (0, False, "", unset) left out, as protobuf does itself.

_LENGTH_DELIMITED: Final = 2
_SMALL: Final = tuple(bytes((i,)) for i in range(128))  # the one-byte varints
_LOW_GROUP: Final = tuple(bytes((i | 0x80,)) for i in range(128))  # a varint's first byte of two or more


def _varint(value: int) -> bytes:
    """Base-128 varint; a negative (int32) value as its 64-bit two's complement, as protobuf does."""
    if 0 <= value < 128:
        return _SMALL[value]
    if 0 < value < 16384:  # a request's or an observation's length
        return _LOW_GROUP[value & 0x7F] + _SMALL[value >> 7]
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire_type: int = 0) -> bytes:
    return _varint(number << 3 | wire_type)


def _tag(message: type[Message], field: str) -> bytes:
    """The key of a length-delimited field (wire type 2)."""
    return _key(message.DESCRIPTOR.fields_by_name[field].number, _LENGTH_DELIMITED)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: its key, the payload's length, the payload."""
    return tag + _varint(len(payload)) + payload


def _number(key: bytes, value: int) -> bytes:
    """An implicit-presence varint field (uint32, int32, bool, enum): nothing when 0."""
    if not value:
        return b""
    return key + (_SMALL[value] if 0 < value < 128 else _varint(value))


def _zigzag(value: int) -> int:
    """A sint32's varint value."""
    return value << 1 if value >= 0 else (-value << 1) - 1


def _packed(key: bytes, values: Sequence[int]) -> bytes:
    """A packed repeated varint field (uint32, int32): nothing when empty."""
    if not values:
        return b""
    return _field(key, b"".join([_varint(v) for v in values]))


def _text(key: bytes, value: str) -> bytes:
    return _field(key, value.encode()) if value else b""


_CARD_BYTES: Final = tuple(m.SerializeToString() for m in _CARD_MESSAGES)


def _card_fields(key: bytes) -> tuple[bytes, ...]:
    """Each face's encoding as a Card field with this key, by face index."""
    return tuple(_field(key, encoded) for encoded in _CARD_BYTES)


def _observation_key(name: str, wire_type: int = 0) -> bytes:
    return _key(pb.Observation.DESCRIPTOR.fields_by_name[name].number, wire_type)


_CARD_IN_HAND: Final = _card_fields(_observation_key("cards", _LENGTH_DELIMITED))
_CARD_IN_DISCARDS: Final = _card_fields(_observation_key("discards", _LENGTH_DELIMITED))
_DRAWN_CARD: Final = _card_fields(_observation_key("drawn", _LENGTH_DELIMITED))
_LEGAL_ACTION: Final = tuple(
    bot_pb2.DecisionRequest(legal_actions=[m]).SerializeToString() for m in _ACTION_MESSAGES
)
# by the identity of the interned actions (the rules return them): `Action.id` hashes the action
_LEGAL_BY_IDENTITY: Final = {id(a): _LEGAL_ACTION[a.id] for a in ACTIONS}
_ID_BY_IDENTITY: Final = {id(a): a.id for a in ACTIONS}


def action_ids(actions: Sequence[Action]) -> list[int]:
    """`[a.id for a in actions]`, without hashing the interned ones."""
    ids = _ID_BY_IDENTITY
    return [i if (i := ids.get(id(a))) is not None else a.id for a in actions]


_SEAT: Final = _observation_key("seat")
_PLAYERS: Final = _observation_key("players")
_PHASE: Final = _observation_key("phase")
_TO_MOVE: Final = _observation_key("to_move")
_TURN_SEAT: Final = _observation_key("turn_seat")
_DEALER: Final = _observation_key("dealer")
_DIRECTION: Final = _observation_key("direction")
_COLOUR: Final = _observation_key("colour")
_DRAW_PILE_SIZE: Final = _observation_key("draw_pile_size")
_TURN: Final = _observation_key("turn")
_TARGET_SCORE: Final = _observation_key("target_score")
_HAND_NUMBER: Final = _observation_key("hand_number")
_PENALTY: Final = _observation_key("penalty")
_HAND_SIZES: Final = _observation_key("hand_sizes", _LENGTH_DELIMITED)
_SCORES: Final = _observation_key("scores", _LENGTH_DELIMITED)
_TURN_PHASE: Final = Phase.TURN
_DRAWN_PHASE: Final = Phase.DRAWN
_OVER: Final = Phase.OVER
# Observation.top then .colour (fields 9 and 10), by top card index * 5 + colour number
_TOP_AND_COLOUR: Final = tuple(
    _field(_observation_key("top", _LENGTH_DELIMITED), card) + _number(_COLOUR, colour)
    for card in _CARD_BYTES
    for colour in range(5)
)
_COLOUR_NUMBERS: Final[dict[Colour | None, int]] = {None: pb.COLOUR_UNSPECIFIED}
_COLOUR_NUMBERS.update((colour, number) for colour, number in COLOURS.items())
# Observation fields 1-7, by (seat, players, phase, to_move, turn_seat, dealer, direction): few values
_SEATING: Final[dict[tuple[int, int, Phase, int, int, int, int], bytes]] = {}


def _seating(seat: int, players: int, phase: Phase, to_move: int, turn_seat: int, dealer: int,
             direction: int) -> bytes:  # fmt: skip
    key = (seat, players, phase, to_move, turn_seat, dealer, direction)
    encoded = _SEATING.get(key)
    if encoded is None:
        if len(_SEATING) >= 16384:
            _SEATING.clear()
        encoded = _SEATING[key] = b"".join(
            (
                _number(_SEAT, seat),
                _number(_PLAYERS, players),
                _number(_PHASE, PHASES[phase]),
                _number(_TO_MOVE, max(to_move, 0)),
                _number(_TURN_SEAT, turn_seat),
                _number(_DEALER, dealer),
                _number(_DIRECTION, _zigzag(direction)),
            )
        )
    return encoded


def _standing(scores: Sequence[int], target_score: int, hand_number: int) -> bytes:
    """Observation fields 17-19: the same for a whole hand."""
    return (
        _packed(_SCORES, scores) + _number(_TARGET_SCORE, target_score) + _number(_HAND_NUMBER, hand_number)
    )


@functools.lru_cache(maxsize=1024)
def _shown_hand(seat: int, shown: tuple[Card, ...]) -> bytes:
    """A hand shown in a challenge, as an element of Observation.shown: it stays shown all hand."""
    encoded: bytes = pb.Observation(shown=[pb.ShownHand(seat=seat, cards=cards(shown))]).SerializeToString()
    return encoded


def _discard_elements(pile: list[Card], first: int, before: bytes = b"") -> bytes:
    """`before` (the elements encoded already), then the cards of the discard pile from `first` on,
    as elements of Observation.discards: one join."""
    laid = [before]
    for index in range(first, len(pile)):
        laid.append(_CARD_IN_DISCARDS[pile[index].index])
    return b"".join(laid)


def _length(parts: list[bytes]) -> int:
    """The length of `b"".join(parts)`, without joining (a length goes before its parts)."""
    size = 0
    for part in parts:
        size += len(part)
    return size


def _observed(hand: Hand, seat: int, standing: bytes, discards: bytes) -> list[bytes]:
    """What `seat` may see, as `observe_hand` rules it (RULINGS 29): the phase DRAWN reads TURN and
    the drawn card is left out for every seat but the drawer. As parts to join (`_request` joins
    them into the request).

    The fields but the card lists come first, then cards, discards and shown hands (a merge: the
    same message). `standing`: `_standing`'s encoding; `discards`: the pile's elements.
    """
    phase = hand.phase
    mine = hand.to_move == seat and phase is not _OVER
    drawn = hand.drawn if mine else None
    sizes = [len(held) for held in hand.cards]  # < 128: a deck has 108 cards
    parts = [
        _seating(seat, hand.players, _TURN_PHASE if phase is _DRAWN_PHASE and not mine else phase,
                 hand.to_move, hand.turn_seat, hand.dealer, hand.direction),
        _TOP_AND_COLOUR[hand.discards[-1].index * 5 + _COLOUR_NUMBERS[hand.colour]],
        _HAND_SIZES, _SMALL[len(sizes)], bytes(sizes),
        _number(_DRAW_PILE_SIZE, len(hand.draw_pile)),
        b"" if drawn is None else _DRAWN_CARD[drawn.index],
        _number(_TURN, hand.turns),
        standing,
        _number(_PENALTY, hand.penalty),
    ]  # fmt: skip
    in_hand = _CARD_IN_HAND
    for index in sorted([c.index for c in hand.cards[seat]]):
        parts.append(in_hand[index])
    parts.append(discards)
    if hand.shown:
        parts += [_shown_hand(whose, shown) for to, whose, shown in hand.shown if to == seat]
    return parts


_OBSERVATION_TAG: Final = _tag(bot_pb2.DecisionRequest, "observation")
_EVENT_TAG: Final = _tag(bot_pb2.DecisionRequest, "events")
_DECISION_REQUEST_TAG: Final = _tag(bot_pb2.ServerMessage, "decision_request")
_REQUEST_MATCH_ID: Final = _tag(bot_pb2.DecisionRequest, "match_id")
_REQUEST_ID: Final = _tag(bot_pb2.DecisionRequest, "request_id")
_DEADLINE_MS: Final = _key(bot_pb2.DecisionRequest.DESCRIPTOR.fields_by_name["deadline_ms"].number)
_LOG_EVENT_TAG: Final = _tag(control_pb2.EventLogChunk, "events")
_PROGRESS_LOG_TAG: Final = _tag(control_pb2.MatchProgress, "log")
_EVENTS_TAG: Final = _tag(bot_pb2.ServerMessage, "events")
_EVENTS_MATCH_ID: Final = _tag(bot_pb2.Events, "match_id")
_EVENTS_EVENT_TAG: Final = _tag(bot_pb2.Events, "events")
_SPECTATED_MATCH_ID: Final = _tag(control_pb2.SpectatorEvent, "match_id")
_SPECTATED_EVENT_TAG: Final = _tag(control_pb2.SpectatorEvent, "events")


def _request(head: list[bytes], observed: list[bytes], legal: list[Action], events: list[bytes]) -> bytes:
    """A ServerMessage with a DecisionRequest: `head`, the parts of its match_id, request_id and
    deadline_ms; `observed`, its observation's parts; `events`, elements of DecisionRequest.events.
    Joined once: the lengths are summed first, so no part is copied twice."""
    parts = [_DECISION_REQUEST_TAG, b"", *head, _OBSERVATION_TAG, _varint(_length(observed)), *observed]
    by_identity = _LEGAL_BY_IDENTITY
    for action in legal:
        encoded = by_identity.get(id(action))
        parts.append(encoded if encoded is not None else _LEGAL_ACTION[action.id])
    parts += events
    parts[1] = _varint(_length(parts) - len(_DECISION_REQUEST_TAG))
    return b"".join(parts)


def event_element(value: Event) -> bytes:
    """An event (already filtered for its receiver) as an element of DecisionRequest.events."""
    return _field(_EVENT_TAG, event_bytes(value))


def event_log_chunk(events: list[Event]) -> control_pb2.EventLogChunk:
    """Part of a match's log (a match's end re-sends all its events)."""
    return log_chunk([event_bytes(e) for e in events])


def log_chunk(encoded: Sequence[bytes]) -> control_pb2.EventLogChunk:
    """An EventLogChunk of `event_bytes` encodings."""
    return control_pb2.EventLogChunk.FromString(b"".join([_field(_LOG_EVENT_TAG, e) for e in encoded]))


def log_progress(encoded: Sequence[bytes]) -> bytes:
    """A serialized MatchProgress with a `log` chunk of `event_bytes` encodings: a match's end sends
    its whole log so, written directly (as a message it was parsed here only to be serialized again)."""
    chunk = b"".join([_field(_LOG_EVENT_TAG, e) for e in encoded])
    return b"".join([_PROGRESS_LOG_TAG, _varint(len(chunk)), chunk])


def events_message(match_id: str, encoded: Sequence[bytes]) -> bytes:
    """A serialized ServerMessage with an Events message of `event_bytes` encodings."""
    events = b"".join([_field(_EVENTS_EVENT_TAG, e) for e in encoded])
    return _field(_EVENTS_TAG, _text(_EVENTS_MATCH_ID, match_id) + events)


def spectator_event(match_id: str, encoded: Sequence[bytes]) -> bytes:
    """A serialized SpectatorEvent of `event_bytes` encodings (public ones: the caller's care), built
    once and written as it is to every Spectate stream of the match."""
    events = b"".join([_field(_SPECTATED_EVENT_TAG, e) for e in encoded])
    return _text(_SPECTATED_MATCH_ID, match_id) + events


# How each kind of event field is written, from the .proto's field types
_VARINT: Final = 0
_SIGNED: Final = 1
_OPTIONAL: Final = 2
_ENUM: Final = 3
_STRING: Final = 4
_CARD: Final = 5
_CARDS: Final = 6
_PACKED: Final = 7


class _EventField:
    """How one field of an event class is written: its attribute, kind and key(s)."""

    __slots__ = ("attribute", "faces", "hidden", "key", "kind")

    def __init__(
        self, attribute: str, kind: int, key: bytes, faces: tuple[bytes, ...], hidden: bytes
    ) -> None:
        self.attribute = attribute
        self.kind = kind
        self.key = key
        self.faces = faces  # _CARD, _CARDS: each face as this field
        self.hidden = hidden  # _CARDS: `hidden: true`, written instead of cards not shown


class _EventPlan:
    """How an event class is written: the key of its `Event.kind` field and its fields in
    field-number order. For a class with private cards, `cards` names them and `owner` the one
    seat that sees them (`to` if there is one, else `seat`); both "" otherwise."""

    __slots__ = ("cards", "fields", "key", "owner")

    def __init__(self, key: bytes, fields: tuple[_EventField, ...], cards: str, owner: str) -> None:
        self.key = key
        self.fields = fields
        self.cards = cards
        self.owner = owner


def _event_field(oneof: str, attribute: str) -> _EventField:
    """How an event's `attribute` is written: as the field of that name in `Event.<oneof>`."""
    message = pb.Event.DESCRIPTOR.fields_by_name[oneof].message_type
    assert message is not None  # every Event.kind field is a message
    field = message.fields_by_name[attribute]
    length_key = _key(field.number, _LENGTH_DELIMITED)
    if field.message_type is pb.Card.DESCRIPTOR:
        if not field.is_repeated:
            return _EventField(attribute, _CARD, length_key, _card_fields(length_key), b"")
        hidden = _key(message.fields_by_name["hidden"].number) + _varint(1)
        return _EventField(attribute, _CARDS, length_key, _card_fields(length_key), hidden)
    if field.is_repeated:
        return _EventField(attribute, _PACKED, length_key, (), b"")
    kind = {
        FieldDescriptor.TYPE_SINT32: _SIGNED,
        FieldDescriptor.TYPE_ENUM: _ENUM,
        FieldDescriptor.TYPE_STRING: _STRING,
    }.get(field.type, _OPTIONAL if field.has_presence else _VARINT)
    return _EventField(attribute, kind, length_key if kind == _STRING else _key(field.number), (), b"")


def _event_plans() -> dict[type, _EventPlan]:
    plans: dict[type, _EventPlan] = {}
    for kind in typing.get_args(Event):
        oneof, names = _layout(kind)
        outer = pb.Event.DESCRIPTOR.fields_by_name[oneof]
        message = outer.message_type
        assert message is not None  # every Event.kind field is a message
        ordered = sorted(names, key=lambda name: int(message.fields_by_name[name].number))
        fields = tuple(_event_field(oneof, name) for name in ordered)
        cards = next((f.attribute for f in fields if f.kind == _CARDS), "")
        owner = ("to" if "to" in names else "seat") if cards else ""
        plans[kind] = _EventPlan(_key(outer.number, _LENGTH_DELIMITED), fields, cards, owner)
    return plans


def event_bytes(value: Event) -> bytes:
    """`event(value).SerializeToString()`, written directly (`value` filtered for its receiver)."""
    return _event_bytes(_EVENT_PLANS[type(value)], value, False)


def _event_bytes(plan: _EventPlan, value: Event, hide: bool) -> bytes:
    """`event_bytes(value)`, with private cards hidden if `hide`, as `seen_by` hides them."""
    parts = _event_fields(plan, value, hide)
    return b"".join([plan.key, _varint(_length(parts)), *parts])


def _event_element(plan: _EventPlan, value: Event, hide: bool) -> bytes:
    """`_event_bytes` as an element of DecisionRequest.events, in one join."""
    parts = _event_fields(plan, value, hide)
    size = _length(parts)
    length = _varint(size)
    return b"".join([_EVENT_TAG, _varint(len(plan.key) + len(length) + size), plan.key, length, *parts])


def _event_fields(plan: _EventPlan, value: Event, hide: bool) -> list[bytes]:
    """The encoded fields of an event, in field-number order."""
    parts: list[bytes] = []
    for field in plan.fields:
        item = getattr(value, field.attribute)
        kind = field.kind
        if kind == _VARINT:
            if item:  # an int or a bool
                parts.append(field.key + _varint(typing.cast(int, item)))
        elif kind == _CARDS:
            if item is None or hide:  # another seat's cards: only that they are hidden
                parts.append(field.hidden)
            else:
                faces = field.faces
                for held in typing.cast(tuple[Card, ...], item):
                    parts.append(faces[held.index])
        elif item is None:
            pass
        elif kind == _CARD:
            parts.append(field.faces[item.index])
        elif kind == _ENUM:
            parts.append(_number(field.key, _NUMBERS[(type(item), item)]))
        elif kind == _SIGNED:
            parts.append(_number(field.key, _zigzag(item)))
        elif kind == _OPTIONAL:
            parts.append(field.key + _varint(item))
        elif kind == _STRING:
            parts.append(_text(field.key, item))
        else:
            parts.append(_packed(field.key, item))
    return parts


_EVENT_PLANS: Final = _event_plans()


def _payload(element: bytes) -> bytes:
    """The `event_bytes` inside an element of DecisionRequest.events (a one-byte key, a length)."""
    return element[2:] if element[1] < 0x80 else element[3:]  # events are under 16 KiB


class MatchEncoder:
    """A running match's encodings, kept up as it is played: the server's decision path.

    Each logged event is encoded once per view when the encoder catches up with the log: as it
    happened (the complete log's view, and its owner's) and, when it carries private cards, once
    with them hidden (every other seat's view and the spectators', RULINGS 29). Both are kept as
    elements of DecisionRequest.events, the hot use. The discard pile's encoding grows with the
    pile (a reshuffle or a new hand, which replace the list, rebuild it), and the fields that
    stand for a whole hand are encoded once per hand. A request then joins ready parts.
    """

    __slots__ = ("_full", "_head", "_hidden", "_owner", "_pile", "_pile_bytes", "_pile_count",
                 "_pile_last", "_standing", "_standing_of", "match")  # fmt: skip

    def __init__(self, match: Match, match_id: str, deadline_ms: int) -> None:
        self.match = match
        self._head = (_text(_REQUEST_MATCH_ID, match_id), _number(_DEADLINE_MS, deadline_ms))
        self._full: list[bytes] = []  # each logged event as an element of DecisionRequest.events
        self._hidden: list[bytes] = []  # ... with private cards hidden (the same object if none)
        self._owner: list[int] = []  # the seat that sees the cards of a private event, else -1
        self._pile: list[Card] = []  # the discard pile (the hand's list) last encoded
        self._pile_count = 0
        self._pile_last: Card | None = None
        self._pile_bytes = b""
        self._standing_of: tuple[list[int], int] | None = None  # (totals, hand number) encoded
        self._standing = b""

    def catch_up(self) -> int:
        """Encode the events logged since the last call; how many are logged now."""
        events = self.match.events
        full, hidden, owner = self._full, self._hidden, self._owner
        for event in events[len(full) :]:
            plan = _EVENT_PLANS[type(event)]
            whole = _event_element(plan, event, False)
            full.append(whole)
            if plan.cards and getattr(event, plan.cards) is not None:
                hidden.append(_event_element(plan, event, True))
                owner.append(getattr(event, plan.owner))
            else:
                hidden.append(whole)
                owner.append(-1)
        return len(events)

    def seen_by(self, seat: int, first: int, stop: int) -> list[bytes]:
        """`event_bytes(seen_by(e, seat))` of the events `first` to `stop` (-1: a spectator's view)."""
        full, hidden, owner = self._full, self._hidden, self._owner
        return [_payload(full[i] if owner[i] == seat else hidden[i]) for i in range(first, stop)]

    def log(self, first: int, stop: int) -> list[bytes]:
        """`event_bytes` of the events `first` to `stop`, unfiltered (the complete log)."""
        return [_payload(e) for e in self._full[first:stop]]

    def _discards(self, pile: list[Card]) -> bytes:
        """The discard pile as Observation.discards elements, grown by the cards laid since."""
        count = self._pile_count
        if pile is not self._pile or len(pile) < count or (count and pile[count - 1] is not self._pile_last):
            self._pile, self._pile_bytes, count = pile, b"", 0
        if len(pile) > count:
            self._pile_bytes = _discard_elements(pile, count, self._pile_bytes)
            self._pile_count, self._pile_last = len(pile), pile[-1]
        return self._pile_bytes

    def request(self, seat: int, legal: list[Action], request_id: str, first: int) -> tuple[bytes, int]:
        """(the serialized ServerMessage asking `seat` to decide, with the events from `first` on;
        the number of events logged, which `seat` has now been sent)."""
        stop = self.catch_up()
        match = self.match
        hand = match.hand
        if (
            self._standing_of is None
            or self._standing_of[0] is not match.totals
            or (self._standing_of[1] != match.hand_number)
        ):
            self._standing_of = (match.totals, match.hand_number)
            self._standing = _standing(match.totals, hand.config.target_score, match.hand_number)
        observed = _observed(hand, seat, self._standing, self._discards(hand.discards))
        full, hidden, owner = self._full, self._hidden, self._owner
        events = [full[i] if owner[i] == seat else hidden[i] for i in range(first, stop)]
        match_id, deadline = self._head
        head = [match_id, _text(_REQUEST_ID, request_id), deadline]
        return _request(head, observed, legal, events), stop


def event(value: Event) -> pb.Event:
    """Encode one event (already filtered for its receiver) field by field, by name."""
    oneof, fields = _layout(type(value))
    message = pb.Event()
    inner = getattr(message, oneof)
    inner.SetInParent()
    for name in fields:
        _set(inner, name, getattr(value, name))
    return message


def _set(message: Message, name: str, value: object) -> None:
    if value is None:
        if name != "cards":
            return
        name, value = "hidden", True  # another seat's cards: only that they are hidden
    if isinstance(value, Card):
        getattr(message, name).CopyFrom(card(value))
    elif isinstance(value, DrawReason):  # a string on the wire (game.proto lists the values)
        setattr(message, name, value.value)
    elif isinstance(value, enum.Enum):
        setattr(message, name, enum_number(value))
    elif isinstance(value, tuple):
        getattr(message, name).extend(card(v) if isinstance(v, Card) else v for v in value)
    else:
        setattr(message, name, value)


def hand_ended(value: HandEnded) -> pb.HandEnded:
    return event(value).hand_ended


def rules(config: RulesConfig) -> pb.RulesConfig:
    known = pb.RulesConfig.DESCRIPTOR.fields_by_name
    values = {k: v for k, v in config.to_dict().items() if k in known}
    return pb.RulesConfig(**values)


def rules_from(message: pb.RulesConfig, players: int) -> RulesConfig:
    """Decode; unset fields keep their defaults. Raises `ConfigError` naming the field."""
    values: dict[str, object] = {}
    for descriptor, value in message.ListFields():
        values[descriptor.name] = value
    values["players"] = players
    return RulesConfig.from_dict(values)


def match_result(
    match_id: str,
    reason: pb.MatchEnd,
    winners: tuple[int, ...],
    totals: tuple[int, ...] | list[int],
    hands: list[HandEnded] | tuple[HandEnded, ...],
    bots: list[str],
    forfeited: list[int],
    faults: list[int],
) -> pb.MatchResult:
    """`reason` is a proto `MatchEnd` number (the server adds FORFEIT and ABORTED)."""
    return pb.MatchResult(
        match_id=match_id,
        reason=reason,
        winners=list(winners),
        totals=list(totals),
        hands=[hand_ended(h) for h in hands],
        forfeited=forfeited,
        faults=faults,
        bots=bots,
    )


# --- decoding: the wire to the rules core's values ---------------------------------------
# What a bot receives becomes the same values the rules core builds: `Card`s and `Action`s are the
# interned ones (by index and id, stable in protocol v1), observations are `Observation`s and events
# the rules' event classes, as `seen_by` gives them (another seat's cards None).


class ProtocolMismatch(ValueError):
    """A message this codec cannot decode: a card, action or enum value unknown to it, an event of an
    unknown kind. A peer on a newer protocol version, or a broken one."""


def _reverse(table: typing.Mapping[_Member, int]) -> dict[int, _Member]:
    return {int(number): member for member, number in table.items()}


_COLOUR_OF: Final[dict[int, Colour]] = _reverse(COLOURS)
_PHASE_OF: Final[dict[int, Phase]] = _reverse(PHASES)
_HAND_END_OF: Final[dict[int, HandEnd]] = _reverse(HAND_ENDS)
_MATCH_END_OF: Final[dict[int, MatchEnd]] = _reverse(MATCH_ENDS)
_RANK_OF: Final[dict[int, Rank]] = _reverse(RANKS)
_ACTION_KIND_OF: Final[dict[int, ActionKind]] = _reverse(ACTION_KINDS)
_SHUFFLE_REASON_OF: Final[dict[int, ShuffleReason]] = _reverse(SHUFFLE_REASONS)
_DRAW_REASON_OF: Final[dict[str, DrawReason]] = {reason.value: reason for reason in DrawReason}
_ENUM_OF: Final[dict[str, dict[int, enum.Enum]]] = {
    pb.Colour.DESCRIPTOR.full_name: {**_COLOUR_OF},
    pb.Rank.DESCRIPTOR.full_name: {**_RANK_OF},
    pb.ActionKind.DESCRIPTOR.full_name: {**_ACTION_KIND_OF},
    pb.Phase.DESCRIPTOR.full_name: {**_PHASE_OF},
    pb.HandEnd.DESCRIPTOR.full_name: {**_HAND_END_OF},
    pb.MatchEnd.DESCRIPTOR.full_name: {**_MATCH_END_OF},
    pb.ShuffleReason.DESCRIPTOR.full_name: {**_SHUFFLE_REASON_OF},
}


def _known(table: dict[int, _Member], number: int, what: str) -> _Member:
    member = table.get(number)
    if member is None:
        raise ProtocolMismatch(f"{what} {number} is unknown to this codec")
    return member


def colour_from(number: int) -> Colour | None:
    """A protocol `Colour` number: None for COLOUR_UNSPECIFIED (no colour named)."""
    return None if number == pb.COLOUR_UNSPECIFIED else _known(_COLOUR_OF, number, "Colour")


def card_from(message: pb.Card) -> Card:
    """The face a protocol `Card` stands for, by its index (0..53)."""
    index = message.index
    if not 0 <= index < len(FACES):
        raise ProtocolMismatch(f"card index {index} is not one of the {len(FACES)} faces")
    return FACES[index]


def cards_from(messages: Sequence[pb.Card]) -> tuple[Card, ...]:
    """Many cards (a hand, a discard pile of a hundred): one index lookup each."""
    faces = FACES
    try:
        return tuple([faces[message.index] for message in messages])
    except IndexError:
        raise ProtocolMismatch(f"a card index is not one of the {len(FACES)} faces") from None


def action_from(message: pb.Action) -> Action:
    """The action a protocol `Action` stands for, by its id (stable in protocol v1)."""
    number = message.id
    if not 0 <= number < len(ACTIONS):
        raise ProtocolMismatch(f"action id {number} is not in the action space (0..{len(ACTIONS) - 1})")
    return ACTIONS[number]


def observation_from(
    message: pb.Observation, legal: Sequence[pb.Action] = (), match_id: str = ""
) -> Observation:
    """The `Observation` a protocol `Observation` (with the request's legal actions) stands for."""
    faces = FACES
    actions = ACTIONS
    try:
        legal_actions = tuple([actions[a.id] for a in legal])
        hand = tuple([faces[c.index] for c in message.cards])
        discards = tuple([faces[c.index] for c in message.discards])
        top = faces[message.top.index]
        drawn = faces[message.drawn.index] if message.HasField("drawn") else None
    except IndexError:
        raise ProtocolMismatch("a card index or action id out of range") from None
    shown = tuple([(s.seat, cards_from(s.cards)) for s in message.shown]) if message.shown else ()
    return Observation(
        message.seat,
        message.players,
        _known(_PHASE_OF, message.phase, "Phase"),
        message.to_move,
        message.turn_seat,
        message.dealer,
        message.direction,
        hand,
        top,
        colour_from(message.colour),
        discards,
        tuple(message.hand_sizes),
        message.draw_pile_size,
        drawn,
        message.penalty,
        shown,
        message.turn,
        tuple(message.scores),
        message.target_score,
        message.hand_number,
        legal_actions,
        match_id,
    )


def decision_from(request: bot_pb2.DecisionRequest) -> Observation:
    """What a `DecisionRequest` asks: the seat's `Observation`, its legal actions and match id in it."""
    return observation_from(request.observation, request.legal_actions, request.match_id)


class _EventDecoder:
    """How one event class is read back: its class, its oneof field, and each field's reading in
    the class's own order (its constructor's)."""

    __slots__ = ("fields", "kind", "oneof", "required")

    def __init__(
        self, kind: type, oneof: str, fields: tuple[tuple[str, int, str], ...], required: tuple[int, ...]
    ) -> None:
        self.kind = kind
        self.oneof = oneof
        self.fields = fields  # (name, how: _VARINT ..., the enum's full name for _ENUM)
        self.required = required  # the fields that may read None (a card, a colour unset) but not be None


def _nullable(annotation: object) -> bool:
    """Whether an event field's annotation allows None: its text, where annotations are strings (the
    interpreted build); compiled, mypyc leaves a class for a plain type and `type` for a union (in
    the events, always one with None)."""
    return "None" in annotation if isinstance(annotation, str) else annotation is type


def _event_decoders() -> dict[str, _EventDecoder]:
    decoders: dict[str, _EventDecoder] = {}
    for kind in typing.get_args(Event):
        oneof, names = _layout(kind)
        message = pb.Event.DESCRIPTOR.fields_by_name[oneof].message_type
        assert message is not None  # every Event.kind field is a message
        fields: list[tuple[str, int, str]] = []
        nullable = {f.name: _nullable(f.type) for f in dataclasses.fields(kind)}
        required: list[int] = []
        for name in names:
            field = message.fields_by_name[name]
            how = _event_field(oneof, name).kind
            enum_name = field.enum_type.full_name if field.enum_type is not None else ""
            if how == _ENUM and enum_name not in _ENUM_OF:
                raise ProtocolMismatch(f"{oneof}.{name}: no rules enum stands for {enum_name}")
            if how in (_CARD, _ENUM, _OPTIONAL) and not nullable[name]:
                required.append(len(fields))
            fields.append((name, how, enum_name))
        decoders[oneof] = _EventDecoder(kind, oneof, tuple(fields), tuple(required))
    covered = {f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields}
    if covered != set(decoders):
        raise ProtocolMismatch(f"Event.kind and the rules' events differ: {sorted(covered ^ set(decoders))}")
    return decoders


_EVENT_DECODERS: Final = _event_decoders()


def event_from(message: pb.Event) -> Event:
    """The rules event a protocol `Event` stands for, as its receiver was allowed to see it (another
    seat's cards None, as `seen_by` leaves them)."""
    oneof = message.WhichOneof("kind")
    decoder = _EVENT_DECODERS.get(oneof) if oneof is not None else None
    if decoder is None:
        raise ProtocolMismatch("an event of a kind unknown to this codec")
    inner: Message = getattr(message, oneof)
    values: list[object] = []
    for name, how, enum_name in decoder.fields:  # one branch a field: this runs for every event a bot gets
        if how in (_VARINT, _SIGNED):
            values.append(getattr(inner, name))
        elif how == _CARD:
            values.append(card_from(getattr(inner, name)) if inner.HasField(name) else None)
        elif how == _CARDS:
            values.append(None if getattr(inner, "hidden") else cards_from(getattr(inner, name)))  # noqa: B009
        elif how == _ENUM:
            values.append(_enum_from(enum_name, getattr(inner, name)))
        elif how == _OPTIONAL:
            values.append(getattr(inner, name) if inner.HasField(name) else None)
        elif how == _PACKED:
            values.append(tuple(getattr(inner, name)))
        else:  # _STRING: Drew.reason
            values.append(_draw_reason_from(getattr(inner, name)))
    for index in decoder.required:
        if values[index] is None:
            raise ProtocolMismatch(f"{oneof}.{decoder.fields[index][0]} is missing: it is always sent")
    event: Event = decoder.kind(*values)
    return event


def _enum_from(enum_name: str, number: int) -> enum.Enum | None:
    if enum_name == _COLOUR_ENUM:
        return colour_from(number)
    return _known(_ENUM_OF[enum_name], number, enum_name.rpartition(".")[2])


def _draw_reason_from(text: str) -> DrawReason:
    reason = _DRAW_REASON_OF.get(text)
    if reason is None:
        raise ProtocolMismatch(f"draw reason {text!r} is unknown to this codec")
    return reason


_COLOUR_ENUM: Final = pb.Colour.DESCRIPTOR.full_name


def events_from(messages: Sequence[pb.Event]) -> list[Event]:
    return [event_from(m) for m in messages]


def hand_ended_from(message: pb.HandEnded) -> HandEnded:
    winner = int(message.winner) if message.HasField("winner") else None
    return HandEnded(_known(_HAND_END_OF, message.reason, "HandEnd"), winner, tuple(message.points))


def match_result_from(message: pb.MatchResult) -> MatchResult:
    """A finished match as the server reports it (`actions` are not sent to bots: empty)."""
    return MatchResult(
        hands=tuple(hand_ended_from(h) for h in message.hands),
        totals=tuple(message.totals),
        winners=tuple(message.winners),
        reason=_known(_MATCH_END_OF, message.reason, "MatchEnd"),
        actions=(),
        match_id=message.match_id,
        bots=tuple(message.bots),
        forfeited=tuple(message.forfeited),
        faults=tuple(message.faults),
    )


# --- decoding the wire directly: the bot's hot path ---------------------------------------
# The SDK reads each ServerMessage's bytes itself, mirroring the encoder above: a general reader of
# the protobuf wire format (fields in any order, unknown fields skipped, repeated scalars packed or
# not, a message sent in several parts merged, as protobuf merges them), with fast paths for what the
# server writes: each card and action element's payload is looked up whole among the canonical
# encodings, each event's payload in a bounded cache of events decoded before, and a match's discard
# pile, which grows between two requests, is decoded only past the run of elements seen last time.
# Fields this codec does not read (a card's colour and rank, an action's text) are skipped unchecked.

_WIRE_VARINT: Final = 0
_WIRE_FIXED64: Final = 1
_WIRE_START_GROUP: Final = 3
_WIRE_END_GROUP: Final = 4
_WIRE_FIXED32: Final = 5
_MASK32: Final = 0xFFFFFFFF
_MASK64: Final = 0xFFFFFFFFFFFFFFFF
_GROUP_DEPTH: Final = 64  # nested groups skipped at most (protobuf's own limit is 100 nested messages)


def _number_in(message: type[Message], name: str) -> int:
    return int(message.DESCRIPTOR.fields_by_name[name].number)


def _length_key(message: type[Message], name: str) -> int:
    """The key of a length-delimited field as an int, the way the decoder reads keys."""
    return _number_in(message, name) << 3 | _LENGTH_DELIMITED


# ServerMessage
_SERVER_KINDS: Final = frozenset(
    f.number for f in bot_pb2.ServerMessage.DESCRIPTOR.oneofs_by_name["kind"].fields
)
_SERVER_DECISION: Final = _number_in(bot_pb2.ServerMessage, "decision_request")
# DecisionRequest
_D_MATCH_ID: Final = _length_key(bot_pb2.DecisionRequest, "match_id")
_D_REQUEST_ID: Final = _length_key(bot_pb2.DecisionRequest, "request_id")
_D_OBSERVATION: Final = _length_key(bot_pb2.DecisionRequest, "observation")
_D_LEGAL: Final = _length_key(bot_pb2.DecisionRequest, "legal_actions")
_D_DEADLINE: Final = _number_in(bot_pb2.DecisionRequest, "deadline_ms") << 3
_D_EVENT: Final = _length_key(bot_pb2.DecisionRequest, "events")
# Observation: its fields by number
_O_SEAT: Final = _number_in(pb.Observation, "seat")
_O_PLAYERS: Final = _number_in(pb.Observation, "players")
_O_PHASE: Final = _number_in(pb.Observation, "phase")
_O_TO_MOVE: Final = _number_in(pb.Observation, "to_move")
_O_TURN_SEAT: Final = _number_in(pb.Observation, "turn_seat")
_O_DEALER: Final = _number_in(pb.Observation, "dealer")
_O_DIRECTION: Final = _number_in(pb.Observation, "direction")
_O_CARDS: Final = _number_in(pb.Observation, "cards")
_O_TOP: Final = _number_in(pb.Observation, "top")
_O_COLOUR: Final = _number_in(pb.Observation, "colour")
_O_DISCARDS: Final = _number_in(pb.Observation, "discards")
_O_HAND_SIZES: Final = _number_in(pb.Observation, "hand_sizes")
_O_DRAW_PILE_SIZE: Final = _number_in(pb.Observation, "draw_pile_size")
_O_DRAWN: Final = _number_in(pb.Observation, "drawn")
_O_SHOWN: Final = _number_in(pb.Observation, "shown")
_O_TURN: Final = _number_in(pb.Observation, "turn")
_O_SCORES: Final = _number_in(pb.Observation, "scores")
_O_TARGET_SCORE: Final = _number_in(pb.Observation, "target_score")
_O_HAND_NUMBER: Final = _number_in(pb.Observation, "hand_number")
_O_PENALTY: Final = _number_in(pb.Observation, "penalty")
_O_CARD_KEY: Final = _length_key(pb.Observation, "cards")
_O_DISCARD_KEY: Final = _length_key(pb.Observation, "discards")
_O_FIELDS: Final = max(f.number for f in pb.Observation.DESCRIPTOR.fields) + 1
_VARINT_TYPES: Final = (
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_ENUM,
)


def _singular_varint(message: type[Message], number: int) -> bool:
    field = message.DESCRIPTOR.fields_by_number.get(number)
    return field is not None and field.type in _VARINT_TYPES and not field.is_repeated


# Which Observation field numbers are singular varints (kept in a list by number as read)
_O_SCALAR: Final = tuple(_singular_varint(pb.Observation, number) for number in range(_O_FIELDS))
# ShownHand, Card, Action
_S_SEAT: Final = _number_in(pb.ShownHand, "seat") << 3
_S_CARD_KEY: Final = _length_key(pb.ShownHand, "cards")
_C_INDEX: Final = _number_in(pb.Card, "index") << 3
_A_ID: Final = _number_in(pb.Action, "id") << 3

# the canonical encodings: a Card's payload -> its face, an Action's payload -> the interned action
_FACE_OF: Final[dict[bytes, Card]] = {encoded: FACES[i] for i, encoded in enumerate(_CARD_BYTES)}
_ACTION_OF: Final[dict[bytes, Action]] = {m.SerializeToString(): ACTIONS[m.id] for m in _ACTION_MESSAGES}
# an Event's payload -> the event it decodes to (events are values): bounded, cleared when full
_EVENT_OF: Final[dict[bytes, Event]] = {}
# a ShownHand's payload -> (seat, cards), the same way
_SHOWN_OF: Final[dict[bytes, tuple[int, tuple[Card, ...]]]] = {}
# a packed repeated field's payload -> its values
_UINT32S_OF: Final[dict[bytes, tuple[int, ...]]] = {}
_INT32S_OF: Final[dict[bytes, tuple[int, ...]]] = {}
_CACHE_SIZE: Final = 16384


class DecodedRequest(typing.NamedTuple):
    """A DecisionRequest as a bot needs it: the `Observation` (with its `legal_actions` and
    `match_id`) and the events it carries, as `decision_from` and `events_from` give them."""

    match_id: str
    request_id: str
    deadline_ms: int
    observation: Observation
    events: tuple[Event, ...]


def _truncated(what: str) -> ProtocolMismatch:
    return ProtocolMismatch(f"a truncated or malformed message: {what}")


def _varint_at(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos`, of any length up to 10 bytes: its value (64 bits, as protobuf keeps it)
    and the position after it. Past the end of `data`, IndexError (the caller's to translate)."""
    value = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & _MASK64, pos
        shift += 7
        if shift >= 70:
            raise _truncated(f"a varint longer than 10 bytes at byte {pos - 10}")


def _int32(value: int) -> int:
    """An int32 field's varint (sign-extended to 64 bits when negative) as the int32."""
    value &= _MASK32
    return value - 0x100000000 if value >= 0x80000000 else value


def _sint32(value: int) -> int:
    """A sint32 field's varint (zigzag) as the int32."""
    value &= _MASK32
    return (value >> 1) ^ -(value & 1)


def _overrun(key: int, pos: int, size: int) -> ProtocolMismatch:
    return _truncated(f"field {key >> 3} of {size} bytes at byte {pos} runs past the end of its message")


def _length_at(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """A length-delimited field's length at `pos`: (where its payload starts, where it stops)."""
    size = data[pos]
    pos += 1
    if size >= 0x80:
        size, pos = _varint_at(data, pos - 1)
    stop = pos + size
    if stop > end:
        raise _truncated(f"a field of {size} bytes at byte {pos} runs past the end of its message")
    return pos, stop


def _key_at(data: bytes, pos: int) -> tuple[int, int]:
    key = data[pos]
    if key < 0x80:
        return key, pos + 1
    key, pos = _varint_at(data, pos)
    if key > _MASK32:
        raise _truncated(f"a field key of {key} before byte {pos}")
    return key, pos


def _skip(data: bytes, pos: int, end: int, key: int, depth: int = 0) -> int:
    """Past the value of a field this codec does not read (`key` read, `pos` after it)."""
    if key >> 3 == 0:
        raise _truncated(f"field number 0 before byte {pos}")
    wire = key & 7
    if wire == _WIRE_VARINT:
        pos = _varint_at(data, pos)[1]
    elif wire == _LENGTH_DELIMITED:
        pos = _length_at(data, pos, end)[1]
    elif wire == _WIRE_FIXED64:
        pos += 8
    elif wire == _WIRE_FIXED32:
        pos += 4
    elif wire == _WIRE_START_GROUP and depth < _GROUP_DEPTH:
        while True:
            if pos >= end:
                raise _truncated(f"a group of field {key >> 3} that does not end")
            inner, pos = _key_at(data, pos)
            if inner & 7 == _WIRE_END_GROUP:
                if inner >> 3 != key >> 3:
                    raise _truncated(f"a group of field {key >> 3} ended as field {inner >> 3}")
                break
            pos = _skip(data, pos, end, inner, depth + 1)
    else:
        raise _truncated(f"wire type {wire} of field {key >> 3} before byte {pos}")
    if pos > end:
        raise _truncated(f"field {key >> 3} runs past the end of its message")
    return pos


def _uint32_in(data: bytes, start: int, stop: int, wanted: int, value: int, whose: str) -> int:
    """The last uint32 field with key `wanted` in a message's payload (`start` to `stop`), other fields
    skipped; `value` if it has none. `whose` names the message in the error of a field that overruns."""
    pos = start
    while pos < stop:
        key, pos = _key_at(data, pos)
        if key == wanted:
            read, pos = _varint_at(data, pos)
            value = read & _MASK32
        else:
            pos = _skip(data, pos, stop, key)
    if pos != stop:
        raise _truncated(f"{whose} last field runs past byte {stop}")
    return value


def _face_at(data: bytes, start: int, stop: int, index: int) -> Card:
    """The face a Card message's payload (`start` to `stop`) names; `index`: the index merged into
    (a singular card sent in parts), 0 for a new one."""
    card = _FACE_OF.get(data[start:stop]) if index == 0 else None
    if card is not None:
        return card
    index = _uint32_in(data, start, stop, _C_INDEX, index, "a card's")
    if index >= len(FACES):
        raise ProtocolMismatch(f"card index {index} is not one of the {len(FACES)} faces")
    return FACES[index]


def _action_at(data: bytes, start: int, stop: int) -> Action:
    """The action an Action message's payload names, by its id."""
    number = _uint32_in(data, start, stop, _A_ID, 0, "an action's")
    if number >= len(ACTIONS):
        raise ProtocolMismatch(f"action id {number} is not in the action space (0..{len(ACTIONS) - 1})")
    return ACTIONS[number]


def _new_event(payload: bytes) -> Event:
    """The event an Event message's payload decodes to, parsed by protobuf (it was not in the cache)."""
    try:
        message = pb.Event.FromString(payload)
    except DecodeError as error:
        raise ProtocolMismatch(f"an event that does not parse: {error}") from None
    event = event_from(message)
    if len(_EVENT_OF) >= _CACHE_SIZE:
        _EVENT_OF.clear()
    _EVENT_OF[payload] = event
    return event


def _packed_at(data: bytes, start: int, stop: int, signed: bool) -> tuple[int, ...]:
    """A packed repeated uint32 (int32 if `signed`) field's values: from a cache (the scores stay the
    same all hand, the hand sizes take few values), or read."""
    payload = data[start:stop]
    cache = _INT32S_OF if signed else _UINT32S_OF
    known = cache.get(payload)
    if known is not None:
        return known
    values: list[int] = []
    pos = start
    while pos < stop:
        value, pos = _varint_at(data, pos)
        values.append(_int32(value) if signed else value & _MASK32)
    if pos != stop:
        raise _truncated(f"a packed field's last value runs past byte {stop}")
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    read = cache[payload] = tuple(values)
    return read


def _new_shown(payload: bytes) -> tuple[int, tuple[Card, ...]]:
    """A ShownHand's payload: (seat, cards); it stays shown all hand, so it is kept in a cache."""
    seat = 0
    shown: list[Card] = []
    pos = 0
    end = len(payload)
    while pos < end:
        key, pos = _key_at(payload, pos)
        if key == _S_CARD_KEY:
            begin, stop = _length_at(payload, pos, end)
            shown.append(_face_at(payload, begin, stop, 0))
            pos = stop
        elif key == _S_SEAT:
            value, pos = _varint_at(payload, pos)
            seat = value & _MASK32
        else:
            pos = _skip(payload, pos, end, key)
    if pos != end:
        raise _truncated("a shown hand's last field runs past its end")
    decoded = (seat, tuple(shown))
    if len(_SHOWN_OF) >= _CACHE_SIZE:
        _SHOWN_OF.clear()
    _SHOWN_OF[payload] = decoded
    return decoded


class DecisionDecoder:
    """Decodes the serialized ServerMessages of one connection, decision requests the fast way.

    Keeps, for each of the last `matches` matches it decoded a request of, the run of discard-pile
    elements of the last request and its cards: the next request's pile starts with them, so only
    the cards laid since are decoded (a byte-for-byte comparison: any other pile is decoded whole).
    """

    __slots__ = ("_limit", "_runs")

    def __init__(self, matches: int = 32) -> None:
        self._limit = max(matches, 1)
        self._runs: dict[str, tuple[bytes, tuple[Card, ...]]] = {}

    def server_message(self, data: bytes) -> DecodedRequest | None:
        """A serialized ServerMessage: its decision request, decoded; None when it holds another
        kind (parse it with `bot_pb2.ServerMessage.FromString`). Raises `ProtocolMismatch` when the
        bytes are malformed or hold what this codec does not know."""
        try:
            return self._server_message(data)
        except IndexError:
            raise _truncated(f"the message's {len(data)} bytes end inside a field") from None
        except UnicodeDecodeError as error:
            raise ProtocolMismatch(f"a string that is not UTF-8: {error}") from None

    def decision_request(self, data: bytes) -> DecodedRequest:
        """A serialized DecisionRequest (not wrapped in a ServerMessage), decoded."""
        try:
            return self._request(data, 0, len(data))
        except IndexError:
            raise _truncated(f"the request's {len(data)} bytes end inside a field") from None
        except UnicodeDecodeError as error:
            raise ProtocolMismatch(f"a string that is not UTF-8: {error}") from None

    def _server_message(self, data: bytes) -> DecodedRequest | None:
        end = len(data)
        pos = 0
        kind = 0  # the oneof field set last: a later one replaces an earlier one
        start = stop = 0
        parts: list[bytes] = []  # a decision request in several parts (merged, as protobuf merges)
        while pos < end:
            key, pos = _key_at(data, pos)
            number = key >> 3
            if key & 7 == _LENGTH_DELIMITED and number in _SERVER_KINDS:
                begin, finish = _length_at(data, pos, end)
                if number == _SERVER_DECISION:
                    if kind == _SERVER_DECISION:
                        if not parts:
                            parts.append(data[start:stop])
                        parts.append(data[begin:finish])
                    else:
                        parts = []
                    start, stop = begin, finish
                kind = number
                pos = finish
            else:
                pos = _skip(data, pos, end, key)
        if kind != _SERVER_DECISION:
            return None
        if parts:
            joined = b"".join(parts)
            return self._request(joined, 0, len(joined))
        return self._request(data, start, stop)

    def _request(self, data: bytes, start: int, end: int) -> DecodedRequest:
        match_id = request_id = ""
        deadline_ms = 0
        observed: list[tuple[int, int]] = []  # the observation's parts (one, unless sent in parts)
        legal: list[Action] = []
        events: list[Event] = []
        actions = _ACTION_OF
        events_of = _EVENT_OF
        pos = start
        while pos < end:
            key = data[pos]
            pos += 1
            if key >= 0x80:
                key, pos = _key_at(data, pos - 1)
            if key & 7 == _LENGTH_DELIMITED:
                size = data[pos]
                pos += 1
                if size >= 0x80:
                    high = data[pos]
                    if high < 0x80:
                        size = (size & 0x7F) | high << 7
                        pos += 1
                    else:
                        size, pos = _varint_at(data, pos - 1)
                stop = pos + size
                if stop > end:
                    raise _overrun(key, pos, size)
                if key == _D_EVENT:
                    payload = data[pos:stop]
                    event = events_of.get(payload)
                    events.append(event if event is not None else _new_event(payload))
                elif key == _D_LEGAL:
                    action = actions.get(data[pos:stop])
                    legal.append(action if action is not None else _action_at(data, pos, stop))
                elif key == _D_OBSERVATION:
                    observed.append((pos, stop))
                elif key == _D_MATCH_ID:
                    match_id = data[pos:stop].decode()
                elif key == _D_REQUEST_ID:
                    request_id = data[pos:stop].decode()
                elif key < 8:
                    raise _truncated(f"field number 0 before byte {pos}")
                pos = stop
            elif key == _D_DEADLINE:
                value, pos = _varint_at(data, pos)
                deadline_ms = value & _MASK32
            else:
                pos = _skip(data, pos, end, key)
        if pos != end:
            raise _truncated(f"the decision request's last field runs past byte {end}")
        if len(observed) == 1:
            begin, stop = observed[0]
            observation = self._observation(data, begin, stop, tuple(legal), match_id)
        else:  # parts concatenated are the message merged; none: an empty observation
            joined = b"".join([data[begin:stop] for begin, stop in observed])
            observation = self._observation(joined, 0, len(joined), tuple(legal), match_id)
        return DecodedRequest(match_id, request_id, deadline_ms, observation, tuple(events))

    def _observation(
        self, data: bytes, start: int, end: int, legal: tuple[Action, ...], match_id: str
    ) -> Observation:
        values = [0] * _O_FIELDS  # the singular varint fields by field number, 32 bits
        scalar = _O_SCALAR
        faces = _FACE_OF
        hand: list[Card] = []
        discards: list[Card] = []
        sizes: tuple[int, ...] = ()
        scores: tuple[int, ...] = ()
        shown: list[tuple[int, tuple[Card, ...]]] = []
        top: Card | None = None
        drawn: Card | None = None
        run = self._runs.get(match_id)
        run_start = run_stop = -1  # the first run of discard elements: where it starts and stops
        run_cards = 0  # how many cards it holds
        reused = 0  # the length of the part of it decoded by the last request of the match
        pos = start
        while pos < end:
            at = pos
            key = data[pos]
            pos += 1
            if key >= 0x80:
                high = data[pos]
                if high < 0x80:  # fields 16 to 2047
                    key = (key & 0x7F) | high << 7
                    pos += 1
                else:
                    key, pos = _key_at(data, at)
            if key & 7 == _WIRE_VARINT:
                value = data[pos]
                pos += 1
                if value >= 0x80:
                    high = data[pos]
                    if high < 0x80:
                        value = (value & 0x7F) | high << 7
                        pos += 1
                    else:
                        value, pos = _varint_at(data, pos - 1)
                        value &= _MASK32
                number = key >> 3
                if number < _O_FIELDS and scalar[number]:
                    values[number] = value
                elif number == _O_HAND_SIZES:
                    sizes += (value,)
                elif number == _O_SCORES:
                    scores += (_int32(value),)
                elif number == 0:
                    raise _truncated(f"field number 0 before byte {pos}")
            elif key & 7 == _LENGTH_DELIMITED:
                if key == _O_DISCARD_KEY and run_start < 0:
                    run_start = at
                    if run is not None and at + len(run[0]) <= end and data.startswith(run[0], at):
                        discards.extend(run[1])
                        reused = len(run[0])
                        pos = at + reused
                        if pos >= end or data[pos] != _O_DISCARD_KEY:
                            run_stop, run_cards = pos, len(discards)
                        continue
                size = data[pos]
                pos += 1
                if size >= 0x80:
                    size, pos = _varint_at(data, pos - 1)
                stop = pos + size
                if stop > end:
                    raise _overrun(key, pos, size)
                if key == _O_CARD_KEY:
                    card = faces.get(data[pos:stop])
                    hand.append(card if card is not None else _face_at(data, pos, stop, 0))
                elif key == _O_DISCARD_KEY:
                    card = faces.get(data[pos:stop])
                    discards.append(card if card is not None else _face_at(data, pos, stop, 0))
                    if run_stop < 0 and (stop >= end or data[stop] != _O_DISCARD_KEY):
                        run_stop, run_cards = stop, len(discards)
                else:
                    number = key >> 3
                    if number == _O_TOP:
                        top = _face_at(data, pos, stop, 0 if top is None else top.index)
                    elif number == _O_HAND_SIZES:
                        sizes += _packed_at(data, pos, stop, False)
                    elif number == _O_SCORES:
                        scores += _packed_at(data, pos, stop, True)
                    elif number == _O_DRAWN:
                        drawn = _face_at(data, pos, stop, 0 if drawn is None else drawn.index)
                    elif number == _O_SHOWN:
                        payload = data[pos:stop]
                        hand_shown = _SHOWN_OF.get(payload)
                        shown.append(hand_shown if hand_shown is not None else _new_shown(payload))
                    elif number == 0:
                        raise _truncated(f"field number 0 before byte {pos}")
                pos = stop
            else:
                pos = _skip(data, pos, end, key)
        if pos != end:
            raise _truncated(f"the observation's last field runs past byte {end}")
        pile = tuple(discards)
        if run_stop - run_start > reused and run_start >= 0:  # a run, and longer than last time's
            self._remember(
                match_id, data[run_start:run_stop], pile if run_cards == len(pile) else pile[:run_cards]
            )
        phase = _PHASE_OF.get(values[_O_PHASE])
        if phase is None:
            raise ProtocolMismatch(f"Phase {_int32(values[_O_PHASE])} is unknown to this codec")
        colour = _COLOUR_OF.get(values[_O_COLOUR])
        if colour is None and values[_O_COLOUR] != pb.COLOUR_UNSPECIFIED:
            raise ProtocolMismatch(f"Colour {_int32(values[_O_COLOUR])} is unknown to this codec")
        direction = values[_O_DIRECTION]
        return Observation(
            values[_O_SEAT],
            values[_O_PLAYERS],
            phase,
            values[_O_TO_MOVE],
            values[_O_TURN_SEAT],
            values[_O_DEALER],
            (direction >> 1) ^ -(direction & 1),  # sint32: zigzag
            tuple(hand),
            FACES[0] if top is None else top,
            colour,
            pile,
            sizes,
            values[_O_DRAW_PILE_SIZE],
            drawn,
            values[_O_PENALTY],
            tuple(shown),
            values[_O_TURN],
            scores,
            _int32(values[_O_TARGET_SCORE]),
            values[_O_HAND_NUMBER],
            legal,
            match_id,
        )

    def _remember(self, match_id: str, run: bytes, cards: tuple[Card, ...]) -> None:
        """Keep a match's run of discard elements and its cards, the match used last at the end."""
        runs = self._runs
        if runs.pop(match_id, None) is None and len(runs) >= self._limit:
            del runs[next(iter(runs))]
        runs[match_id] = (run, cards)


def decision_from_bytes(data: bytes, decoder: DecisionDecoder | None = None) -> DecodedRequest:
    """A serialized ServerMessage holding a decision request (what the SDK reads off its stream),
    decoded as `decision_from` and `events_from` decode the parsed message. `decoder`: the
    connection's, which remembers what it decoded before (by default a new one). Raises
    `ProtocolMismatch` for malformed bytes, what this codec does not know, or another kind of message."""
    request = (decoder if decoder is not None else DecisionDecoder()).server_message(data)
    if request is None:
        raise ProtocolMismatch("a ServerMessage without a decision request")
    return request
