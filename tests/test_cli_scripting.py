"""What a script relies on: every `--json` command's fields and the web view's `/api/tournament/ID` are the
ones docs/operations.md and docs/web.md document (no field missing from the docs, none documented and
never given), and the exit statuses are the documented ones."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import redis
from click.testing import CliRunner

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT, RunningServer
from tests.sdk.runner import BackgroundBot
from tests.web.test_web import finished_match
from uno_arena.cli.main import ArenaGroup, cli
from uno_arena.records.match import record
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, scheduled_match, set_state
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.web.app import create_app
from uno_arena.workers import lifecycle

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"


def documented(doc: str, heading: str) -> set[str]:
    """The field names of the table under `heading` in docs/DOC (`a.b`, `list[].c`; a cell may name
    several: "`created`, `started`, `finished`")."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    section = text[start + len(heading) + 2 :]
    section = section[: section.index("\n#")] if "\n#" in section else section
    names: set[str] = set()
    for row in re.findall(r"^\| (`[^|]*`) \|", section, re.MULTILINE):
        names.update(re.findall(r"`([^`]+)`", row))
    names.discard("field")
    assert names, f"no fields under {heading!r} in docs/{doc}"
    return names


def paths(value: Any, fields: set[str], prefix: str = "") -> Iterator[str]:
    """The field paths of a JSON value, as the docs name them; a field the docs list nothing under
    (a map, an object described in words) is not looked into."""
    if isinstance(value, list):
        for item in value:
            yield from paths(item, fields, f"{prefix}[]" if prefix else "")
    elif isinstance(value, dict):
        for name, inner in value.items():
            path = f"{prefix}.{name}" if prefix else name
            yield path
            if any(f.startswith((f"{path}.", f"{path}[]")) for f in fields):
                yield from paths(inner, fields, path)


class Fields:
    """The fields a command's outputs gave, against its documented ones."""

    def __init__(self, doc: str, heading: str) -> None:
        self.heading = heading
        self.documented = documented(doc, heading)
        self.seen: set[str] = set()

    def check(self, value: Any) -> Any:
        given = set(paths(value, self.documented))
        assert given - self.documented == set(), f"{self.heading}: not documented"
        self.seen |= given
        return value

    def all_seen(self) -> None:
        assert self.documented - self.seen == set(), f"{self.heading}: documented, never given"


def run(prefix: str, *args: str) -> Any:
    result = CliRunner().invoke(cli, [*args[:2], "--redis-url", REDIS_URL, "--key-prefix", prefix, *args[2:]])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def played(match_server: RunningServer) -> Iterator[tuple[RunningServer, str]]:
    """A cancelled tournament of 3 matches: one recorded, one failed (with its reason), one cancelled;
    bot `alpha` connected to the server."""
    client, prefix = match_server.redis, match_server.prefix
    tokens = {name: match_server.register(name) for name in ("alpha", "beta", "gamma")}
    bot = BackgroundBot(GreedyBot(), match_server.address, "alpha", tokens["alpha"])
    bot.wait_connected()
    tournament_id = lifecycle.create_checked(
        client, prefix, spec_from_dict({"name": "cup", "bots": ["alpha", "beta", "gamma"]})
    )
    lifecycle.start(client, prefix, tournament_id)
    keys = Keys(prefix, tournament_id)
    match = scheduled_match(client, prefix, tournament_id, 0)
    log = control_pb2.EventLogChunk(events=[pb.Event(hand_started=pb.HandStarted(number=1))])
    assert record(client, keys, 0, finished_match(keys.match_id(0), match.bots), log.SerializeToString())
    set_state(client, keys, 1, MatchState.FAILED, "FAILED_PRECONDITION: bot 'beta' is not connected")
    lifecycle.cancel(client, prefix, tournament_id)
    yield match_server, tournament_id
    bot.stop()


