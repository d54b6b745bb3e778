"""The installs from a user's side: the command line loads a command's module only when it runs, the
base commands need nothing of the platform, and a user's own `server.py`, `sdk.py` ... never stand in
for ours (`uno-arena demo` from such a folder is in test_demo.py; `.ci/base_install.py` installs the
base alone in a fresh venv and plays a match from it)."""

from __future__ import annotations

import importlib
import json
import os
import selectors
import signal
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import click
import pytest

from tests.conftest import USER_MODULES, RunningServer
from tests.records.test_replay import forfeited_match
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import control
from uno_arena.cli.main import BOT_COMMANDS, COMMANDS, PLATFORM_MODULES, cli
from uno_arena.records.replay import write_replay_file
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb

# the README's bot
MY_BOT = """\
from uno_arena.sdk import Action, Bot, Observation


class MyBot(Bot):
    def decide(self, observation: Observation) -> Action:
        plays = observation.legal.plays(uno=True) or observation.legal.plays()
        return plays[0] if plays else observation.legal.safe_default()
"""


@pytest.mark.parametrize(
    ("group", "name"), [*((cli, n) for n in COMMANDS), *((cli.commands.get("bot"), n) for n in BOT_COMMANDS)]
)
def test_each_listed_help_is_the_commands_own(group: click.Group | None, name: str) -> None:
    """`--help` lists commands from a table, without importing them: it must say what they say."""
    assert group is not None
    lazy = (COMMANDS if group is cli else BOT_COMMANDS)[name]
    command = getattr(importlib.import_module(lazy.module), lazy.attribute)
    assert command.name == name
    assert click.Command(name, help=lazy.help).get_short_help_str(1000) == command.get_short_help_str(1000)


