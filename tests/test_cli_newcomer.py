"""What a newcomer to the `uno-arena` CLI ran into: `tournament watch` ending on stale standings, "1 matches",
`leaderboard --csv --json` silently printing JSON, no `--rules` on `tournament create`, no UNO_ARENA_SERVER,
and gRPC's raw "failed to connect to all addresses" when no server answers.

Real Redis and a real match server; `watch` runs while another thread brings the standings up to date.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import redis
from click.testing import CliRunner, Result

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT, REDIS_URL, RunningServer
from tests.records.test_replay import forfeited_match
from uno_arena.cli import tournament_commands
from uno_arena.cli.main import cli
from uno_arena.leaderboard import board
from uno_arena.records import identity
from uno_arena.records.match import record
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import (
    Keys,
    ScheduledMatch,
    TournamentStatus,
    create,
    load,
    set_status,
)
from uno_arena.v1 import control_pb2

UNREACHABLE = "(is `uno-arena server` running? --server or UNO_ARENA_SERVER)"


def invoke(prefix: str, *args: str, env: dict[str, str] | None = None) -> Result:
    options = ["--redis-url", REDIS_URL, "--key-prefix", prefix]
    return CliRunner().invoke(cli, [*args, *options], env={"COLUMNS": "200", **(env or {})})


@pytest.fixture
def dead_address() -> str:
    """A loopback port nothing listens on (bound a moment ago, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


# --- tournament watch ends on the final standings -------------------------------------------------------


def finished_with_lagging_standings(client: redis.Redis, prefix: str) -> str:
    """A tournament of two matches, both recorded (so finished), whose stored standings count only the
    first: the job that recorded the second has not refreshed them yet."""
    spec = spec_from_dict({"name": "lag", "bots": ["alice", "bob"]})
    create(client, prefix, spec, [ScheduledMatch(i, 0, ("alice", "bob"), i, 0) for i in range(2)], "lag")
    keys = Keys(prefix, "lag")
    set_status(client, keys, TournamentStatus.RUNNING)
    for index in range(2):
        match = forfeited_match(players=2)
        match.finished.result.match_id = keys.match_id(index)
        log = control_pb2.EventLogChunk(events=match.events).SerializeToString()
        assert record(client, keys, index, match.finished, log)
        if index == 0:
            board.refresh(client, prefix, "lag")
    assert load(client, prefix, "lag").status is TournamentStatus.FINISHED
    assert board.current(client, prefix, "lag").matches == 1
    return "lag"


@contextlib.contextmanager
def refreshed_once_read(client: redis.Redis, prefix: str, tournament_id: str) -> Iterator[None]:
    """A thread refreshes the tournament's lagging standings once someone has read them (seen with
    MONITOR): they catch up only after `watch` saw them lag, whatever the timing."""
    meta = board.scope_keys(prefix, tournament_id).meta
    watching = threading.Event()

    def catch_up() -> None:
        monitor_client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, socket_timeout=10)
        try:
            with monitor_client.monitor() as monitor:  # type: ignore[no-untyped-call]
                watching.set()
                while meta not in monitor.next_command()["command"]:
                    pass
            board.refresh(client, prefix, tournament_id)
        finally:
            monitor_client.close()

    thread = threading.Thread(target=catch_up, name="standings-catch-up", daemon=True)
    thread.start()
    assert watching.wait(5), "MONITOR did not start"
    yield
    thread.join(15)


