"""`uno-arena bot play BOT... --seats N --matches N`: the local arena (`uno_arena.sdk.arena`) from the shell.

No server, no Redis: the bots play in this process. It needs only the base install; `--replay` loads the
server's encoder and the records' file format (both in the base install too) only when given.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from uno_arena.cli.bot_commands import load_bot_class
from uno_arena.cli.rules_commands import parse_rules
from uno_arena.cli.tables import Column, json_option, print_fitted, wide_option
from uno_arena.cli.words import plural
from uno_arena.rules import RulesConfig
from uno_arena.rules.config import MAX_PLAYERS, MIN_PLAYERS
from uno_arena.sdk.arena import ArenaError, ArenaResult, MatchOutcome, play

if TYPE_CHECKING:
    from uno_arena.records.match import RecordedMatch


@click.command("play")
@click.argument("targets", metavar="BOT...", nargs=-1, required=True)
@click.option(
    "--seats",
    type=click.IntRange(MIN_PLAYERS, MAX_PLAYERS),
    default=None,
    help=f"Seats at the table, {MIN_PLAYERS} to {MAX_PLAYERS} (default: one per BOT, at least "
    f"{MIN_PLAYERS}); BOTs fill them in turn.",
)
@click.option("--matches", type=click.IntRange(1), default=100, show_default=True, help="Matches to play.")
@click.option(
    "--rules",
    "rules_text",
    default="",
    metavar="NAME[=VALUE],...",
    help="Rules options: NAME turns one on, NAME=VALUE sets it (`uno-arena rules show` lists them).",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
    default=None,
    help="Seed of the first match's deal (match i: seed + i); default: a fresh one, printed.",
)
@click.option(
    "--deadline",
    type=click.FloatRange(0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Enforce a time per decision: decide is abandoned at it, the safe default applied and a timeout "
    "counted (default: no deadline).",
)
@click.option(
    "--ask-single",
    is_flag=True,
    help="Ask every decision, also one whose single action every seat can tell (a 7's swap at two seats).",
)
@click.option(
    "--replay",
    "replay_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Write each match's replay file into DIR (`uno-arena replay FILE` shows one).",
)
@wide_option
@json_option
def play_command(
    targets: tuple[str, ...],
    seats: int | None,
    matches: int,
    rules_text: str,
    seed: int | None,
    deadline: float | None,
    ask_single: bool,
    replay_dir: Path | None,
    wide: bool,
    as_json: bool,
) -> None:
    """Play BOTs (file.py:Class or module:Class) against each other in-process: no server, no Redis."""
    classes = [load_bot_class(target) for target in targets]
    config = parse_rules(rules_text, seats or min(max(len(targets), MIN_PLAYERS), MAX_PLAYERS))
    console = Console(stderr=as_json)  # with --json, standard output is the JSON alone
    if not console.is_terminal:  # a pipe or a file: no terminal width to fit, keep each row on one line
        console = Console(width=160, stderr=as_json)
    seed = secrets.randbits(62) if seed is None else seed
    console.print(f"seed {seed} (play the same deals again with --seed {seed})", soft_wrap=True)  # copyable
    write = _replay_writer(replay_dir) if replay_dir is not None else None
    written: list[Path] = []
    columns = (TextColumn("matches"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("matches", total=matches)

        def played(outcome: MatchOutcome) -> None:
            if write is not None:
                written.append(write(outcome))
            progress.advance(task)

        try:
            result = play(classes, seats=seats, matches=matches, rules=config, seed=seed, deadline=deadline,
                          ask_single=ask_single, on_match=played, keep_matches=False)  # fmt: skip
        except ArenaError as error:
            raise click.UsageError(str(error)) from None
    if as_json:
        click.echo(json.dumps(_result_dict(result, seed), indent=1))
    else:
        _print_result(console, result, wide)
    if written:
        replays = plural(len(written), "replay")
        console.print(f"{replays} in {replay_dir}; e.g. uno-arena replay {written[0]}", soft_wrap=True)


_RESULT_COLUMNS = (
    Column("bot", whole=True),
    Column("matches", whole=True, justify="right", drop=3),
    Column("wins", whole=True, justify="right"),
    Column("win rate [95% CI]"),
    Column("points/match", whole=True, justify="right", drop=2),
    Column("exceptions", whole=True, justify="right", drop=4),
    Column("timeouts", whole=True, justify="right", drop=5),
    Column("decisions", whole=True, justify="right", drop=1),
)


def _changed_rules(result: ArenaResult) -> dict[str, object]:
    default = RulesConfig()
    return {k: v for k, v in result.config.to_dict().items() if v != getattr(default, k) and k != "players"}


def _result_dict(result: ArenaResult, seed: int) -> dict[str, object]:
    """The result as JSON: what the table shows, every field, and how it was played."""
    bots = [{"bot": b.name, "matches": b.matches, "wins": b.wins, "win_rate": b.win_rate,
             "win_low": b.win_low, "win_high": b.win_high, "points_per_match": b.points_per_match,
             "exceptions": b.exceptions, "timeouts": b.timeouts, "decisions": b.decisions}
            for b in result.bots]  # fmt: skip
    return {"matches": result.played, "seats": result.seats, "seed": seed, "rules": _changed_rules(result),
            "deadline_s": result.deadline, "bots": bots, "decisions": result.decisions,
            "actions": result.actions, "seconds": result.seconds}  # fmt: skip


def _print_result(console: Console, result: ArenaResult, wide: bool) -> None:
    rules = _changed_rules(result)
    title = f"{plural(result.played, 'match')} at {result.seats} seats"
    if rules:
        title += f", rules {rules}"
    rows = []
    for bot in result.bots:
        rate = f"{bot.win_rate:.3f} [{bot.win_low:.3f}, {bot.win_high:.3f}]"
        wins = str(int(bot.wins)) if bot.wins.is_integer() else f"{bot.wins:.2f}"  # shared wins: fractions
        rows.append([bot.name, str(bot.matches), wins, rate, f"{bot.points_per_match:.1f}",
                     str(bot.exceptions), str(bot.timeouts), str(bot.decisions)])  # fmt: skip
    print_fitted(console, _RESULT_COLUMNS, rows, wide, title=title)
    deadline = f"deadline {result.deadline:g} s" if result.deadline is not None else "no deadline"
    console.print(f"{result.decisions_per_s:,.0f} decisions/s ({plural(result.decisions, 'decision')}, "
                  f"{plural(result.actions, 'action')} in {result.seconds:.1f} s; {deadline})")  # fmt: skip


def _replay_writer(folder: Path) -> Callable[[MatchOutcome], Path]:
    """Each match to its replay file in `folder`; the server's encoder and the file format load only here."""
    from uno_arena.records.replay import write_replay_file

    def write(outcome: MatchOutcome) -> Path:
        return write_replay_file(recorded_from(outcome), folder)

    return write