def test_the_bot_authors_commands_import_nothing_of_the_platform() -> None:
    """What the base install offers runs without importing a module of the `server` extra."""
    platform = sorted(PLATFORM_MODULES - {"grpc_health", "grpc_reflection"})  # grpc imports those if there
    script = textwrap.dedent(f"""
        import sys
        from uno_arena.cli.main import cli
        for args in (["--help"], ["bot", "--help"], ["bot", "run", "--help"], ["match", "play", "--help"],
                     ["rules", "show"], ["rules", "simulate", "-p", "2", "-n", "1"]):
            try:
                cli(args, prog_name="uno-arena")
            except SystemExit as done:
                assert done.code == 0, (args, done.code)
        import uno_arena.cli.bot_commands, uno_arena.cli.match_commands, uno_arena.sdk.examples.strong_bot
        loaded = sorted(m for m in sys.modules if m.partition(".")[0] in {platform!r})
        assert not loaded, loaded
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in (*COMMANDS, *BOT_COMMANDS):  # every command is listed
        assert f"\n  {name} " in done.stdout


def test_the_user_modules_fail_loudly(user_folder: Path) -> None:
    """The folder the tests below run in: importing any of its modules fails, so none was imported."""
    for name in USER_MODULES:
        done = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=user_folder, capture_output=True,
                              text=True, timeout=30)  # fmt: skip
        assert done.returncode != 0 and f"shadowed: this is the user's own {name}.py" in done.stderr


def test_bot_run_from_a_folder_with_a_server_py_and_an_sdk_py(
    match_server: RunningServer, user_folder: Path
) -> None:
    """The user's bot file beside their own `server.py`, `sdk.py` ...: the real command plays a match."""
    (user_folder / "my_bot.py").write_text(MY_BOT)
    partner = BackgroundBot(GreedyBot(), match_server.address, "partner", match_server.register("partner"))
    partner.wait_connected()
    env = {**os.environ, "UNO_ARENA_BOT_TOKEN": match_server.register("mine"),
           "PYTHONPATH": str(user_folder)}  # fmt: skip
    command = [sys.executable, "-m", "uno_arena.cli", "bot", "run", "my_bot.py:MyBot", "--name", "mine",
               "--server", match_server.address]  # fmt: skip
    process = subprocess.Popen(command, env=env, cwd=user_folder, stderr=subprocess.PIPE, text=True)
    try:
        stub, metadata = control(match_server.address, match_server.control_token)
        request = control_pb2.PlayMatchRequest(
            match_id="user-folder",
            bots=["mine", "partner"],
            seed=5,
            rules=pb.RulesConfig(target_score=100),
            wait_for_bots_ms=60_000,  # the server waits for the bot to connect
        )
        progress = list(stub.PlayMatch(request, metadata=metadata, timeout=120))
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
    finally:
        process.kill()
        stderr = process.communicate()[1]
        partner.stop()
    finished = progress[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED, stderr
    assert list(finished.result.faults) == [0, 0] and not finished.result.forfeited
    assert "shadowed" not in stderr and "mine stopped" in stderr


def not_installed(folder: Path, *names: str) -> dict[str, str]:
    """An environment in which importing any of `names` fails as if it were not installed, and leaves a
    mark in `folder` (so an import that something caught is seen too); and no Redis URL."""
    for name in names:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(
            f"open({str(folder / f'{name}.imported')!r}, 'w').close()\n"
            f"raise ModuleNotFoundError({f'No module named {name!r}'!r}, name={name!r})\n"
        )
    environment = {k: v for k, v in os.environ.items() if k not in ("UNO_ARENA_REDIS_URL", "PYTHONPATH")}
    return {**environment, "PYTHONPATH": str(folder)}


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_web_serves_replay_files_without_redis(tmp_path: Path) -> None:
    """`uno-arena web --replays DIR` with no Redis URL needs Flask and waitress only: with redis, rq,
    openskill and prometheus-client not importable, it serves an index of the files and each one's
    viewer, and its /healthz."""
    folder = tmp_path / "replays"
    match = forfeited_match(players=2)  # f-m00001, of tournament f: alice and bob, alice wins
    write_replay_file(match, folder)
    (folder / "broken.json").write_text("not json")
    environment = not_installed(tmp_path / "site", "redis", "rq", "openskill", "prometheus_client")
    command = [
        sys.executable,
        "-m",
        "uno_arena.cli",
        "web",
        "--listen",
        "127.0.0.1:0",
        "--replays",
        str(folder),
    ]
    process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)  # fmt: skip
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=30)
        line = process.stdout.readline() if ready else ""
        assert line.startswith(f"replay files of {folder} at http://127.0.0.1:"), line
        url = line.split(" at ", 1)[1].split()[0]
        code, index = fetch(url)
        assert code == 200 and 'id="replays"' in index
        assert '<a href="/match/f-m00001">f-m00001</a>' in index and "alice, bob" in index
        assert '<a href="/match/broken">broken</a>' in index and "not a readable replay file" in index
        code, page = fetch(f"{url}match/f-m00001")
        assert code == 200 and '<span class="match-id">f-m00001</span>' in page
        assert '<dd id="winner">alice</dd>' in page and '<dd id="end-reason">forfeit</dd>' in page
        assert "/bot/" not in page and "/tournament/" not in page  # Redis's pages are not served
        code, raw = fetch(f"{url}match/f-m00001.json")
        assert code == 200 and json.loads(raw)["summary"]["bots"] == ["alice", "bob"]
        assert fetch(f"{url}match/nothing")[0] == 404 and fetch(f"{url}tournament/f")[0] == 404
        assert fetch(f"{url}static/viewer.js")[0] == 200
        code, health = fetch(f"{url}healthz")  # healthy without Redis; no metrics without the platform
        assert code == 200 and json.loads(health) == {"status": "ok", "redis": "not used"}
        assert fetch(f"{url}metrics")[0] == 404
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
    assert not list((tmp_path / "site").glob("*.imported")), stderr  # nothing even tried to import them
    assert process.returncode == 0, stderr  # Ctrl-C stops it cleanly


@pytest.mark.parametrize(
    ("missing", "flags", "says"),
    [
        (("flask", "waitress"), ("--replays", "."), " web --replays needs Flask and waitress: "
                                                    "pip install 'uno-arena[replays]'"),
        (("redis", "rq", "openskill"), ("--replays", ".", "--redis-url", "redis://127.0.0.1:1/0"),
         " web needs the platform: pip install 'uno-arena[server]'"),
    ],
)  # fmt: skip
def test_web_says_what_to_install(tmp_path: Path, missing: tuple[str, ...], flags: tuple[str, ...],
                                  says: str) -> None:  # fmt: skip
    """Replay files alone need Flask and waitress; with a Redis URL (or without --replays), the platform."""
    command = [sys.executable, "-m", "uno_arena.cli", "web", "--listen", "127.0.0.1:0", *flags]
    done = subprocess.run(command, env=not_installed(tmp_path / "site", *missing), cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1 and says in done.stderr, done.stdout + done.stderr
