"""`uno-arena leaderboard [TOURNAMENT]`: the standings, as a table, JSON or CSV."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, fields

import click
from rich.console import Console
from rich.table import Table

from uno_arena.cli.options import connect, with_redis
from uno_arena.cli.tables import Column, fitted, print_fitted, wide_option
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
@wide_option
@with_redis
def leaderboard(tournament_id: str | None, as_json: bool, as_csv: bool, refresh: bool, wide: bool,
                redis_url: str, key_prefix: str) -> None:  # fmt: skip
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
        try:
            table = board.rebuild(client, key_prefix, scope)
        except TournamentError as error:  # deleted since it was checked
            raise click.ClickException(str(error)) from None
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
        print_leaderboard(Console(), table, tournament_id or "all tournaments", rules, wide)


def print_leaderboard(
    console: Console, table: board.Table, title: str, rules: RulesConfig | None = None, wide: bool = False
) -> None:
    """The standings and head to head, fitted to the console (every column with `wide`); `rules`, a
    tournament's, are said under the heading."""
    heading = f"leaderboard: {title}, {plural(table.matches, 'match')}"
    if rules is not None:
        console.print(f"{title} was played under {ruleset.summary(rules)}", highlight=False)
    print_fitted(console, _STANDING_COLUMNS, _standing_rows(table), wide, title=heading, caption=_CAPTION)
    bots = table.bots
    # a column per opponent: the later ones are left out first (their rows stay)
    columns = [Column("vs", whole=True), *(Column(bot, drop=1 + i, whole=True, justify="right")
                                           for i, bot in enumerate(bots))]  # fmt: skip
    rows = []
    for bot in bots:
        pairings = [table.pairing(bot, other) for other in bots]
        rows.append([bot, *(f"{p.score:.2f}" if p is not None else "-" for p in pairings)])
    print_fitted(console, columns, rows, wide, title="head to head (row's score against column: wins, ties "
                 "half)", what="head to head: ")  # fmt: skip


# Each column of the standings: how it is shown, and (`drop`) how soon it is left out where space runs
# short; the compact view (`tournament watch`, beside a progress bar) keeps those under _COMPACT.
_STANDINGS: tuple[tuple[Column, Callable[[Standing], str]], ...] = (
    (Column("#", whole=True, justify="right"), lambda r: str(r.rank)),
    (Column("bot", whole=True), lambda r: str(r.bot)),
    (Column("rating", whole=True, justify="right"), lambda r: f"{r.ordinal:.2f}"),
    (Column("mu +- sigma", drop=7, whole=True), lambda r: f"{r.mu:.2f} +- {r.sigma:.2f}"),
    (Column("matches", drop=2, whole=True, justify="right"), lambda r: str(r.matches)),
    (Column("wins", drop=8, whole=True, justify="right"), lambda r: f"{r.wins:g}"),
    (
        Column("win rate [95%]", drop=5, whole=True),
        lambda r: f"{r.win_rate:.2f} [{r.win_low:.2f}-{r.win_high:.2f}]",
    ),
    (Column("points", drop=4, whole=True, justify="right"), lambda r: f"{r.points_per_match:.0f}"),
    (Column("hands won", drop=9, whole=True, justify="right"), lambda r: str(r.hands_won)),
    (
        Column("faults", drop=3, whole=True),
        lambda r: f"{r.timeouts}/{r.illegal}/{r.disconnects}/{r.bot_errors}/{r.forfeits}",
    ),
)
_STANDING_COLUMNS = tuple(column for column, _ in _STANDINGS)
_COMPACT = 7
_CAPTION = (
    "rating: OpenSkill's mu - 3 sigma, which ranks; win rate: its 95% interval in brackets; "
    "points: per match; faults: timeouts/illegal/disconnects/bot errors/forfeits"
)


def _standing_rows(table: board.Table, columns: tuple[int, ...] | None = None) -> list[list[str]]:
    return [[show(row) for i, (_, show) in enumerate(_STANDINGS) if columns is None or i in columns]
            for row in table.standings]  # fmt: skip


def standings_table(table: board.Table, title: str, compact: bool = False, width: int | None = None) -> Table:
    """The standings (compact: the columns `tournament watch` shows), fitted to `width` if given."""
    kept = tuple(i for i, (c, _) in enumerate(_STANDINGS) if not compact or c.drop < _COMPACT)
    columns = [_STANDINGS[i][0] for i in kept]
    shown, _ = fitted(columns, _standing_rows(table, kept), width, title=title, caption=_CAPTION)
    return (
        shown
        or fitted(columns, _standing_rows(table, kept), None, title=title, caption=_CAPTION)[0]
        or Table()
    )
