"""`uno-arena bot run` finding the bot's class, and `uno-arena match play` choosing its seed."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.conftest import RunningServer
from tests.sdk.runner import BackgroundBot
from uno_arena.cli.bot_commands import load_bot_class
from uno_arena.cli.main import cli
from uno_arena.rules.config import HOUSE_RULES
from uno_arena.sdk import Bot
from uno_arena.sdk.examples.greedy_bot import GreedyBot

COUNTER_BOT = """
import dataclasses
import pickle

from uno_arena.sdk import Action, Bot, Observation


@dataclasses.dataclass
class Tally:
    decisions: int = 0


class CounterBot(Bot):
    def __init__(self) -> None:
        self.tally = pickle.loads(pickle.dumps(Tally()))  # pickle finds the class through sys.modules

    def decide(self, observation: Observation) -> Action:
        self.tally.decisions += 1
        return observation.legal.safe_default()


class NotABot:
    pass
"""


@pytest.fixture
def forget_loaded_modules() -> Iterator[None]:
    """Each test loads its bot afresh; nothing it registered (modules, folders on the path) outlives it."""
    before, path = dict(sys.modules), list(sys.path)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - set(before):
        del sys.modules[name]
    sys.modules.update(before)


@pytest.fixture
def cwd_off_sys_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The console script's situation: run from the bot's folder, which is not on sys.path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    return tmp_path


@pytest.mark.usefixtures("forget_loaded_modules")
def test_module_form_loads_from_the_current_folder(cwd_off_sys_path: Path) -> None:
    (cwd_off_sys_path / "counter_bot_here.py").write_text(COUNTER_BOT)
    loaded = load_bot_class("counter_bot_here:CounterBot")
    assert loaded.__name__ == "CounterBot" and issubclass(loaded, Bot)
    assert loaded().tally.decisions == 0


@pytest.mark.usefixtures("forget_loaded_modules", "cwd_off_sys_path")
def test_a_missing_module_is_a_clear_error() -> None:
    with pytest.raises(click.BadParameter) as raised:
        load_bot_class("no_such_counter_bot:CounterBot")
    assert raised.value.message == (
        "cannot import module 'no_such_counter_bot': No module named 'no_such_counter_bot' "
        "(run from the folder that holds it, or give path/to/file.py:ClassName)"
    )


@pytest.mark.usefixtures("forget_loaded_modules")
def test_a_bot_whose_own_import_is_missing_names_that_import(cwd_off_sys_path: Path) -> None:
    (cwd_off_sys_path / "needs_a_package.py").write_text("import no_such_dependency_xyz\n")
    with pytest.raises(click.BadParameter) as raised:
        load_bot_class("needs_a_package:CounterBot")
    assert raised.value.message == (
        "cannot import module 'needs_a_package': No module named 'no_such_dependency_xyz'"
    )


@pytest.mark.usefixtures("forget_loaded_modules")
def test_a_bot_file_named_like_a_standard_module_does_not_replace_it(tmp_path: Path) -> None:
    standard_asyncio = sys.modules["asyncio"]
    bot_file = tmp_path / "asyncio.py"
    bot_file.write_text(COUNTER_BOT)
    loaded = load_bot_class(f"{bot_file}:CounterBot")
    assert sys.modules["asyncio"] is standard_asyncio is asyncio
    assert loaded.__module__ != "asyncio" and sys.modules[loaded.__module__].__file__ == str(bot_file)
    assert loaded().tally.decisions == 0  # the dataclass and pickle both found the module


@pytest.mark.usefixtures("forget_loaded_modules")
def test_two_bot_files_of_one_name_keep_their_own_modules(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "bot.py", tmp_path / "b" / "bot.py"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text(COUNTER_BOT)
    one, two = load_bot_class(f"{first}:CounterBot"), load_bot_class(f"{second}:CounterBot")
    assert one.__module__ != two.__module__
    assert one().tally.decisions == two().tally.decisions == 0


@pytest.mark.usefixtures("forget_loaded_modules")
def test_a_missing_class_and_a_class_that_is_not_a_bot_are_named(tmp_path: Path) -> None:
    bot_file = tmp_path / "counter_bot.py"
    bot_file.write_text(COUNTER_BOT)
    with pytest.raises(click.BadParameter) as missing:
        load_bot_class(f"{bot_file}:Nobody")
    assert missing.value.message == f"no Nobody in {bot_file}"
    with pytest.raises(click.BadParameter) as not_a_bot:
        load_bot_class(f"{bot_file}:NotABot")
    assert not_a_bot.value.message == f"NotABot in {bot_file} is not a subclass of uno_arena.sdk.Bot"


@pytest.mark.usefixtures("forget_loaded_modules")
def test_a_bot_file_imports_the_modules_beside_it(tmp_path: Path) -> None:
    (tmp_path / "split_helper.py").write_text("def pick(legal):\n    return legal.safe_default()\n")
    bot_file = tmp_path / "split_bot.py"
    bot_file.write_text(COUNTER_BOT.replace("import pickle", "import pickle\nfrom split_helper import pick"))
    assert load_bot_class(f"{bot_file}:CounterBot")().tally.decisions == 0
    assert sys.path[-1] == str(tmp_path)  # last: a helper named like a standard module shadows nothing


@pytest.mark.usefixtures("forget_loaded_modules")
@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("class X(\n", "SyntaxError: '(' was never closed (broken.py:1)"),
        (
            "import no_such_package_here\n",
            "ModuleNotFoundError: No module named 'no_such_package_here' (broken.py:1 in <module>)",
        ),
        ("x = 1\nraise RuntimeError('boom')\n", "RuntimeError: boom (broken.py:2 in <module>)"),
    ],
)
def test_a_bot_file_that_fails_to_load_is_one_line(tmp_path: Path, source: str, message: str) -> None:
    bot_file = tmp_path / "broken.py"
    bot_file.write_text(source)
    with pytest.raises(click.BadParameter) as failed:
        load_bot_class(f"{bot_file}:X")
    assert failed.value.message == f"cannot load {bot_file}: {message}"


@pytest.mark.usefixtures("forget_loaded_modules")
def test_a_bot_without_decide_is_refused_when_loaded(tmp_path: Path) -> None:
    bot_file = tmp_path / "lazy_bot.py"
    bot_file.write_text("from uno_arena.sdk import Bot\n\n\nclass LazyBot(Bot):\n    pass\n")
    with pytest.raises(click.BadParameter) as refused:
        load_bot_class(f"{bot_file}:LazyBot")
    assert refused.value.message == "LazyBot does not define decide(observation)"


def test_match_play_picks_a_fresh_seed_and_prints_it(match_server: RunningServer) -> None:
    bots = {name: BackgroundBot(GreedyBot(), match_server.address, name, match_server.register(name))
            for name in ("seeded-a", "seeded-b")}  # fmt: skip
    for bot in bots.values():
        bot.wait_connected()
    env = {"UNO_ARENA_CONTROL_TOKEN": match_server.control_token}
    command = ["match", "play", *bots, "--server", match_server.address, "--target", "30", "--no-replay"]
    seeds = []
    try:
        for extra in ([], [], ["--seed", "7"]):
            result = CliRunner().invoke(cli, [*command, *extra], env=env, catch_exceptions=False)
            assert result.exit_code == 0, result.output
            announced = re.search(
                r"^seed (\d+) \(play the same deal again with --seed \1\)$", result.output, re.M
            )
            assert announced is not None, result.output
            assert f"replay: seed {announced[1]}," in result.output  # the server played that seed
            seeds.append(int(announced[1]))
    finally:
        for bot in bots.values():
            bot.stop()
    assert seeds[0] != seeds[1]
    assert seeds[2] == 7


def test_match_play_prints_its_result_as_json(match_server: RunningServer) -> None:
    bots = {name: BackgroundBot(GreedyBot(), match_server.address, name, match_server.register(name))
            for name in ("json-a", "json-b")}  # fmt: skip
    for bot in bots.values():
        bot.wait_connected()
    env = {"UNO_ARENA_CONTROL_TOKEN": match_server.control_token, "COLUMNS": "80"}
    command = ["match", "play", *bots, "--server", match_server.address, "--target", "30", "--no-replay",
               "--seed", "5"]  # fmt: skip
    try:
        shown = CliRunner().invoke(cli, [*command, "--json"], env=env, catch_exceptions=False)
        wide = CliRunner().invoke(cli, [*command, "--wide"], env=env, catch_exceptions=False)
    finally:
        for bot in bots.values():
            bot.stop()
    assert shown.exit_code == 0, shown.output
    result = json.loads(shown.stdout)  # the seed line and the progress went to standard error
    assert result["seed"] == 5 and result["end"] == "target_reached" and result["replay"] is None
    assert [s["bot"] for s in result["seats"]] == ["json-a", "json-b"]
    assert sum(s["winner"] for s in result["seats"]) >= 1
    assert wide.exit_code == 0 and "faults" in wide.stdout, wide.output


def test_match_play_takes_rules_options(match_server: RunningServer, tmp_path: Path) -> None:
    """Every house rule by name, with an official option; the replay file and its text say them back."""
    bots = {name: BackgroundBot(GreedyBot(), match_server.address, name, match_server.register(name))
            for name in ("stacker-a", "stacker-b", "stacker-c")}  # fmt: skip
    for bot in bots.values():
        bot.wait_connected()
    env = {"UNO_ARENA_CONTROL_TOKEN": match_server.control_token}
    command = ["match", "play", *bots, "--server", match_server.address, "--target", "40",
               "--replay-dir", str(tmp_path)]  # fmt: skip
    try:
        refused = CliRunner().invoke(cli, [*command, "--rules", "target_score=9"], env=env)
        assert refused.exit_code == 2 and "--rules: target_score: set by --target" in refused.output
        played = CliRunner().invoke(cli, [*command, "--rules", f"{','.join(HOUSE_RULES)},hand_size=5"],
                                    env=env, catch_exceptions=False)  # fmt: skip
    finally:
        for bot in bots.values():
            bot.stop()
    assert played.exit_code == 0, played.output
    (replay,) = tmp_path.glob("*.json")
    rules = json.loads(replay.read_text())["finished"]["rules"]
    assert [rules[name] for name in HOUSE_RULES] == [True] * 4
    assert (rules["hand_size"], rules["target_score"]) == (5, 40)
    shown = CliRunner().invoke(cli, ["replay", str(replay)])
    assert shown.output.splitlines()[1] == (
        "rules: target 40; house rules: stacking, jump_in, seven_zero, multi_play; options: hand_size=5"
    )
