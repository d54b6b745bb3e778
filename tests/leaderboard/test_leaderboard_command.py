"""`uno-arena leaderboard TOURNAMENT`: an unknown or malformed id is an error, never an empty table."""

from __future__ import annotations

import json

import redis
from click.testing import CliRunner, Result

from tests.workers.harness import REDIS_URL
from uno_arena.cli.main import cli
from uno_arena.leaderboard import board
from uno_arena.records import identity
from uno_arena.records.spec import spec_from_dict
from uno_arena.workers import lifecycle


def leaderboard(prefix: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["leaderboard", "--redis-url", REDIS_URL, "--key-prefix", prefix, *args])


def test_unknown_and_malformed_tournaments_are_errors(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    for bot in ("alpha", "beta"):
        identity.register_bot(client, prefix, bot)
    cup = lifecycle.create_checked(client, prefix, spec_from_dict({"name": "cup", "bots": ["alpha", "beta"]}))
    keys_before = set(client.scan_iter(match=f"{prefix}:*"))  # SCAN may return a key twice

    for args, message in [(["nope"], "no tournament 'nope'"), (["nope", "--json"], "no tournament 'nope'"),
                          (["nope", "--refresh"], "no tournament 'nope'"),
                          ([f"{cup}:state"], f"bad tournament id '{cup}:state'")]:  # fmt: skip
        result = leaderboard(prefix, *args)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (args, result.output)
        assert message in result.output
    assert set(client.scan_iter(match=f"{prefix}:*")) == keys_before  # no table stored for them

    assert leaderboard(prefix, cup).exit_code == 0
    overall = leaderboard(prefix, board.ALL, "--json")  # `all` is every tournament, as with no id
    assert overall.exit_code == 0 and overall.output == leaderboard(prefix, "--json").output


def test_a_tournaments_rules_are_in_its_leaderboard_and_status(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    for bot in ("alpha", "beta"):
        identity.register_bot(client, prefix, bot)
    rules = {"seven_zero": True, "stacking": True, "uno_penalty": 4}
    cup = lifecycle.create_checked(client, prefix, spec_from_dict({"name": "cup", "bots": ["alpha", "beta"],
                                                                    "rules": rules}))  # fmt: skip
    said = "house rules: stacking, seven_zero; options: uno_penalty=4"
    shown = CliRunner().invoke(cli, ["leaderboard", "--redis-url", REDIS_URL, "--key-prefix", prefix, cup],
                               env={"COLUMNS": "200"})  # fmt: skip
    assert shown.exit_code == 0 and f"{cup} was played under {said}" in shown.output, shown.output
    as_json = json.loads(leaderboard(prefix, cup, "--json").output)
    assert as_json["rules"] == {"house_rules": ["stacking", "seven_zero"], "options": {"uno_penalty": 4},
                                "summary": said}  # fmt: skip
    assert "rules" not in json.loads(leaderboard(prefix, "--json").output)  # every tournament: no one set
    assert "played under" not in leaderboard(prefix).output
    for command in (["status", cup], ["list"]):
        args = ["tournament", *command, "--redis-url", REDIS_URL, "--key-prefix", prefix]
        result = CliRunner().invoke(cli, args, env={"COLUMNS": "250"})
        assert result.exit_code == 0 and said in result.output, result.output
