"""`uno-arena server`, `uno-arena bot register|revoke|list`, `uno-arena control-token`."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from uno_arena.cli.log_format import log_format_option, say
from uno_arena.cli.main import INTERRUPTED
from uno_arena.cli.metrics import Address, metrics_option, serve_metrics
from uno_arena.cli.options import connect, dial, server_option, tls_options, with_redis
from uno_arena.cli.server_processes import passed_through, process_count, run_processes
from uno_arena.cli.tables import Column, json_option, print_fitted, wide_option
from uno_arena.records import identity
from uno_arena.records.pool import PoolError, check_pool_name
from uno_arena.server.app import serve
from uno_arena.server.metrics import ServerMetrics
from uno_arena.server.settings import ServerSettings, ServerTLS
from uno_arena.server.throttle import address_key
from uno_arena.v1 import DEFAULT_SERVER, control_pb2, control_pb2_grpc
from uno_arena.v1.channels import ClientTLS, TLSError

DEFAULTS = ServerSettings()
_PEM_FILE = click.Path(exists=True, dir_okay=False)


@click.command("server")
@log_format_option("server")
@click.option(
    "--listen",
    default=DEFAULT_SERVER,
    show_default=True,
    help="HOST:PORT to listen on; off loopback with --tls-cert/--tls-key (or --insecure).",
)
@with_redis
@click.option(
    "--decision-timeout-ms", type=click.IntRange(10), default=DEFAULTS.decision_timeout_ms, show_default=True
)
@click.option(
    "--max-message-bytes", type=click.IntRange(1024), default=DEFAULTS.max_message_bytes, show_default=True
)
@click.option(
    "--max-matches-per-bot", type=click.IntRange(1), default=DEFAULTS.max_matches_per_bot, show_default=True
)
@click.option("--max-strikes", type=click.IntRange(1), default=DEFAULTS.max_strikes, show_default=True)
@click.option(
    "--bot-errors-strike",
    is_flag=True,
    default=DEFAULTS.bot_errors_strike,
    help="A BOT_ERROR fault (a bot reports that its own code failed) counts a strike (default: not).",
)
@click.option(
    "--disconnect-grace-ms", type=click.IntRange(0), default=DEFAULTS.disconnect_grace_ms, show_default=True
)
@click.option(
    "--drain-timeout-ms", type=click.IntRange(0), default=DEFAULTS.drain_timeout_ms, show_default=True
)
@click.option("--max-spectators-per-match", type=click.IntRange(0), default=DEFAULTS.max_spectators_per_match,
              show_default=True, help="Spectate streams of one match at once; more are refused.")  # fmt: skip
@click.option("--max-spectators", type=click.IntRange(0), default=DEFAULTS.max_spectators, show_default=True,
              help="Spectate streams at once, all matches together; more are refused.")  # fmt: skip
@click.option("--trusted-proxy", "trusted_proxies", multiple=True, metavar="ADDRESS",
              help="A proxy (its IP address; repeat for more) whose x-forwarded-for metadata names the "
                   "client that failed Hellos and control tokens count against.")  # fmt: skip
@click.option(
    "--tls-cert",
    type=_PEM_FILE,
    metavar="FILE",
    help="Serve TLS with this certificate chain (PEM); re-read when the file changes, no restart.",
)
@click.option("--tls-key", type=_PEM_FILE, metavar="FILE", help="The certificate's private key (PEM).")
@click.option(
    "--tls-client-ca",
    type=_PEM_FILE,
    metavar="FILE",
    help="Require every client (bots too) to present a certificate this CA (PEM) signed.",
)
@click.option("--insecure", is_flag=True,
              help="Listen in plaintext on an address off this machine (tokens cross the network in clear; "
                   "loopback needs no TLS).")  # fmt: skip
@metrics_option("the server's metrics (bots connected, matches, decisions and their round trips, faults)")
@click.option("--pool", default=DEFAULTS.pool, show_default=True, envvar="UNO_ARENA_POOL", metavar="NAME",
              help="The pool of servers this one joins (env UNO_ARENA_POOL): a tournament whose spec says "
                   "pool = NAME places its matches on them; docs/scale.md.")  # fmt: skip
@click.option("--advertise", default="", metavar="HOST:PORT",
              help="The address workers and bots reach this server at, told them through the pool "
                   "(default: the --listen address; host 0.0.0.0 becomes this machine's name).")  # fmt: skip
@click.option("--processes", default="1", show_default=True, metavar="N|auto",
              help="Run N servers on this host, one process each, on the --listen port and the next ones "
                   "(port 0: each its own free port), all in the pool; auto: one per core.")  # fmt: skip
@click.option("--unix-socket", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Also listen on this Unix socket (plaintext, mode 0666): the way hosted bots reach the "
                   "server from their sandboxes (uno-arena runner, docs/hosting.md).")  # fmt: skip
def server_command(
    listen: str,
    redis_url: str,
    key_prefix: str,
    bot_errors_strike: bool,
    trusted_proxies: tuple[str, ...],
    tls_cert: str | None,
    tls_key: str | None,
    tls_client_ca: str | None,
    insecure: bool,
    metrics: Address | None,
    pool: str,
    advertise: str,
    processes: str,
    unix_socket: str | None,
    **limits: Any,
) -> None:
    """Run the match server until Ctrl-C: running matches finish first (Ctrl-C again: stop at once).

    Ctrl-C or SIGTERM: no new match starts (PlayMatch is refused with UNAVAILABLE), the running
    ones finish (up to --drain-timeout-ms), then the bots are told the server is stopping and it
    exits 0. A second Ctrl-C aborts the running matches and stops at once.

    Off loopback the server speaks TLS: --tls-cert FILE --tls-key FILE (renewed files are served to new
    connections without a restart), or plaintext behind a TLS-terminating proxy on 127.0.0.1
    (docs/deployment.md). Listening in plaintext elsewhere needs --insecure.

    Every server joins a pool (--pool, registered in Redis) that tournaments may play on, and tells its
    bots the pool's other servers. --processes N runs N of them here, one per core with `auto`; the
    first Ctrl-C drains them all, and the exit status is 0 when all stopped cleanly, 1 when one failed.
    """
    logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    count = process_count(processes)
    try:
        check_pool_name(pool)
    except PoolError as error:
        raise click.BadParameter(str(error), param_hint="'--pool'") from None
    checked = ((advertise, "--advertise"), (listen if count > 1 else "", "--listen"))
    for address, option in checked:  # a port 0 is taken: the port bound
        if address and not _host_and_port(address):
            raise click.BadParameter(f"{address!r}: expected HOST:PORT", param_hint=f"'{option}'")
    if count > 1 and advertise and listen.endswith(":0") and not advertise.endswith(":0"):
        raise click.BadParameter(f"{advertise!r}: with --listen port 0 each process picks its own port, so "
                                 "the advertised port must be 0 too (HOST:0)",
                                 param_hint="'--advertise'")  # fmt: skip
    if count > 1 and unix_socket is not None:
        raise click.UsageError("--unix-socket is for one server process: not with --processes")
    if count > 1:
        connect(redis_url).close()
        options = passed_through(click.get_current_context())
        raise SystemExit(run_processes(count, listen, advertise, redis_url, options, metrics))
    bad = [proxy for proxy in trusted_proxies if not address_key(proxy)]
    if bad:
        raise click.BadParameter(f"{bad[0]!r} is not an IP address", param_hint="'--trusted-proxy'")
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    if tls_client_ca is not None and tls_cert is None:
        raise click.UsageError("--tls-client-ca needs --tls-cert and --tls-key")
    if insecure and tls_cert is not None:
        raise click.UsageError("--insecure is for plaintext: not with --tls-cert")
    tls = ServerTLS(tls_cert, tls_key, tls_client_ca) if tls_cert and tls_key else None
    settings = ServerSettings(key_prefix=key_prefix, bot_errors_strike=bot_errors_strike, tls=tls,
                              insecure=insecure, trusted_proxies=trusted_proxies, pool=pool,
                              advertise=advertise, **limits)  # fmt: skip
    if unix_socket is not None:
        settings = dataclasses.replace(settings, unix_socket=str(Path(unix_socket).resolve()))
    connect(redis_url).close()
    server_metrics = ServerMetrics()
    if metrics is not None:
        say(f"metrics at {serve_metrics(metrics, server_metrics.registry)}")
    try:
        asyncio.run(serve(listen, redis_url, settings, server_metrics))
    except (OSError, TLSError) as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:  # before the server listened (after, Ctrl-C is handled by `serve`)
        say("interrupted before the server started", err=True)
        raise SystemExit(INTERRUPTED) from None


def _host_and_port(address: str) -> bool:
    host, _, port = address.rpartition(":")
    return bool(host) and port.isdigit() and int(port) < 65536


@click.command("register")
@click.argument("name")
@click.option(
    "--replace", is_flag=True, help="Issue a new token for an existing bot (the old one stops working)."
)
@with_redis
def register(name: str, replace: bool, redis_url: str, key_prefix: str) -> None:
    """Create bot NAME and print its token, once: only its hash is stored."""
    try:
        token = identity.register_bot(connect(redis_url), key_prefix, name, replace=replace)
    except identity.IdentityError as error:
        raise click.ClickException(str(error)) from None
    click.echo(token)
    click.echo(f"bot {name!r} registered; keep the token above secret (it is not stored)", err=True)
    if replace:
        click.echo(
            "the old token stops working: a server ends a connection using it within seconds", err=True
        )


@click.command("revoke")
@click.argument("name")
@with_redis
def revoke(name: str, redis_url: str, key_prefix: str) -> None:
    """Delete bot NAME: its token stops working and a server ends its live connection within seconds."""
    try:
        existed = identity.revoke_bot(connect(redis_url), key_prefix, name)
    except identity.IdentityError as error:
        raise click.ClickException(str(error)) from None
    if not existed:
        raise click.ClickException(f"bot {name!r} is not registered")
    click.echo(f"bot {name!r} revoked; a server ends its connection within seconds", err=True)


@click.command("list")
@server_option()
@tls_options
@click.option(
    "--control-token",
    envvar="UNO_ARENA_CONTROL_TOKEN",
    default=None,
    help="A control token (env UNO_ARENA_CONTROL_TOKEN), to ask the server who is connected.",
)
@wide_option
@json_option
@with_redis
def list_bots(server: str, tls: ClientTLS, control_token: str | None, wide: bool, as_json: bool,
              redis_url: str, key_prefix: str) -> None:  # fmt: skip
    """List the registered bots, and which are connected to the server and how many matches each plays."""
    registered = {bot.name: bot for bot in identity.registered_bots(connect(redis_url), key_prefix)}
    connected: dict[str, control_pb2.ConnectedBot] = {}
    if control_token is None:
        note = "connections not shown: no --control-token (env UNO_ARENA_CONTROL_TOKEN)"
    else:
        try:
            connected, note = {b.name: b for b in _connected_bots(server, tls, control_token)}, ""
        except click.ClickException as error:  # the registered bots are still worth listing
            note = f"connections not shown: {error.message}"
    if not registered and not connected:
        click.echo(f"no bots registered under {key_prefix!r} (uno-arena bot register NAME)", err=True)
    names = sorted({*registered, *connected})
    if as_json:
        click.echo(json.dumps([_bot_dict(name, registered.get(name), connected.get(name), bool(note))
                               for name in names], indent=1))  # fmt: skip
    else:
        rows = []
        for name in names:
            bot, live = registered.get(name), connected.get(name)
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(bot.created)) if bot else "no (revoked)"
            if live is not None:
                state = f"yes, {_duration(live.connected_seconds)}"
                matches = f"{live.active_matches}/{live.max_matches}"
            else:
                state, matches = ("?" if note else "no"), ""
            rows.append([name, when, state, matches, live.client if live is not None else ""])
        print_fitted(Console(), _BOT_COLUMNS, rows, wide, title=f"bots under {key_prefix!r}")
    if note:
        click.echo(note, err=True)


# The name is what every other command takes: always shown whole; the client's description goes first.
_BOT_COLUMNS = (
    Column("bot", whole=True),
    Column("registered (UTC)", whole=True, drop=2),
    Column("connected"),
    Column("matches", whole=True, drop=1),
    Column("client", drop=3),
)


def _bot_dict(name: str, bot: identity.RegisteredBot | None, live: control_pb2.ConnectedBot | None,
              unknown: bool) -> dict[str, Any]:  # fmt: skip
    """A bot as JSON: `connected` is null when the server was not asked (or could not answer)."""
    values: dict[str, Any] = {
        "bot": name,
        "registered": bot.created if bot else None,
        "connected": None if unknown and live is None else live is not None,
    }
    if live is not None:
        values.update(connected_seconds=live.connected_seconds, active_matches=live.active_matches,
                      max_matches=live.max_matches, client=live.client)  # fmt: skip
    return values


def _connected_bots(server: str, tls: ClientTLS, control_token: str) -> list[control_pb2.ConnectedBot]:
    with dial(server, tls) as channel:
        stub = control_pb2_grpc.ControlServiceStub(channel)
        metadata = [("authorization", f"Bearer {control_token}")]
        bots: list[control_pb2.ConnectedBot] = list(
            stub.ListBots(control_pb2.ListBotsRequest(), metadata=metadata, timeout=5).bots
        )
        return bots


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


@click.command("control-token")
@with_redis
def control_token(redis_url: str, key_prefix: str) -> None:
    """Create a control token (for workers and the CLI) and print it, once."""
    click.echo(identity.create_control_token(connect(redis_url), key_prefix))
