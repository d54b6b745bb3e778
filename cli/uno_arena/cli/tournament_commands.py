"""`uno-arena tournament ...`: create, start, follow and repair round-robin tournaments."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from uno_arena.cli import archive_commands
from uno_arena.cli.leaderboard_commands import standings_table
from uno_arena.cli.options import connect, server_option, with_redis
from uno_arena.cli.rules_commands import rules_values
from uno_arena.cli.tables import Column, json_option, print_fitted, shown, wide_option
from uno_arena.cli.words import plural
from uno_arena.leaderboard import board
from uno_arena.records import ruleset
from uno_arena.records import tournament as records
from uno_arena.records.match import MAX_PAGE, TournamentMatch, tournament_matches
from uno_arena.records.spec import DEFAULTS, SpecError, load_spec, spec_from_dict
from uno_arena.records.tournament import (
    MatchState,
    TournamentError,
    TournamentStatus,
    errors,
    list_ids,
    load,
    progress,
)
from uno_arena.rules.config import MAX_PLAYERS, MIN_PLAYERS
from uno_arena.workers import lifecycle

# After the end, how long `watch` (and the demo) wait for the standings (the leaderboard's refresh job
# updates them after each record) to count every match done before saying they may lag.
FINAL_STANDINGS_WAIT_S = 5.0


@click.group("tournament")
def tournament() -> None:
    """Round-robin tournaments played by RQ workers (docs/tournaments.md)."""


tournament.add_command(archive_commands.export_command)
tournament.add_command(archive_commands.import_command)
tournament.add_command(archive_commands.delete_command)


def _guarded(action: Callable[[], Any]) -> Any:
    try:
        return action()
    except (SpecError, TournamentError) as error:
        raise click.ClickException(str(error)) from None


@tournament.command("create")
@click.argument("spec", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", help="Tournament name (overrides the spec's).")
@click.option("--bots", help="Comma-separated bot names (overrides the spec's).")
@click.option("--seats", type=int,
              help=f"Bots per table, {MIN_PLAYERS} to {MAX_PLAYERS} (default {DEFAULTS.seats}).")  # fmt: skip
@click.option("--cycles", type=int,
              help=f"Times the whole round robin is played (default {DEFAULTS.cycles}).")  # fmt: skip
@click.option("--target", type=int, help=f"Score that ends a match (default {DEFAULTS.target}).")
@click.option("--seed", type=int, help=f"Seed of the schedule and every match (default {DEFAULTS.seed}).")
@click.option("--rules", "rules_text", metavar="NAME[=VALUE],...",
              help="Rules options by name, e.g. stacking,jump_in (`uno-arena rules show`), as `match play` "
                   "takes them; they replace the spec's [rules] (--rules '': official rules).")  # fmt: skip
@server_option(
    "Match server HOST:PORT the workers use", None, f"; default: the spec's, else {DEFAULTS.server}"
)
@click.option("--pool", metavar="NAME",
              help="Play on the pool of match servers NAME (`uno-arena server --pool NAME`) instead of one "
                   "server (overrides the spec's).")  # fmt: skip
@click.option("--id", "tournament_id", help="Tournament id (default: the name and a random suffix).")
@with_redis
def create(
    spec: Path | None, tournament_id: str | None, rules_text: str | None, redis_url: str, key_prefix: str,
    **flags: Any,
) -> None:  # fmt: skip
    """Check SPEC (a TOML file) and the flags, schedule every match, and store the tournament."""
    overrides = {k: v for k, v in flags.items() if v is not None}
    # UNO_ARENA_SERVER stands in for a server the spec does not name: never for a pool it names
    source = click.get_current_context().get_parameter_source("server")
    environment_server = overrides.pop("server", None) if source is ParameterSource.ENVIRONMENT else None
    if rules_text is not None:  # the spec's [rules] table, replaced like any field a flag gives
        overrides["rules"] = rules_values(rules_text, {"players": "--seats", "target_score": "--target"})
    try:
        parsed = load_spec(spec, overrides) if spec else spec_from_dict(overrides)
        if environment_server is not None and not parsed.pool:
            overrides["server"] = environment_server
            parsed = load_spec(spec, overrides) if spec else spec_from_dict(overrides)
    except SpecError as error:
        message = str(error)
        if rules_text is not None and message.startswith("rules."):  # said of --rules, as `match play` does
            raise click.BadParameter(message.removeprefix("rules."), param_hint="--rules") from None
        raise click.ClickException(message) from None
    client = connect(redis_url)
    created = _guarded(lambda: lifecycle.create_checked(client, key_prefix, parsed, tournament_id))
    matches = load(client, key_prefix, created).matches
    click.echo(f"created {created}: {plural(len(parsed.bots), 'bot')}, {parsed.seats} per table, "
               f"{plural(matches, 'match')} to {parsed.target}; {ruleset.summary(parsed.rules)}")  # fmt: skip
    click.echo(f"start it with: uno-arena tournament start {created}")


def _id_command(name: str, help_text: str) -> Callable[[Callable[..., None]], click.Command]:
    def decorate(function: Callable[..., None]) -> click.Command:
        function.__doc__ = help_text
        return tournament.command(name)(click.argument("tournament_id")(with_redis(function)))

    return decorate


@_id_command("start", "Queue every match of a created tournament.")
def start(tournament_id: str, redis_url: str, key_prefix: str) -> None:
    queued = _guarded(lambda: lifecycle.start(connect(redis_url), key_prefix, tournament_id))
    click.echo(f"queued {plural(queued, 'match')}; workers play them (uno-arena worker), follow with: "
               f"uno-arena tournament watch {tournament_id}")  # fmt: skip


@_id_command("cancel", "Cancel the matches still waiting; running ones finish and count.")
def cancel(tournament_id: str, redis_url: str, key_prefix: str) -> None:
    cancelled = _guarded(lambda: lifecycle.cancel(connect(redis_url), key_prefix, tournament_id))
    click.echo(f"cancelled {plural(cancelled, 'waiting match')}; `resume` queues them again")


@_id_command(
    "resume",
    "Queue again the matches nothing will play: cancelled, lost with a dead worker, retries left overdue.",
)
def resume(tournament_id: str, redis_url: str, key_prefix: str) -> None:
    queued = _guarded(lambda: lifecycle.resume(connect(redis_url), key_prefix, tournament_id))
    click.echo(f"queued {plural(queued, 'match')}")


@_id_command("rerun-failed", "Queue the failed matches again (e.g. once a missing bot is back).")
def rerun_failed(tournament_id: str, redis_url: str, key_prefix: str) -> None:
    queued = _guarded(lambda: lifecycle.rerun_failed(connect(redis_url), key_prefix, tournament_id))
    click.echo(f"queued {plural(queued, 'failed match')} again")


@_id_command(
    "status",
    "Matches done, running, queued (and what for) and failed (and why), with an ETA; with --matches, the "
    "matches themselves (ids for `uno-arena replay`), a page at a time.",
)
@click.option("--matches", "list_matches", is_flag=True,
              help="List the matches: id, bots, state, winner, end reason, forfeits, faults.")  # fmt: skip
@click.option("--state", "only", type=click.Choice([s.value for s in MatchState]),
              help="With --matches: only the matches in this state.")  # fmt: skip
@click.option("--from", "first", type=click.IntRange(min=0), default=0, show_default=True,
              help="With --matches: the first match listed (0 = the first of the list).")  # fmt: skip
@click.option("--limit", type=click.IntRange(1, MAX_PAGE), default=50, show_default=True,
              help=f"With --matches: how many to list (at most {MAX_PAGE}).")  # fmt: skip
@wide_option
@json_option
def status(
    tournament_id: str, redis_url: str, key_prefix: str, list_matches: bool, only: str | None, first: int,
    limit: int, wide: bool, as_json: bool,
) -> None:  # fmt: skip
    client = connect(redis_url)
    state = _guarded(lambda: progress(client, key_prefix, tournament_id))
    matches: list[TournamentMatch] = []
    total = 0
    if list_matches:
        in_state = MatchState(only) if only else None
        matches, total = tournament_matches(client, key_prefix, tournament_id, first, limit, in_state)
    if as_json:
        values = {
            **state.to_dict(),
            "rules": ruleset.summary(state.tournament.spec.rules),
            "errors": {str(i): r for i, r in sorted(errors(client, key_prefix, tournament_id).items())},
        }
        if list_matches:
            values["page"] = {"first": first, "total": total, "state": only,
                              "matches": [m.to_dict() for m in matches]}  # fmt: skip
        click.echo(json.dumps(values, indent=1))
        return
    console = Console()
    console.print(_summary_table(state))
    if list_matches:
        print_fitted(console, _MATCH_COLUMNS, [_match_row(m) for m in matches], wide, lines=False)
        console.print(_page_line(matches, total, first, only), highlight=False)
    else:
        for index, reason in sorted(errors(client, key_prefix, tournament_id).items()):
            console.print(f"match {index}: {shown(reason)}")
    if state.only_failed_left:
        console.print(_rerun_hint(state))


# The match id and bots are always shown (whole: an id is copied, a name never split); in a narrow
# terminal the faults go first, then who forfeited, the winner, the end reason.
_MATCH_COLUMNS = (
    Column("match", whole=True),
    Column("bots"),
    Column("state", whole=True),
    Column("winner", drop=3),
    Column("end", drop=2),
    Column("forfeited", drop=4),
    Column("faults", drop=5),
)


def _match_row(match: TournamentMatch) -> list[str]:
    """A row of `_MATCH_COLUMNS`; a failed match says why in the `end` column."""
    record = match.record
    if record is None:  # not played yet, running, or failed (why, in the end column)
        return [match.match_id, ", ".join(match.bots), str(match.state), "", match.error, "", ""]
    bots = record.bots
    faults = "; ".join(f"{bots[seat]} {f.described()}" for seat, f in enumerate(record.faults) if f.total)
    return [
        match.match_id,
        ", ".join(bots),
        str(match.state),
        ", ".join(bots[w] for w in record.winners) or "nobody",
        record.reason_name,
        ", ".join(bots[s] for s in record.forfeited),
        faults,
    ]


def _page_line(matches: list[TournamentMatch], total: int, first: int, only: str | None) -> str:
    which = f"{only} matches" if only else "matches"
    if not matches:
        return f"no {which} from {first} on ({total} in all)"
    shown = f"{which} {first + 1}-{first + len(matches)} of {total}"
    more = first + len(matches) < total
    then = f"; next: --from {first + len(matches)}" if more else ""
    recorded = next((m.match_id for m in matches if m.record is not None), None)  # only those replay
    if recorded is None:
        return f"{shown}{then}; none of them recorded yet (a recorded one replays: uno-arena replay ID)"
    return f"{shown}{then}; one of them hand by hand: uno-arena replay {recorded}"


@tournament.command("list")
@wide_option
@json_option
@with_redis
def list_command(wide: bool, as_json: bool, redis_url: str, key_prefix: str) -> None:
    """Every tournament under this key prefix."""
    client = connect(redis_url)
    found = [load(client, key_prefix, tournament_id) for tournament_id in list_ids(client, key_prefix)]
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": t.id,
                        "name": t.spec.name,
                        "status": str(t.status),
                        "done": t.done,
                        "matches": t.matches,
                        "bots": list(t.spec.bots),
                        "seats": t.spec.seats,
                        "rules": ruleset.summary(t.spec.rules),
                    }
                    for t in found
                ],
                indent=1,
            )
        )
        return
    rows = [[t.id, t.spec.name, str(t.status), str(t.done), str(t.matches), str(len(t.spec.bots)),
             str(t.spec.seats), ruleset.summary(t.spec.rules)] for t in found]  # fmt: skip
    print_fitted(Console(), _LIST_COLUMNS, rows, wide)


# The id is what the other commands take: always shown, never cut; the rules go first when space runs out.
_LIST_COLUMNS = (
    Column("id", whole=True),
    Column("name", drop=3),
    Column("status", whole=True),
    Column("done", whole=True, justify="right"),
    Column("matches", whole=True, justify="right"),
    Column("bots", whole=True, drop=4, justify="right"),
    Column("seats", whole=True, drop=5, justify="right"),
    Column("rules", drop=6),
)


@_id_command(
    "watch",
    "A live progress bar and running standings, until the tournament ends or only failed "
    "matches are left, on the final standings (exit status 1 if any failed; Ctrl-C leaves).",
)
def watch(tournament_id: str, redis_url: str, key_prefix: str) -> None:
    client = connect(redis_url)
    state = _guarded(lambda: progress(client, key_prefix, tournament_id))
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[detail]}"))  # fmt: skip
    task = bar.add_task(tournament_id, total=state.tournament.matches, detail="")
    catching_up: float | None = None  # once over: until when the standings may take to count every match
    try:
        with Live(Group(bar), refresh_per_second=4) as live:
            while True:
                state = progress(client, key_prefix, tournament_id)
                # the leaderboard's refresh job runs after each record, so it may count fewer than are done
                table = board.current(client, key_prefix, tournament_id)
                over = state.tournament.status is not TournamentStatus.RUNNING or state.only_failed_left
                detail = "waiting for the standings" if over and table.matches < state.tournament.done else ""
                bar.update(task, completed=state.tournament.done, detail=detail or _detail(state))
                title = f"standings after {plural(table.matches, 'match')}"
                live.update(Group(bar, standings_table(table, title, compact=True)))
                if over and not detail:
                    break
                if over:
                    if catching_up is None:
                        catching_up = time.monotonic() + FINAL_STANDINGS_WAIT_S
                    if time.monotonic() > catching_up:
                        break
                time.sleep(0.2 if over else 1)  # a refresh interval, not synchronisation
    except KeyboardInterrupt:
        return
    failed = state.tournament.states[MatchState.FAILED]
    if state.only_failed_left:
        click.echo(f"\n{_rerun_hint(state)}")
    else:
        click.echo(f"\ntournament {state.tournament.status}" + (f", {failed} failed" if failed else ""))
    done = state.tournament.done
    if table.matches < done:
        click.echo(f"the standings may lag: they count {table.matches} of the {plural(done, 'match')} done "
                   f"(`uno-arena leaderboard {tournament_id} --refresh` recomputes them)")  # fmt: skip
    if failed:
        raise SystemExit(1)


def _rerun_hint(state: records.Progress) -> str:
    t = state.tournament
    failed = t.states[MatchState.FAILED]
    return (f"{t.done} of {plural(t.matches, 'match')} done; only failed matches are left ({failed}): "
            f"see why with `uno-arena tournament status {t.id}`, queue them again with "
            f"`uno-arena tournament rerun-failed {t.id}`")  # fmt: skip


def _waiting(state: records.Progress) -> str:
    """The queued matches, and how many of them wait out a retry's backoff (until when)."""
    queued = state.tournament.states[MatchState.QUEUED]
    next_retry = state.next_retry
    if next_retry is None:
        return str(queued)
    return f"{queued} ({len(state.retries)} waiting for a retry, the next at {_clock(next_retry)})"