def recorded_from(outcome: MatchOutcome) -> RecordedMatch:
    """The arena's match as the server would have recorded it: result, actions, seed, rules, faults and
    the complete event log (rebuilt by replaying the actions through the rules core)."""
    from uno_arena.records.replay import recorded_match
    from uno_arena.rules import ACTIONS, replay_match
    from uno_arena.v1 import codec, control_pb2
    from uno_arena.v1 import game_pb2 as pb
    from uno_arena.v1.names import number_of

    result = outcome.result
    match = replay_match(outcome.config, outcome.seed, result.actions)
    faults = [
        pb.Fault(match_id=f.match_id, seat=f.seat, kind=number_of(pb.FaultKind, f.kind.value),
                 detail=f.detail, strikes=f.strikes, forfeited=f.forfeited, action_index=f.action_index,
                 event_index=f.event_index,
                 applied=codec.action_message(ACTIONS[f.applied]) if f.applied is not None else None)
        for f in outcome.faults
    ]  # fmt: skip
    by_seat = [sum(1 for f in outcome.faults if f.seat == seat) for seat in range(len(outcome.bots))]
    summary = codec.match_result(outcome.match_id, codec.MATCH_ENDS[result.reason], result.winners,
                                result.totals, result.hands, list(outcome.bots), [], by_seat)  # fmt: skip
    finished = control_pb2.FinishedMatch(result=summary, event_count=len(match.events),
                                         actions=[a.id for a in result.actions], seed=outcome.seed,
                                         rules=codec.rules(outcome.config), faults=faults)  # fmt: skip
    events = list(codec.event_log_chunk(match.events).events)
    return recorded_match(finished, events, index=outcome.index)
