"""`uno-arena replay MATCH_ID`: a recorded match, hand by hand, or its whole record as JSON."""

from __future__ import annotations

import json

import click
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from rich.console import Console

from cli.options import connect, with_redis
from uno_arena.v1 import game_pb2 as pb
from workers.recording import RecordedMatch, load_match


@click.command("replay")
@click.argument("match_id")
@click.option("--json", "as_json", is_flag=True, help="Export the result and the full event log as JSON.")
@with_redis
def replay(match_id: str, as_json: bool, redis_url: str, key_prefix: str) -> None:
    """Print a recorded match (ids are listed by `uno-arena tournament status`)."""
    match = load_match(connect(redis_url), key_prefix, match_id)
    if match is None:
        raise click.ClickException(f"no recorded match {match_id!r}")
    if as_json:
        click.echo(json.dumps(export(match), indent=1))
    else:
        print_match(Console(), match)


def export(match: RecordedMatch) -> dict[str, object]:
    return {
        "summary": match.summary,
        "finished": MessageToDict(match.finished, preserving_proto_field_name=True),
        "events": [MessageToDict(e, preserving_proto_field_name=True) for e in match.events],
    }


def print_match(console: Console, match: RecordedMatch) -> None:
    bots = match.summary["bots"]
    console.print(f"[bold]{match.match_id}[/]: {' vs '.join(bots)}, seed {match.summary['seed']}")
    hand = 0
    totals = [0] * len(bots)
    for event in match.events:
        kind = event.WhichOneof("kind")
        inner = getattr(event, kind)
        if kind == "hand_started":
            hand += 1
            console.print(f"\n[bold]hand {hand}[/]")
        elif kind == "hand_ended":
            totals = [t + p for t, p in zip(totals, inner.points, strict=True)]
            console.print(f"  hand ends ({pb.HandEnd.Name(inner.reason).removeprefix('HAND_END_').lower()}): "
                          f"points {list(inner.points)}, totals {totals}")  # fmt: skip
        else:
            console.print(f"  {_describe(kind, inner, bots)}", highlight=False, markup=False)
    summary = match.summary
    winners = ", ".join(bots[w] for w in summary["winners"]) or "nobody"
    console.print(f"\n[bold]{summary['reason']}[/]: {winners} won; totals {summary['totals']}")


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