def test_every_json_command_gives_its_documented_fields(
    played: tuple[RunningServer, str], tmp_path: Path
) -> None:
    server, tournament_id = played
    prefix = server.prefix
    listed = Fields("operations.md", "### `tournament list --json`")
    assert [t["id"] for t in listed.check(run(prefix, "tournament", "list", "--json"))] == [tournament_id]
    listed.all_seen()

    status = Fields("operations.md", "### `tournament status ID --json`")
    values = status.check(run(prefix, "tournament", "status", tournament_id, "--json"))
    assert values["states"] == {
        "scheduled": 0,
        "queued": 0,
        "running": 0,
        "done": 1,
        "failed": 1,
        "cancelled": 1,
    }
    assert values["errors"] == {"1": "FAILED_PRECONDITION: bot 'beta' is not connected"}
    page = status.check(run(prefix, "tournament", "status", tournament_id, "--json", "--matches"))["page"]
    assert [m["state"] for m in page["matches"]] == ["done", "failed", "cancelled"]
    status.all_seen()

    bots = Fields("operations.md", "### `bot list --json`")
    found = bots.check(run(prefix, "bot", "list", "--json", "--server", server.address, "--control-token",
                           server.control_token))  # fmt: skip
    assert [(b["bot"], b["connected"]) for b in found] == [("alpha", True), ("beta", False), ("gamma", False)]
    assert bots.check(run(prefix, "bot", "list", "--json"))[0]["connected"] is None  # the server not asked
    bots.all_seen()

    board = Fields("operations.md", "### `leaderboard [ID] --json`")
    assert (
        board.check(run(prefix, "leaderboard", tournament_id, "--json"))["rules"]["summary"]
        == "official rules"
    )
    assert "rules" not in board.check(run(prefix, "leaderboard", "--json"))
    board.all_seen()

    archive = tmp_path / "cup.jsonl.gz"
    exported = Fields("operations.md", "### `tournament export ID FILE --json`")
    assert (
        exported.check(run(prefix, "tournament", "export", tournament_id, str(archive), "--json"))["matches"]
        == 1
    )
    exported.all_seen()
    deleted = Fields("operations.md", "### `tournament delete ID --json`")
    removal = deleted.check(run(prefix, "tournament", "delete", tournament_id, "--json"))
    assert removal["counts"]["match record"] == 1 and len(removal["jobs"]) == 3  # the three matches' jobs
    deleted.all_seen()
    imported = Fields("operations.md", "### `tournament import FILE --json`")
    assert imported.check(run(prefix, "tournament", "import", str(archive), "--json"))["replaced"] is False
    imported.all_seen()

    api = Fields("web.md", "### `/api/tournament/ID`")
    with create_app(server.redis, prefix).test_client() as web:
        first = api.check(web.get(f"/api/tournament/{tournament_id}?limit=2").get_json())
        assert first["matches"]["next"] == f"/api/tournament/{tournament_id}?offset=2&limit=2"
        last = api.check(web.get(first["matches"]["next"]).get_json())
        assert [m["index"] for m in last["matches"]["items"]] == [2] and last["matches"]["next"] is None
    api.all_seen()


def test_exit_statuses_are_the_documented_ones(redis_prefix: tuple[redis.Redis, str]) -> None:
    _, prefix = redis_prefix
    statuses = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = statuses[statuses.index("## Exit statuses") :]
    table = section[: section.index("\n## ")]  # the section alone (a later one has `worker health`'s)
    assert re.findall(r"^\| (\d+) \|", table, re.MULTILINE) == ["0", "1", "2", "3", "130"]
    where = ["--redis-url", REDIS_URL, "--key-prefix", prefix]
    assert CliRunner().invoke(cli, ["tournament", "list", *where]).exit_code == 0
    missing = CliRunner().invoke(cli, ["tournament", "status", "nope", *where])
    assert (missing.exit_code, missing.output) == (
        1,
        "Error: no tournament 'nope' (see `uno-arena tournament list`)\n",
    )
    assert CliRunner().invoke(cli, ["tournament", "status"]).exit_code == 2
    assert CliRunner().invoke(cli, ["no-such-command"]).exit_code == 2

    @click.command("slow")
    def slow() -> None:
        raise KeyboardInterrupt  # what Ctrl-C does to a command busy with its work

    group = ArenaGroup("uno-arena", lazy={})
    group.add_command(slow)
    interrupted = CliRunner().invoke(group, ["slow"])
    assert interrupted.exit_code == 130 and interrupted.output.strip() == "interrupted"