def _detail(state: records.Progress) -> str:
    states = state.tournament.states
    parts = []
    if states[MatchState.RUNNING]:
        parts.append(f"{states[MatchState.RUNNING]} running")
    if states[MatchState.QUEUED]:
        parts.append(f"queued {_waiting(state)}")
    if states[MatchState.FAILED]:
        parts.append(f"{states[MatchState.FAILED]} failed")
    parts.append(_eta(state))
    return ", ".join(parts)


def _eta(state: records.Progress) -> str:
    if state.eta_s is not None:
        return f"ETA {_duration(state.eta_s)}"
    t = state.tournament
    if t.status is TournamentStatus.RUNNING and state.remaining and not t.states[MatchState.RUNNING]:
        return "nothing running"
    return "ETA -"


def _clock(unix: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(unix))


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _summary_table(state: records.Progress) -> Group:
    """The id on a line of its own above the table (a table's title is folded to the table's width, id
    and all), then the counts."""
    t = state.tournament
    return Group(Text(f"{t.id} ({t.spec.name}): {t.status}"), _counts_table(state))


def _counts_table(state: records.Progress) -> Table:
    t = state.tournament
    table = Table(show_header=False)
    for label in MatchState:
        table.add_row(str(label), _waiting(state) if label is MatchState.QUEUED else str(t.states[label]))
    table.add_row("total", str(t.matches))
    table.add_row("ETA", _eta(state).removeprefix("ETA "))
    table.add_row("target", str(t.spec.target))
    table.add_row("rules", ruleset.summary(t.spec.rules))
    return table
