"""`uno-arena`: the command group. Each noun's commands live in their own module."""

from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError, version

import click

from uno_arena.cli.bot_commands import run as bot_run
from uno_arena.cli.demo_commands import demo
from uno_arena.cli.leaderboard_commands import leaderboard
from uno_arena.cli.match_commands import match
from uno_arena.cli.replay_commands import replay
from uno_arena.cli.rules_commands import rules
from uno_arena.cli.server_commands import bot, control_token, server_command
from uno_arena.cli.tournament_commands import tournament
from uno_arena.cli.web_commands import web
from uno_arena.cli.worker_commands import worker


def _version() -> str:
    try:
        return version("uno-arena")
    except PackageNotFoundError:
        return "unknown (not installed)"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), prog_name="uno-arena")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """UNO bot tournaments under the official rules."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


for command in (
    rules,
    server_command,
    bot,
    control_token,
    match,
    tournament,
    worker,
    replay,
    leaderboard,
    demo,
    web,
):
    cli.add_command(command)
bot.add_command(bot_run)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
