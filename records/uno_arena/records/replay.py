"""A recorded match as readable text (hand by hand, with scores) or as JSON-ready values.

Used by `uno-arena replay` and the web view. Enum values show by their plain names, read from the
bindings' descriptors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from uno_arena.records.match import RecordedMatch
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import described, name_of


def export(match: RecordedMatch) -> dict[str, object]:
    return {
        "summary": match.record.to_dict(),
        "finished": MessageToDict(match.finished, preserving_proto_field_name=True),
        "events": [MessageToDict(e, preserving_proto_field_name=True) for e in match.events],
    }


def lines(match: RecordedMatch) -> Iterator[str]:
    """The match as text: a heading, each hand's events and its scores, the result."""
    summary = match.record
    bots = summary.bots
    yield f"{match.match_id}: {' vs '.join(bots)}, seed {summary.seed}"
    hand = 0
    totals = [0] * len(bots)
    for event in match.events:
        kind = event.WhichOneof("kind")
        if kind is None:
            continue
        inner: Message = getattr(event, kind)
        if kind == "hand_started":
            hand += 1
            yield ""
            yield f"hand {hand}"
        elif kind == "hand_ended":
            totals = [t + p for t, p in zip(totals, event.hand_ended.points, strict=True)]
            reason = name_of(pb.HandEnd, event.hand_ended.reason)
            yield f"  hand ends ({reason}): points {list(event.hand_ended.points)}, totals {totals}"
        else:
            yield f"  {_describe(kind, inner, bots)}"
    winners = ", ".join(bots[w] for w in summary.winners) or "nobody"
    yield ""
    yield f"{summary.reason_name}: {winners} won; totals {list(summary.totals)}"


def _describe(kind: str, inner: Message, bots: tuple[str, ...]) -> str:
    """`alice played card=red draw two colour=red cards_left=3`: who first (seat 0 included), then
    every field that is set, enum values and cards by name."""
    who = ""
    if "seat" in inner.DESCRIPTOR.fields_by_name:
        seat = getattr(inner, "seat")  # noqa: B009 (the field exists on this event kind only)
        who = f"{bots[seat]} " if seat < len(bots) else f"seat {seat} "
    parts = [
        f"{field.name}={_show(field, value)}" for field, value in inner.ListFields() if field.name != "seat"
    ]
    return f"{who}{kind.replace('_', ' ')} {' '.join(parts)}".rstrip()


def _show(field: FieldDescriptor, value: Any) -> str:
    if field.is_repeated:
        return "[" + ", ".join(_one(field, v) for v in value) + "]"
    return _one(field, value)


def _one(field: FieldDescriptor, value: Any) -> str:
    if field.enum_type is not None:
        return described(field.enum_type, value)
    if isinstance(value, pb.Card):  # "red draw two", "wild": its index is for lookup tables only
        colour = name_of(pb.Colour, value.colour) if value.colour else ""
        return f"{colour} {name_of(pb.Rank, value.rank)}".strip().replace("_", " ")
    if isinstance(value, Message):
        return "{" + " ".join(f"{f.name}={_show(f, v)}" for f, v in value.ListFields()) + "}"
    return str(value)
