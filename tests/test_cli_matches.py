"""`uno-arena tournament status ID --matches`: a tournament's matches with their ids, a page at a time.

Real Redis; the tournament and its records written through `uno_arena.records` as workers write them.
"""

from __future__ import annotations

import redis
from click.testing import CliRunner, Result

from tests.conftest import REDIS_URL
from tests.records.test_replay import forfeited_match
from uno_arena.cli.main import cli
from uno_arena.records.match import record, tournament_matches
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, ScheduledMatch, create, set_state
from uno_arena.v1 import control_pb2

WIDE = {"COLUMNS": "200"}  # a row per line


def status(prefix: str, *options: str) -> Result:
    return CliRunner().invoke(cli, ["tournament", "status", "pages", "--redis-url", REDIS_URL, "--key-prefix",
                                    prefix, *options], env=WIDE)  # fmt: skip


def four_matches(client: redis.Redis, prefix: str) -> None:
    """Match 0 scheduled, 1 recorded (bob forfeited), 2 failed, 3 running."""
    spec = spec_from_dict({"name": "pages", "bots": ["alice", "bob", "carol"]})
    pairs = [("alice", "bob"), ("alice", "bob"), ("bob", "carol"), ("alice", "carol")]
    create(client, prefix, spec, [ScheduledMatch(i, 0, pair, i, 0) for i, pair in enumerate(pairs)], "pages")
    keys = Keys(prefix, "pages")
    match = forfeited_match(players=2)  # alice vs bob: bob times out twice and forfeits
    match.finished.result.match_id = keys.match_id(1)
    log = control_pb2.EventLogChunk(events=match.events).SerializeToString()
    assert record(client, keys, 1, match.finished, log)
    set_state(client, keys, 2, MatchState.FAILED, "bot 'carol' is not connected")
    set_state(client, keys, 3, MatchState.RUNNING)


def test_the_matches_are_listed_with_ids_results_forfeits_and_faults(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    four_matches(client, prefix)
    result = status(prefix, "--matches")
    assert result.exit_code == 0, result.output
    rows = {
        line.split()[0]: " ".join(line.split())
        for line in result.output.splitlines()
        if line.strip().startswith("pages-m")
    }
    assert list(rows) == sorted(rows)  # by index
    assert rows == {
        "pages-m00000": "pages-m00000 alice, bob scheduled",
        "pages-m00001": "pages-m00001 alice, bob done alice forfeit bob bob 2 (timeout 2)",
        "pages-m00002": "pages-m00002 bob, carol failed bot 'carol' is not connected",
        "pages-m00003": "pages-m00003 alice, carol running",
    }
    assert "matches 1-4 of 4; one of them hand by hand: uno-arena replay pages-m00001" in result.output
    assert "match 2: bot 'carol'" not in result.output  # the failed list is the table's, with --matches


def test_a_page_at_a_time_and_by_state(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    four_matches(client, prefix)
    first = status(prefix, "--matches", "--limit", "2").output
    assert "pages-m00001" in first and "pages-m00002" not in first
    assert "matches 1-2 of 4; next: --from 2;" in first
    last = status(prefix, "--matches", "--limit", "2", "--from", "2").output
    assert "pages-m00001" not in last and "pages-m00003" in last and "matches 3-4 of 4;" in last
    assert "next:" not in last
    done = status(prefix, "--matches", "--state", "done").output
    assert [line.split()[0] for line in done.splitlines() if line.strip().startswith("pages-m")] == [
        "pages-m00001"
    ]
    assert "done matches 1-1 of 1;" in done
    assert "no matches from 9 on (4 in all)" in status(prefix, "--matches", "--from", "9").output


def test_a_page_is_bounded(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    four_matches(client, prefix)
    for limit in ("0", "1001"):
        refused = status(prefix, "--matches", "--limit", limit)
        assert refused.exit_code == 2 and "--limit" in refused.output
    assert status(prefix, "--matches", "--from", "-1").exit_code == 2
    matches, total = tournament_matches(client, prefix, "pages", first=1, limit=2)
    assert [m.index for m in matches] == [1, 2] and total == 4
    assert matches[0].record is not None and matches[0].record.forfeited == (1,)
    assert matches[1].record is None and matches[1].error == "bot 'carol' is not connected"


def test_without_matches_status_is_as_before(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    four_matches(client, prefix)
    output = status(prefix).output
    assert "match 2: bot 'carol' is not connected" in output and "pages-m00001" not in output


def test_a_replay_is_suggested_only_of_a_recorded_match(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    four_matches(client, prefix)
    unrecorded = status(prefix, "--matches", "--limit", "1").output  # match 0: scheduled, not recorded
    assert "matches 1-1 of 4; next: --from 1; none of them recorded yet" in unrecorded
    assert "replay pages-m00000" not in unrecorded
    later = status(prefix, "--matches", "--from", "2").output  # failed and running: neither replays
    assert "none of them recorded yet" in later and "replay pages-m0000" not in later
    recorded = status(prefix, "--matches", "--from", "1", "--limit", "1").output
    assert "one of them hand by hand: uno-arena replay pages-m00001" in recorded
    assert CliRunner().invoke(cli, ["replay", "pages-m00001", "--redis-url", REDIS_URL, "--key-prefix",
                                    prefix]).exit_code == 0  # fmt: skip
