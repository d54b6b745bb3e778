"""Bad tournament specs are refused with a message naming the field."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import redis

from uno_arena.records import identity, tournament
from uno_arena.records.spec import DEFAULTS, SpecError, TournamentSpec, load_spec, spec_from_dict
from uno_arena.records.tournament import Keys, load
from uno_arena.rules import RulesConfig
from uno_arena.rules.config import MAX_PLAYERS, MIN_PLAYERS
from uno_arena.workers.lifecycle import check_bots
from uno_arena.workers.queue import retry

GOOD = {"name": "cup", "bots": ["a", "b", "c"]}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"bots": ["a"]}, "bots: too few bots"),
        ({"bots": ["a", "a", "b"]}, "bots: 'a' is listed twice"),
        ({"bots": ["a", "b c"]}, "bots: 'b c'"),
        ({"seats": 4}, "bots: too few bots (3) for 4 seats"),
        ({"seats": 11}, "seats: must be 2 to 10"),
        ({"seats": "2"}, "seats: expected an integer"),
        ({"cycles": 0}, "cycles: must be"),
        ({"target": 0}, "target: must be"),
        ({"name": ""}, "name:"),
        ({"server": "nowhere"}, "server: expected HOST:PORT"),
        ({"colour": "red"}, "colour: unknown field"),
        ({"rules": {"dealer": "sideways"}}, "rules.dealer: 'sideways' is not one of"),
        ({"rules": {"jump_in": "yes"}}, "rules.jump_in: expected bool, got 'yes'"),
        ({"rules": {"players": 3}}, "rules.players: set by the spec's `seats`"),
        ({"rules": {"hand_size": 40}, "seats": 3}, "rules.hand_size"),
        ({"deadlines": {"decision_ms": 0}}, "deadlines.decision_ms: must be"),
        ({"deadlines": {"think_ms": 5}}, "deadlines.think_ms: unknown field"),
        ({"retries": {"backoff_s": []}}, "retries.backoff_s"),
        (
            {"retries": {"attempts": 0}},
            "retries.attempts: counts tries, the first included: 1 is a single try",
        ),
        ({"retries": {"attempts": 102}}, "retries.attempts: must be 1 to 101"),
    ],
)
def test_bad_specs_name_the_field(change: dict[str, object], field: str) -> None:
    with pytest.raises(SpecError) as raised:
        spec_from_dict({**GOOD, **change})
    assert str(raised.value).startswith(field), str(raised.value)


def test_a_spec_of_a_name_and_bots_takes_every_default_from_the_dataclass_and_the_rules() -> None:
    """The defaults are written once: TournamentSpec's fields, the rules' target score and player limits."""
    assert spec_from_dict(GOOD) == replace(DEFAULTS, name="cup", bots=("a", "b", "c"))
    assert DEFAULTS.target == RulesConfig().target_score and DEFAULTS.seats == MIN_PLAYERS
    many = [f"b{n}" for n in range(MAX_PLAYERS + 1)]
    assert spec_from_dict({**GOOD, "bots": many, "seats": MAX_PLAYERS}).seats == MAX_PLAYERS
    too_many = f"^seats: must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {MAX_PLAYERS + 1}$"
    with pytest.raises(SpecError, match=too_many):
        spec_from_dict({**GOOD, "bots": many, "seats": MAX_PLAYERS + 1})


def test_required_fields() -> None:
    for missing in ("name", "bots"):
        with pytest.raises(SpecError, match=f"^{missing}: required"):
            spec_from_dict({k: v for k, v in GOOD.items() if k != missing})


def test_toml_with_defaults_and_flag_overrides(tmp_path: Path) -> None:
    path = tmp_path / "cup.toml"
    path.write_text('name = "cup"\nbots = ["a", "b", "c"]\nseed = 3\n[rules]\ndealer = "rotate_left"\n'
                    "[deadlines]\ndecision_ms = 500\n")  # fmt: skip
    spec = load_spec(path, {"cycles": 2, "seats": None})
    assert (spec.seats, spec.cycles, spec.target, spec.seed) == (2, 2, 500, 3)
    assert spec.rules.dealer.value == "rotate_left" and spec.rules.players == 2
    assert spec.deadlines.decision_ms == 500
    assert spec_from_dict(spec.to_dict()) == spec  # what Redis stores reads back the same


def test_every_house_rule_in_a_spec_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\nbots = ["a", "b", "c"]\nseats = 3\n[rules]\nstacking = true\n'
                    "jump_in = true\nseven_zero = true\nmulti_play = true\n")  # fmt: skip
    spec = load_spec(path)
    assert (spec.rules.stacking, spec.rules.jump_in, spec.rules.seven_zero, spec.rules.multi_play) == (
        True,
    ) * 4
    assert spec_from_dict(spec.to_dict()) == spec


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("name = ")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(tmp_path / "bad.toml")


def test_unknown_bots_are_refused(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    identity.register_bot(client, prefix, "a")
    identity.register_bot(client, prefix, "b")
    spec: TournamentSpec = spec_from_dict(GOOD)
    with pytest.raises(SpecError, match=r"^bots: unknown bot 'c'"):
        check_bots(client, prefix, spec)


@pytest.mark.parametrize(("attempts", "retries"), [(1, None), (2, 1), (4, 3)])
def test_attempts_counts_tries_the_first_included(attempts: int, retries: int | None) -> None:
    """`attempts = 1` is one try (RQ retries nothing), `attempts = 2` two (RQ retries once)."""
    spec = spec_from_dict({**GOOD, "retries": {"attempts": attempts, "backoff_s": [7]}})
    rq_retry = retry(spec)
    assert (rq_retry.max if rq_retry else None) == retries
    assert spec_from_dict({**GOOD}).retries.attempts == 4  # the default: as many tries as before


def test_a_tournament_stored_when_attempts_counted_retries_keeps_its_tries(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    """A spec stored before `attempts` counted tries had `attempts` retries: it is read with one more."""
    client, prefix = redis_prefix
    for stored, tries in ((0, 1), (3, 4)):
        old = {**GOOD, "retries": {"attempts": stored, "backoff_s": [5]}}
        keys = Keys(prefix, f"old{stored}")
        client.hset(keys.tournament, mapping={"spec": json.dumps(old), "status": "created", "matches": 3,
                                              "done": 0, "created": 0})  # fmt: skip
        assert load(client, prefix, f"old{stored}").spec.retries.attempts == tries
    spec = spec_from_dict({**GOOD, "retries": {"attempts": 1}})
    match = tournament.ScheduledMatch(0, 0, ("a", "b"), 1, 0)
    created = tournament.create(client, prefix, spec, [match], "new1")
    assert load(client, prefix, created).spec == spec  # stored now: read back as it was
