"""`uno-arena match play`: play one match on a running server through the control service."""

from __future__ import annotations

import json
import secrets
import uuid
from dataclasses import replace
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from uno_arena.cli.options import dial, server_option, tls_options
from uno_arena.cli.rules_commands import parse_rules
from uno_arena.cli.tables import Column, json_option, print_fitted, shown, wide_option
from uno_arena.cli.words import plural
from uno_arena.records.spec import DEFAULTS
from uno_arena.rules import RulesConfig
from uno_arena.rules.config import MAX_PLAYERS, MIN_PLAYERS
from uno_arena.v1 import codec, control_pb2, control_pb2_grpc
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.channels import ClientTLS
from uno_arena.v1.names import name_of

DEFAULT_REPLAY_DIR = Path("replays")


@click.group("match")
def match() -> None:
    """Matches on a running server."""


@match.command("play")
@click.argument("bots", nargs=-1, required=True)
@server_option()
@tls_options
@click.option("--control-token", envvar="UNO_ARENA_CONTROL_TOKEN", required=True,
              help="A control token (env UNO_ARENA_CONTROL_TOKEN).")  # fmt: skip
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    default=None,
    help="Seed of the deal; defaults to a fresh random one (printed, so the match can be replayed).",
)
@click.option(
    "--target",
    type=click.IntRange(1),
    default=RulesConfig().target_score,
    show_default=True,
    help="Score that ends the match.",
)
@click.option(
    "--rules",
    "rules_text",
    default="",
    metavar="NAME[=VALUE],...",
    help="Rules options, e.g. stacking,hand_size=5 (`uno-arena rules show` lists them; default: official).",
)
@click.option("--match-id", default=None, help="Defaults to a fresh random id.")
@click.option(
    "--wait",
    type=click.IntRange(0),
    default=DEFAULTS.deadlines.wait_for_bots_ms // 1000,
    show_default=True,
    help="Seconds to wait for the bots.",
)
@click.option(
    "--replay-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_REPLAY_DIR,
    show_default=True,
    help="Where the match's replay file is written (`uno-arena replay FILE` shows it).",
)
@click.option("--no-replay", is_flag=True, help="Write no replay file.")
@wide_option
@json_option
def play(bots: tuple[str, ...], server: str, tls: ClientTLS, control_token: str, seed: int | None,
         target: int, rules_text: str, match_id: str | None, wait: int, replay_dir: Path,
         no_replay: bool, wide: bool, as_json: bool) -> None:  # fmt: skip
    """Play one match between the connected BOTS (in seat order) and print the result.

    A server off this machine is reached with TLS (--tls, or --tls-ca FILE for a private CA); the
    control token is never sent there in clear unless --insecure says so.
    """
    seats = min(max(len(bots), MIN_PLAYERS), MAX_PLAYERS)  # the server checks the count of BOTS itself
    config = parse_rules(rules_text, seats, {"players": "the BOTS listed", "target_score": "--target"})
    seed = choose_seed(seed)
    console = Console(stderr=as_json)  # with --json, standard output is the JSON alone
    console.print(f"seed {seed} (play the same deal again with --seed {seed})", soft_wrap=True)  # copyable
    request = control_pb2.PlayMatchRequest(
        match_id=match_id or f"cli-{uuid.uuid4().hex[:10]}",
        bots=list(bots),
        seed=seed,
        rules=codec.rules(replace(config, target_score=target)),
        wait_for_bots_ms=wait * 1000,
    )
    with dial(server, tls) as channel:  # a server that is not there, or refuses: one line, exit 1
        stub = control_pb2_grpc.ControlServiceStub(channel)
        finished, events = _follow(stub, request, control_token, target, console)
    result = finished.result
    ended = name_of(pb.MatchEnd, result.reason)  # "target_reached", as `uno-arena replay` says it
    path = None if no_replay else _write_replay(finished, events, replay_dir)
    if as_json:
        by_seat = [{"seat": seat, "bot": name, "total": result.totals[seat], "faults": result.faults[seat],
                  "winner": seat in result.winners, "forfeited": seat in result.forfeited}
                 for seat, name in enumerate(result.bots)]  # fmt: skip
        click.echo(json.dumps({"match_id": result.match_id, "end": ended, "seed": finished.seed,
                               "hands": len(result.hands), "events": finished.event_count,
                               "actions": len(finished.actions), "seats": by_seat,
                               "replay": str(path) if path is not None else None}, indent=1))  # fmt: skip
        return
    rows = []
    for seat, name in enumerate(result.bots):
        mark = " (winner)" if seat in result.winners else " (forfeited)" if seat in result.forfeited else ""
        rows.append([str(seat), name + mark, str(result.totals[seat]), str(result.faults[seat])])
    print_fitted(console, _SEAT_COLUMNS, rows, wide, title=f"match {shown(result.match_id)}: {ended}")
    console.print(f"{plural(len(result.hands), 'hand')}, {plural(finished.event_count, 'event')}; replay: "
                  f"seed {finished.seed}, {plural(len(finished.actions), 'action')}")  # fmt: skip
    if path is not None:
        console.print(f"recorded: uno-arena replay {path}", soft_wrap=True)


_SEAT_COLUMNS = (Column("seat", whole=True, justify="right"), Column("bot"),
                 Column("total", whole=True, justify="right"), Column("faults", whole=True, justify="right",
                                                                       drop=1))  # fmt: skip


def _write_replay(finished: control_pb2.FinishedMatch, events: list[pb.Event], folder: Path) -> Path:
    """The match's replay file, in the format `uno-arena replay --json` prints (loaded only here)."""
    from uno_arena.records.replay import recorded_match, write_replay_file

    try:
        return write_replay_file(recorded_match(finished, events), folder)
    except OSError as error:
        raise click.ClickException(f"cannot write the replay into {folder}: {error}") from None


def choose_seed(seed: int | None) -> int:
    """The given seed, else a fresh random one: a fixed default would replay the same deal every time."""
    return secrets.randbits(63) if seed is None else seed


def _follow(stub: control_pb2_grpc.ControlServiceStub, request: control_pb2.PlayMatchRequest, token: str,
            target: int, console: Console) -> tuple[control_pb2.FinishedMatch, list[pb.Event]]:  # fmt: skip
    """The finished match and its complete event log (the `log` chunks that come before `finished`)."""
    totals = [0] * len(request.bots)
    events: list[pb.Event] = []
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[totals]}"))
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("waiting for bots", total=target, totals="")
        for message in stub.PlayMatch(request, metadata=[("authorization", f"Bearer {token}")]):
            kind = message.WhichOneof("kind")
            if kind == "started":
                progress.update(task, description="playing")
            elif kind == "hand":
                totals = [t + p for t, p in zip(totals, message.hand.points, strict=True)]
                progress.update(task, completed=min(max(totals), target), totals=" ".join(map(str, totals)))
            elif kind == "fault":
                console.print(f"fault: seat {message.fault.seat}: {shown(message.fault.detail)}")
            elif kind == "log":
                events.extend(message.log.events)
            elif kind == "finished":
                finished: control_pb2.FinishedMatch = message.finished  # the stub module is untyped
                return finished, events
    raise click.ClickException("the server ended the match stream without a result")
