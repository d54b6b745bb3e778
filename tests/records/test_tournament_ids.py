"""Tournament ids: they become part of Redis keys, so a bad one is refused before anything is written,
generated ones are always good, and one an older version stored (any text) never crashes a listing."""

from __future__ import annotations

import json
import logging
import time

import pytest
import redis
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from tests.workers.harness import REDIS_URL
from uno_arena.cli.main import cli
from uno_arena.records import identity
from uno_arena.records.spec import TournamentSpec, spec_from_dict
from uno_arena.records.tournament import (
    Keys,
    MatchState,
    TournamentError,
    check_exists,
    is_match_id,
    is_valid_id,
    list_ids,
    load,
    new_tournament_id,
    states,
)
from uno_arena.workers import lifecycle

BOTS = ["alpha", "beta", "gamma"]
FLAGS = ["--name", "cup", "--bots", ",".join(BOTS)]
BAD_IDS = ["base:state", "base:lease:0", "", "all", "a b", "x/y", "-lead", ".hidden", "base\n", "ü", "a" * 64]


def spec() -> TournamentSpec:
    return spec_from_dict({"name": "cup", "bots": BOTS})


def registered(client: redis.Redis, prefix: str) -> None:
    for bot in BOTS:
        identity.register_bot(client, prefix, bot)


def snapshot(client: redis.Redis, prefix: str) -> dict[str, object]:
    """Every key under the prefix (bots and the index included) with its contents."""
    found: dict[str, object] = {}
    for key in sorted(client.scan_iter(match=f"{prefix}:*", count=1000)):
        kind = client.type(key)
        if kind == b"hash":
            found[key.decode()] = client.hgetall(key)
        elif kind == b"zset":
            found[key.decode()] = client.zrange(key, 0, -1)
        else:
            found[key.decode()] = kind
    return found


def create_as_an_older_version(client: redis.Redis, prefix: str, tournament_id: str) -> None:
    """What `create` wrote before ids were checked, for any id: `base:state` lands in base's state hash."""
    keys, now = Keys(prefix, tournament_id), time.time()
    client.hsetnx(keys.tournament, "spec", json.dumps(spec().to_dict()))
    client.hset(keys.tournament, mapping={"status": "created", "matches": 3, "done": 0, "created": now})
    client.hset(keys.state, mapping={i: MatchState.SCHEDULED.value for i in range(3)})
    client.zadd(keys.index, {tournament_id: now})


def invoke(prefix: str, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args[:2], "--redis-url", REDIS_URL, "--key-prefix", prefix, *args[2:]])


@pytest.mark.parametrize("bad", BAD_IDS)
def test_create_refuses_a_bad_id_and_writes_nothing(redis_prefix: tuple[redis.Redis, str], bad: str) -> None:
    client, prefix = redis_prefix
    registered(client, prefix)
    base = lifecycle.create_checked(client, prefix, spec(), "base")
    before = snapshot(client, prefix)
    with pytest.raises(TournamentError, match="bad tournament id"):
        lifecycle.create_checked(client, prefix, spec(), bad)
    assert snapshot(client, prefix) == before  # base's state, schedule and the index untouched
    assert list_ids(client, prefix) == [base]
    assert set(states(client, prefix, base).values()) == {MatchState.SCHEDULED}


def test_the_cli_refuses_id_base_state_and_base_is_untouched(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    registered(client, prefix)
    assert invoke(prefix, "tournament", "create", *FLAGS, "--id", "base").exit_code == 0
    before = snapshot(client, prefix)
    result = invoke(prefix, "tournament", "create", *FLAGS, "--id", "base:state")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # an error, not a crash
    assert "bad tournament id 'base:state'" in result.output
    assert snapshot(client, prefix) == before
    listing = invoke(prefix, "tournament", "list")
    assert listing.exit_code == 0 and "base" in listing.output


@given(st.text(max_size=100))
def test_generated_ids_are_always_valid(name: str) -> None:
    generated = new_tournament_id(name)
    assert is_valid_id(generated) and generated != new_tournament_id(name)  # a random suffix


def test_an_id_made_from_an_unchecked_name_is_valid(redis_prefix: tuple[redis.Redis, str]) -> None:
    """A spec made in code skips the name check; the generated id is good anyway."""
    client, prefix = redis_prefix
    registered(client, prefix)
    unchecked = TournamentSpec(name="__ Cup: 2024/1 __", bots=tuple(BOTS))
    made = lifecycle.create_checked(client, prefix, unchecked)
    assert made.startswith("Cup--2024-1-__-") and list_ids(client, prefix) == [made]


def test_an_id_stored_by_an_older_version_is_skipped_with_a_warning(
    redis_prefix: tuple[redis.Redis, str], caplog: pytest.LogCaptureFixture
) -> None:
    client, prefix = redis_prefix
    create_as_an_older_version(client, prefix, "base")
    create_as_an_older_version(client, prefix, "base:state")  # its fields land in base's state hash
    with caplog.at_level(logging.WARNING, "uno_arena.records.tournament"):
        assert list_ids(client, prefix) == ["base"]
        assert list_ids(client, prefix) == ["base"]
        base = load(client, prefix, "base")  # reads past the fields `base:state` wrote into its states
    assert base.states == {MatchState.SCHEDULED: 3} and base.matches == 3
    assert states(client, prefix, "base") == dict.fromkeys(range(3), MatchState.SCHEDULED)
    skipped = [r.getMessage() for r in caplog.records if "skipping tournament 'base:state'" in r.getMessage()]
    assert len(skipped) == 1  # once, not on every refresh of a page

    listing = invoke(prefix, "tournament", "list")
    assert listing.exit_code == 0, listing.output
    assert "base" in listing.output and "base:state" not in listing.output


@pytest.mark.parametrize("command", ["status", "start", "cancel", "resume", "rerun-failed", "watch"])
def test_id_commands_refuse_unknown_and_bad_ids(redis_prefix: tuple[redis.Redis, str], command: str) -> None:
    client, prefix = redis_prefix
    registered(client, prefix)
    base = lifecycle.create_checked(client, prefix, spec(), "base")
    client.set(Keys(prefix, base).lease(0), "a worker")  # a string key where a malformed id would look
    before = snapshot(client, prefix)
    refusals = {"nope": "no tournament 'nope'", "base:lease:0": "bad tournament id 'base:lease:0'",
                "base:schedule": "bad tournament id 'base:schedule'"}  # fmt: skip
    for bad, message in refusals.items():
        result = invoke(prefix, "tournament", command, bad)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (bad, result.exception)
        assert message in result.output
    assert snapshot(client, prefix) == before


def test_check_exists(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    registered(client, prefix)
    base = lifecycle.create_checked(client, prefix, spec(), "base")
    assert check_exists(client, prefix, base) == base
    with pytest.raises(TournamentError, match="no tournament 'nope'"):
        check_exists(client, prefix, "nope")
    with pytest.raises(TournamentError, match="bad tournament id 'base:state'"):
        check_exists(client, prefix, "base:state")


def test_match_ids() -> None:
    assert is_match_id(Keys("p", "cup-1a2b3c").match_id(7)) and is_match_id("a-m123456")
    arabic_one = "\u0661"  # a digit to str.isdigit, not to a match index
    bad_ids = ["cup", "cup-m", "cup-mx", "cup-m1 ", "base:state-m00001", "all-m00001", "-m1",
               f"cup-m{arabic_one}"]  # fmt: skip
    for bad in bad_ids:
        assert not is_match_id(bad), bad
