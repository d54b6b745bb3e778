"""`uno-arena leaderboard [TOURNAMENT]`: the standings, as a table, JSON or CSV."""

from __future__ import annotations

import csv
import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from cli.options import connect, with_redis
from leaderboard import board
from workers import recording

COLUMNS = ("rank", "bot", "ordinal", "mu", "sigma", "matches", "wins", "win_rate", "win_low", "win_high",
           "points_per_match", "hands_won", "timeouts", "illegal", "disconnects", "forfeits")  # fmt: skip


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
    then points per match, then name.
    """
    client = connect(redis_url)
    scope = tournament_id or board.ALL
    table = None if refresh else board.load(client, key_prefix, scope)
    if table is None:
        table = board.store(client, key_prefix, scope, recording.summaries(client, key_prefix, tournament_id))
    if as_json:
        click.echo(json.dumps(table, indent=1))
    elif as_csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(table["standings"])
    else:
        print_leaderboard(Console(), table, tournament_id or "all tournaments")


def print_leaderboard(console: Console, table: dict[str, Any], title: str) -> None:
    standings = Table("#", "bot", "rating (mu - 3 sigma)", "mu +- sigma", "matches", "wins", "win rate [95%]",
                      "points/match", "hands won", "faults (t/i/d/f)",
                      title=f"leaderboard: {title}, {table['matches']} matches")  # fmt: skip
    for row in table["standings"]:
        standings.add_row(str(row["rank"]), row["bot"], f"{row['ordinal']:.2f}",
                          f"{row['mu']:.2f} +- {row['sigma']:.2f}", str(row["matches"]), f"{row['wins']:g}",
                          f"{row['win_rate']:.3f} [{row['win_low']:.2f}, {row['win_high']:.2f}]",
                          f"{row['points_per_match']:.0f}", str(row["hands_won"]),
                          _faults(row))  # fmt: skip
    console.print(standings)
    bots = [row["bot"] for row in table["standings"]]
    h2h = Table("vs", *bots, title="head to head (row's score against column: wins, ties half)")
    for bot in bots:
        cells = [(f"{table['head_to_head'].get(bot, {})[o]['score']:.2f}"
                  if o in table["head_to_head"].get(bot, {}) else "-") for o in bots]  # fmt: skip
        h2h.add_row(bot, *cells)
    console.print(h2h)


def _faults(row: dict[str, Any]) -> str:
    return f"{row['timeouts']}/{row['illegal']}/{row['disconnects']}/{row['forfeits']}"
