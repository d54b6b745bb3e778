"""`uno-arena bot run`: run any Bot subclass against a match server."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TextIO

import click

from uno_arena.cli.options import server_option, tls_options
from uno_arena.cli.words import plural
from uno_arena.sdk import Bot, BotRefused, BotReplaced, ClientSettings, ClientTLS, PoolClient, TLSError
from uno_arena.sdk._bot_errors import raised


def load_bot_class(target: str) -> type[Bot]:
    """`path/to/file.py:ClassName` or `package.module:ClassName` -> the class."""
    where, sep, class_name = target.rpartition(":")
    if not sep or not where or not class_name:
        raise click.BadParameter(
            "expected path/to/file.py:ClassName or package.module:ClassName", param_hint="BOT"
        )
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise click.BadParameter(f"no such file: {path}", param_hint="BOT")
        # A private name: a bot file called asyncio.py or random.py must not replace the standard module.
        # It is in sys.modules before it runs, so dataclasses and pickle can find it by that name.
        module_name = f"uno_arena_bot_{path.stem}"
        copies = 1
        while module_name in sys.modules:  # another bot file of the same name, loaded before
            copies += 1
            module_name = f"uno_arena_bot_{path.stem}_{copies}"
        # Its folder goes last on the path, as `python file.py` would put it first: modules beside the
        # bot (`from helper import pick`) load, and none of them shadows the standard library.
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.append(folder)
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            del sys.modules[module_name]
            raise click.BadParameter(f"cannot load {path}: {raised(error)}", param_hint="BOT") from None
        except BaseException:
            del sys.modules[module_name]
            raise
    else:
        # As `python -m` does: a module in the current folder loads (a console script leaves it off the path).
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(where)
        except ImportError as error:
            missing = getattr(error, "name", None)
            hint = ""
            if missing is not None and (where == missing or where.startswith(f"{missing}.")):
                hint = " (run from the folder that holds it, or give path/to/file.py:ClassName)"
            raise click.BadParameter(
                f"cannot import module {where!r}: {error}{hint}", param_hint="BOT"
            ) from None
        except Exception as error:  # the bot's module itself failed: a syntax error, a raise at import
            raise click.BadParameter(
                f"cannot import module {where!r}: {raised(error)}", param_hint="BOT"
            ) from None
    found = getattr(module, class_name, None)
    if found is None:
        raise click.BadParameter(f"no {class_name} in {where}", param_hint="BOT")
    if not (isinstance(found, type) and issubclass(found, Bot)):
        raise click.BadParameter(
            f"{class_name} in {where} is not a subclass of uno_arena.sdk.Bot", param_hint="BOT"
        )
    if found.decide is Bot.decide:
        raise click.BadParameter(f"{class_name} does not define decide(observation)", param_hint="BOT")
    return found


@click.command("run")
@click.argument("target", metavar="BOT")
@click.option("--name", required=True, help="The registered bot name.")
@click.option(
    "--token", envvar="UNO_ARENA_BOT_TOKEN", required=True, help="The bot's token (env UNO_ARENA_BOT_TOKEN)."
)
@server_option("Match server HOST:PORT, or several: HOST:PORT,HOST:PORT")
@tls_options
@click.option(
    "--max-matches",
    type=click.IntRange(1),
    default=4,
    show_default=True,
    help="Matches played at once on each server.",
)
@click.option("--pool/--no-pool", "follow_pool", default=True, show_default=True,
              help="Connect to every server of the pool the --server belongs to (the servers tell which), "
                   "or to the --server addresses only.")  # fmt: skip
def run(target: str, name: str, token: str, server: str, tls: ClientTLS, max_matches: int,
        follow_pool: bool) -> None:  # fmt: skip
    """Run BOT (file.py:ClassName or module:ClassName) until Ctrl-C, which finishes its matches first.

    BOT is path/to/file.py:ClassName or package.module:ClassName (a module in the current folder
    loads too). The bot reconnects by itself if the server restarts.

    The bot keeps a connection to every server of the pool (docs/scale.md) its --server belongs to,
    which for a lone server is that one: tournaments on the pool can place its matches on any of them.
    --no-pool connects to the --server addresses only.

    A server off this machine is reached with TLS: --tls (a certificate from a public CA) or --tls-ca
    FILE (a private CA); the token is never sent in clear there unless --insecure says so.

    Ctrl-C (or SIGTERM) drains: the server gives the bot no new match, the running ones are played
    to their end, then it exits 0. A second Ctrl-C stops at once: the running matches are forfeited
    (exit status 1 if there were any).
    """
    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    bot_class = load_bot_class(target)
    try:
        bot = bot_class()
    except Exception as error:
        message = f"cannot create {bot_class.__name__}(): {raised(error)}"
        raise click.BadParameter(message, param_hint="BOT") from None
    settings = ClientSettings(max_matches=max_matches)
    try:
        client = PoolClient(bot, server, name, token, settings, tls, follow_pool=follow_pool)
    except TLSError as error:  # refused before connecting: plaintext off this machine, or a bad file
        raise click.ClickException(str(error)) from None
    except ValueError as error:  # no address in --server
        raise click.BadParameter(str(error), param_hint="'--server'") from None
    abandoned: list[int] = []  # the running matches a second Ctrl-C left behind

    def on_signal(signum: signal.Signals) -> None:
        # Act first, then say so: a message that cannot be written (a closed pipe) must not lose the
        # signal (asyncio only logs what a signal callback raises, to that same closed pipe).
        running = client.running_matches
        if not client.draining:
            client.drain(signum.name)
            _say(
                f"draining: finishing {_matches(running)} (Ctrl-C again to stop now: "
                f"{'it' if running == 1 else 'they'} will be forfeited)"
            )
        else:
            abandoned.append(running)
            client.stop()
            _say("stopping now" + (f": {_matches(running)} will be forfeited" if running else ""))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, on_signal, signum)
        await client.run()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:  # a Ctrl-C before the handlers were in place (the bot was not connected)
        abandoned.append(client.running_matches)
    except BotReplaced as replaced:  # two copies of one bot would otherwise replace each other forever
        raise click.ClickException(str(replaced)) from None
    except BotRefused as refused:
        raise click.ClickException(f"the server refused {name!r}: {refused}") from None
    finally:
        _flush_stdout()  # the bot's own prints: a closed pipe must not turn the exit into an error
    if abandoned and abandoned[-1]:
        _say(f"{name} stopped: {_matches(abandoned[-1])} forfeited")
        raise SystemExit(1)
    _say(f"{name} stopped" + (": its matches finished" if client.drained else ""))


def _matches(count: int) -> str:
    return plural(count, "running match")


def _say(message: str) -> None:
    """One line to stderr; if stderr is a closed pipe (`bot run ... 2>&1 | head`), stderr goes to devnull
    from then on, as the Python docs advise for a broken pipe, and the bot carries on quietly."""
    try:
        click.echo(message, err=True)
    except BrokenPipeError:
        _to_devnull(sys.stderr)


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _to_devnull(sys.stdout)


def _to_devnull(stream: TextIO) -> None:
    """Point `stream`'s file descriptor at devnull: its pending and later writes (log lines, the
    interpreter's flush at exit) succeed and vanish instead of failing with EPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)
