"""A recorded match as readable text (hand by hand, with scores) or as JSON-ready values.

Used by `uno-arena replay` and the web view.
"""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers.recording import RecordedMatch


def export(match: RecordedMatch) -> dict[str, object]:
    return {
        "summary": match.summary,
        "finished": MessageToDict(match.finished, preserving_proto_field_name=True),
        "events": [MessageToDict(e, preserving_proto_field_name=True) for e in match.events],
    }


def lines(match: RecordedMatch) -> Iterator[str]:
    """The match as text: a heading, each hand's events and its scores, the result."""
    bots = match.summary["bots"]
    yield f"{match.match_id}: {' vs '.join(bots)}, seed {match.summary['seed']}"
    hand = 0
    totals = [0] * len(bots)
    for event in match.events:
        kind = event.WhichOneof("kind")
        inner = getattr(event, kind)
        if kind == "hand_started":
            hand += 1
            yield ""
            yield f"hand {hand}"
        elif kind == "hand_ended":
            totals = [t + p for t, p in zip(totals, inner.points, strict=True)]
            reason = pb.HandEnd.Name(inner.reason).removeprefix("HAND_END_").lower()
            yield f"  hand ends ({reason}): points {list(inner.points)}, totals {totals}"
        else:
            yield f"  {_describe(kind, inner, bots)}"
    summary = match.summary
    winners = ", ".join(bots[w] for w in summary["winners"]) or "nobody"
    yield ""
    yield f"{summary['reason']}: {winners} won; totals {summary['totals']}"


def _describe(kind: str, inner: Message, bots: list[str]) -> str:
    values = MessageToDict(inner, preserving_proto_field_name=True)
    values.pop("seat", None)
    who = ""
    if "seat" in inner.DESCRIPTOR.fields_by_name:
        seat = int(inner.seat)
        who = f"{bots[seat]} " if seat < len(bots) else f"seat {seat} "
    for key in ("card", "cards"):
        if key in values:
            values[key] = _cards(values[key])
    rest = " ".join(f"{k}={_plain(v)}" for k, v in values.items() if v not in ("[]", ""))
    return f"{who}{kind.replace('_', ' ')} {rest}".rstrip()


def _plain(value: object) -> str:
    text = str(value)
    for prefix in _ENUM_PREFIXES:
        if text.startswith(prefix):
            return text.removeprefix(prefix).lower()
    return text


_ENUM_PREFIXES = ("COLOUR_", "SHUFFLE_REASON_", "MATCH_END_", "HAND_END_", "DRAW_REASON_")


def _cards(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_cards(v) for v in value) + "]"
    if isinstance(value, dict):
        colour = str(value.get("colour", "")).removeprefix("COLOUR_").lower()
        rank = str(value.get("rank", "")).removeprefix("RANK_").lower().replace("_", " ")
        return f"{colour} {rank}".strip()
    return str(value)
