"""`uno-arena leaderboard [TOURNAMENT]`: the standings, as a table, JSON or CSV."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, fields

import click
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from uno_arena.cli.options import connect, with_redis
from uno_arena.cli.words import plural
from uno_arena.leaderboard import board
from uno_arena.leaderboard.standings import Standing
from uno_arena.records import ruleset
from uno_arena.records.tournament import TournamentError, check_exists, load
from uno_arena.rules import RulesConfig

COLUMNS = tuple(f.name for f in fields(Standing))


@click.command("leaderboard")
@click.argument("tournament_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Standings and head-to-head as JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="Standings as CSV.")
@click.option("--refresh", is_flag=True, help="Recompute from the recorded results first.")
@with_redis
def leaderboard(tournament_id: str | None, as_json: bool, as_csv: bool, refresh: bool, redis_url: str,
                key_prefix: str) -> None:  # fmt: skip
    """Rank the bots of TOURNAMENT (default: every tournament under the prefix).

    Ranked by OpenSkill's conservative rating (mu - 3 sigma), then match wins,
    then points per match, then name. TOURNAMENT `all` is the default too.
    """
    if as_json and as_csv:  # checked before Redis is asked: one output format, never a silent pick
        raise click.UsageError("--json and --csv cannot be combined: choose one output format")
    client = connect(redis_url)
    if tournament_id == board.ALL:
        tournament_id = None
    if tournament_id is not None:
        try:  # an unknown id would give an empty table, a malformed one another key's contents
            check_exists(client, key_prefix, tournament_id)
        except TournamentError as error:
            raise click.ClickException(str(error)) from None
    scope = tournament_id or board.ALL
    table = None if refresh else board.load(client, key_prefix, scope)
    if table is None:
        table = board.rebuild(client, key_prefix, scope)
    # one tournament's rules: every match of it was played under them (all tournaments may mix rules)
    rules = load(client, key_prefix, tournament_id).spec.rules if tournament_id is not None else None
    if as_json:
        values = table.to_dict()
        if rules is not None:
            values["rules"] = ruleset.as_dict(rules)
        click.echo(json.dumps(values, indent=1))
    elif as_csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(asdict(row) for row in table.standings)
    else:
        print_leaderboard(Console(), table, tournament_id or "all tournaments", rules)


def print_leaderboard(
    console: Console, table: board.Table, title: str, rules: RulesConfig | None = None
) -> None:
    """The standings and head to head; `rules`, a tournament's, are said under the heading."""
    heading = f"leaderboard: {title}, {plural(table.matches, 'match')}"
    if rules is not None:
        console.print(f"{title} was played under {ruleset.summary(rules)}", highlight=False)
    console.print(standings_table(table, heading, width=console.width))
    bots = table.bots
    h2h = Table("vs", *bots, title="head to head (row's score against column: wins, ties half)")
    for bot in bots:
        pairings = [table.pairing(bot, other) for other in bots]
        cells = [f"{p.score:.2f}" if p is not None else "-" for p in pairings]
        h2h.add_row(bot, *cells)
    console.print(h2h)


# Each column: header, and how a standings row shows in it; the compact view (`tournament watch`,
# beside a progress bar, or a narrow terminal) keeps the ones marked True.
_COLUMNS: tuple[tuple[str, bool, Callable[[Standing], str]], ...] = (
    ("#", True, lambda r: str(r.rank)),
    ("bot", True, lambda r: str(r.bot)),
    ("rating", True, lambda r: f"{r.ordinal:.2f}"),
    ("mu +- sigma", False, lambda r: f"{r.mu:.2f} +- {r.sigma:.2f}"),
    ("matches", True, lambda r: str(r.matches)),
    ("wins", False, lambda r: f"{r.wins:g}"),
    ("win rate [95%]", True, lambda r: f"{r.win_rate:.2f} [{r.win_low:.2f}-{r.win_high:.2f}]"),
    ("points", True, lambda r: f"{r.points_per_match:.0f}"),
    ("hands won", False, lambda r: str(r.hands_won)),
    ("faults", True, lambda r: f"{r.timeouts}/{r.illegal}/{r.disconnects}/{r.bot_errors}/{r.forfeits}"),
)
_CAPTION = (
    "rating: OpenSkill's mu - 3 sigma, which ranks; win rate: its 95% interval in brackets; "
    "points: per match; faults: timeouts/illegal/disconnects/bot errors/forfeits"
)


def standings_table(table: board.Table, title: str, compact: bool = False, width: int = 0) -> Table:
    """The standings; compact if asked, or if the full table would not fit in `width` columns."""
    shown = _standings(table, title, compact)
    if compact or not width:
        return shown
    unbounded = Console(width=10_000)
    natural = Measurement.get(unbounded, unbounded.options, shown).maximum
    return shown if natural <= width else _standings(table, title, compact=True)


def _standings(table: board.Table, title: str, compact: bool) -> Table:
    columns = [c for c in _COLUMNS if c[1] or not compact]
    standings = Table(*(header for header, _, _ in columns), title=title, caption=_CAPTION)
    for row in table.standings:
        standings.add_row(*(show(row) for _, _, show in columns))
    return standings