def test_watch_ends_on_standings_that_count_every_match(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    tournament_id = finished_with_lagging_standings(client, prefix)
    with refreshed_once_read(client, prefix, tournament_id):
        watched = invoke(prefix, "tournament", "watch", tournament_id)
    assert watched.exit_code == 0, watched.output
    assert "standings after 2 matches" in watched.output, watched.output
    assert "tournament finished" in watched.output and "may lag" not in watched.output


def test_watch_says_when_the_standings_never_catch_up(
    redis_prefix: tuple[redis.Redis, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, prefix = redis_prefix
    tournament_id = finished_with_lagging_standings(client, prefix)
    monkeypatch.setattr(tournament_commands, "FINAL_STANDINGS_WAIT_S", 0.3)
    watched = invoke(prefix, "tournament", "watch", tournament_id)
    assert watched.exit_code == 0, watched.output
    assert "tournament finished" in watched.output
    assert (f"the standings may lag: they count 1 of the 2 matches done (`uno-arena leaderboard "
            f"{tournament_id} --refresh` recomputes them)") in watched.output  # fmt: skip


# --- counted nouns --------------------------------------------------------------------------------------


def test_plural() -> None:
    from uno_arena.cli.words import plural

    assert [plural(n, "match") for n in (0, 1, 2)] == ["0 matches", "1 match", "2 matches"]
    assert plural(1, "failed match") == "1 failed match" and plural(3, "bot") == "3 bots"


def test_one_match_is_said_so(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    for bot in ("alice", "bob"):
        identity.register_bot(client, prefix, bot)
    created = invoke(prefix, "tournament", "create", "--name", "duel", "--bots", "alice,bob", "--id", "duel")
    assert created.exit_code == 0, created.output
    assert "created duel: 2 bots, 2 per table, 1 match to 500; official rules" in created.output
    started = invoke(prefix, "tournament", "start", "duel")
    assert started.exit_code == 0 and started.output.startswith("queued 1 match; "), started.output
    assert "leaderboard: duel, 0 matches" in invoke(prefix, "leaderboard", "duel").output


# --- leaderboard --csv --json ---------------------------------------------------------------------------


def test_leaderboard_refuses_csv_and_json_together(redis_prefix: tuple[redis.Redis, str]) -> None:
    _, prefix = redis_prefix
    for flags in (["--csv", "--json"], ["--json", "--csv"]):
        result = invoke(prefix, "leaderboard", *flags)
        assert result.exit_code == 2, result.output
        assert "Error: --json and --csv cannot be combined: choose one output format" in result.output
        assert "{" not in result.output


# --- tournament create --rules --------------------------------------------------------------------------


def test_tournament_create_takes_rules_by_name(redis_prefix: tuple[redis.Redis, str], tmp_path: Path) -> None:
    client, prefix = redis_prefix
    for bot in ("alice", "bob", "carol"):
        identity.register_bot(client, prefix, bot)
    spec = tmp_path / "cup.toml"
    spec.write_text('name = "cup"\nbots = ["alice", "bob", "carol"]\n\n[rules]\nstacking = true\n')
    created = invoke(
        prefix, "tournament", "create", str(spec), "--id", "cup", "--rules", "jump_in,hand_size=5"
    )
    assert created.exit_code == 0, created.output
    assert "house rules: jump_in; options: hand_size=5" in created.output  # the spec's [rules] replaced
    rules = load(client, prefix, "cup").spec.rules
    assert (rules.jump_in, rules.stacking, rules.hand_size) == (True, False, 5)
    official = invoke(prefix, "tournament", "create", str(spec), "--id", "plain", "--rules", "")
    assert official.exit_code == 0 and "official rules" in official.output, official.output

    for text, message in [("target_score=9", "--rules: target_score: set by --target"),
                          ("players=3", "--rules: players: set by --seats"),
                          ("stackng", "--rules: stackng: unknown rules option")]:  # fmt: skip
        refused = invoke(prefix, "tournament", "create", str(spec), "--id", "bad", "--rules", text)
        assert refused.exit_code == 2 and message in refused.output, refused.output
    assert not client.exists(Keys(prefix, "bad").tournament)


# --- UNO_ARENA_SERVER, and a server that does not answer ------------------------------------------------


@pytest.mark.parametrize(
    "command", [["match", "play"], ["bot", "run"], ["bot", "list"], ["tournament", "create"]]
)
def test_every_server_option_says_its_variable(command: list[str]) -> None:
    shown = CliRunner().invoke(cli, [*command, "--help"])
    assert shown.exit_code == 0, shown.output
    assert "--server HOST:PORT Match server HOST:PORT" in " ".join(shown.output.split())
    assert "(env UNO_ARENA_SERVER" in " ".join(shown.output.split())


def test_tournament_create_reads_the_server_from_the_environment(
    redis_prefix: tuple[redis.Redis, str],
) -> None:
    client, prefix = redis_prefix
    for bot in ("alice", "bob"):
        identity.register_bot(client, prefix, bot)
    args = ["tournament", "create", "--name", "far", "--bots", "alice,bob"]
    far = invoke(prefix, *args, "--id", "far", env={"UNO_ARENA_SERVER": "arena.example:6000"})
    assert far.exit_code == 0, far.output
    assert load(client, prefix, "far").spec.server == "arena.example:6000"
    flag = invoke(
        prefix, *args, "--id", "flag", "--server", "flag.example:1", env={"UNO_ARENA_SERVER": "x:2"}
    )
    assert flag.exit_code == 0 and load(client, prefix, "flag").spec.server == "flag.example:1"
    assert load(client, prefix, invoke_default(prefix, args)).spec.server == "127.0.0.1:50051"


def invoke_default(prefix: str, args: list[str]) -> str:
    """Created with neither the flag nor the variable (which the test's own environment may set)."""
    options = ["--id", "near", "--redis-url", REDIS_URL, "--key-prefix", prefix]
    result = CliRunner().invoke(cli, [*args, *options], env={"UNO_ARENA_SERVER": None})
    assert result.exit_code == 0, result.output
    return "near"


def test_match_play_with_no_server_answering_is_one_line(dead_address: str) -> None:
    for args, env in [(["--server", dead_address], {}), ([], {"UNO_ARENA_SERVER": dead_address})]:
        result = CliRunner().invoke(cli, ["match", "play", "a", "b", "--seed", "1", *args],
                                    env={"UNO_ARENA_CONTROL_TOKEN": "t", **env})  # fmt: skip
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
        errors = [line for line in result.output.splitlines() if line.startswith("Error")]
        assert errors == [f"Error: no match server answers at {dead_address} {UNREACHABLE}"], result.output
        assert "failed to connect" not in result.output and "Traceback" not in result.output


def test_a_server_that_answers_and_refuses_is_quoted(match_server: RunningServer) -> None:
    """UNAVAILABLE from a draining server is its own answer, not "no match server answers"."""
    match_server.call_soon(match_server.arena.drain(1)).result(10)
    result = CliRunner().invoke(cli, ["match", "play", "a", "b", "--server", match_server.address],
                                env={"UNO_ARENA_CONTROL_TOKEN": match_server.control_token})  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "Error: UNAVAILABLE: " in result.output and "no match server answers" not in result.output


def test_bot_list_says_which_server_did_not_answer(
    redis_prefix: tuple[redis.Redis, str], dead_address: str
) -> None:
    client, prefix = redis_prefix
    identity.register_bot(client, prefix, "lonely")
    listed = invoke(prefix, "bot", "list", "--control-token", "t", env={"UNO_ARENA_SERVER": dead_address})
    assert listed.exit_code == 0 and "lonely" in listed.stdout, listed.output
    assert (
        listed.stderr == f"connections not shown: no match server answers at {dead_address} {UNREACHABLE}\n"
    )


def test_the_demo_says_when_its_server_does_not_start(dead_address: str) -> None:
    from rich.console import Console

    from uno_arena.cli.demo_commands import _wait_for_bots

    with pytest.raises(click.ClickException) as raised:
        _wait_for_bots(dead_address, "t", 3, Console(quiet=True), timeout=0.2)
    assert raised.value.message == f"the demo's match server did not start on {dead_address}"
