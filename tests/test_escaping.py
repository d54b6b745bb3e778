"""Nothing a bot sends reaches a terminal or a log raw: a BotError detail with terminal escape sequences is
recorded and logged escaped by a real server, and a replay (a file from anywhere, or a record in Redis
written before the server escaped details) prints escaped, as do tables, log lines and the web view."""

from __future__ import annotations

import io
import json
import logging
import random
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner
from rich.console import Console

from tests.conftest import REDIS_URL, RunningServer
from tests.records.test_replay import forfeited_match
from tests.server.botclient import Policy, TestBot, eager, play_match
from uno_arena.cli.main import PrintableFormatter, cli
from uno_arena.cli.tables import Column, print_fitted
from uno_arena.records.match import record
from uno_arena.records.replay import export, recorded_match, write_replay_file
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, ScheduledMatch, create
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.printable import printable
from uno_arena.web.app import create_app

PWNED = "\x1b]0;PWNED\x07\x1b[2J"  # retitles the terminal, then clears it
SHOWN = "\\x1b]0;PWNED\\x07\\x1b[2J"  # what shows instead


def test_printable_escapes_what_acts_on_a_terminal_and_nothing_else() -> None:
    assert printable(PWNED) == SHOWN
    assert printable(SHOWN) == SHOWN  # escaping twice changes nothing
    assert printable("fine: é, 中, [bold] \\ ") == "fine: é, 中, [bold] \\ "
    assert printable("a\nforged log line\r\t") == "a\\nforged log line\\r\\t"
    assert printable("\u202egnp.exe\u00a0\x7f\x9b") == "\\u202egnp.exe\\xa0\\x7f\\x9b"


def detail_reporter(detail: str) -> tuple[Policy, list[TestBot]]:
    """Eager play; at its second request the bot also reports a BotError with `detail`."""
    fallback, seen, box = eager(random.Random(2)), [0], []

    def choose(request: bot_pb2.DecisionRequest) -> int | None:
        seen[0] += 1
        if seen[0] == 2:
            report = bot_pb2.BotError(request_id=request.request_id, detail=detail)
            box[0].send(bot_pb2.BotMessage(bot_error=report))
        return fallback(request)

    return choose, box


def test_a_bot_error_with_escape_sequences_is_logged_recorded_and_replayed_escaped(
    match_server: RunningServer, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    policy, box = detail_reporter(f"oops {PWNED} end")
    good = TestBot(match_server.address, "good", match_server.register("good"))
    bad = TestBot(match_server.address, "bad", match_server.register("bad"), policy=policy)
    box.append(bad)
    for bot in (good, bad):
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(match_id="pwned", bots=["good", "bad"], seed=3,
                                           rules=pb.RulesConfig(target_score=100))  # fmt: skip
    with caplog.at_level(logging.INFO, logger="uno_arena.server"):
        progress = play_match(match_server.address, match_server.control_token, request)
    good.close()
    bad.close()
    finished = progress[-1].finished
    assert [f.detail for f in finished.faults] == [f"oops {SHOWN} end"]  # recorded escaped
    logged = [r.getMessage() for r in caplog.records if "FAULT_KIND_BOT_ERROR" in r.getMessage()]
    assert logged == [f"match pwned seat 1 (bad): FAULT_KIND_BOT_ERROR: oops {SHOWN} end"]
    events = [e for p in progress if p.WhichOneof("kind") == "log" for e in p.log.events]
    path = write_replay_file(recorded_match(finished, events), tmp_path)
    shown = CliRunner().invoke(cli, ["replay", str(path)])
    assert shown.exit_code == 0, shown.output
    assert f"bad bot_error (oops {SHOWN} end)" in shown.output and "\x1b" not in shown.output


def raw_replay_file(folder: Path) -> Path:
    """A replay file from anywhere: its bot names and a fault detail hold escape sequences."""
    values = export(forfeited_match(players=3))
    names = [f"alice{PWNED}", "bob\x07", "carol\x1b[31m[bold]"]
    values["summary"]["bots"] = names  # type: ignore[index]
    values["finished"]["result"]["bots"] = names  # type: ignore[index]
    values["finished"]["faults"][0]["detail"] = f"late {PWNED}"  # type: ignore[index]
    path = folder / "raw.json"
    path.write_text(json.dumps(values), encoding="utf-8")
    return path


def test_a_replay_file_from_anywhere_prints_escaped(tmp_path: Path) -> None:
    shown = CliRunner().invoke(cli, ["replay", str(raw_replay_file(tmp_path))])
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert shown.output.startswith(f"f-m00001: alice{SHOWN} vs bob\\x07 vs carol\\x1b[31m[bold], seed 7")
    assert f"(late {SHOWN})" in shown.output


def test_a_recorded_match_in_redis_prints_escaped(redis_prefix: tuple[redis.Redis, str]) -> None:
    """A record written before the server escaped details (or by anyone with Redis access)."""
    client, prefix = redis_prefix
    spec = spec_from_dict({"name": "esc", "bots": ["alice", "bob", "carol"]})
    create(client, prefix, spec, [ScheduledMatch(0, 0, ("alice", "bob", "carol"), 1, 0)], "esc")
    keys = Keys(prefix, "esc")
    match = forfeited_match(players=3)
    match.finished.result.match_id = keys.match_id(0)
    match.finished.faults[0].detail = f"late {PWNED}"
    log = control_pb2.EventLogChunk(events=match.events).SerializeToString()
    assert record(client, keys, 0, match.finished, log)
    shown = CliRunner().invoke(cli, ["replay", keys.match_id(0), "--redis-url", REDIS_URL, "--key-prefix",
                                     prefix])  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert f"(late {SHOWN})" in shown.output and "\x1b" not in shown.output


def test_tables_and_log_lines_escape_control_characters_and_markup() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    print_fitted(console, (Column("bot"), Column("client")), [["bad", f"{PWNED}[bold]x[/bold]"]], wide=False)
    assert f"{SHOWN}[bold]x[/bold]" in out.getvalue() and "\x1b" not in out.getvalue()
    line = PrintableFormatter("%(levelname)s %(message)s").format(
        logging.LogRecord("uno_arena.x", logging.INFO, __file__, 1, "client %s", (PWNED,), None)
    )
    assert line == f"INFO client {SHOWN}"


def test_the_web_view_shows_a_replay_file_from_anywhere_escaped(tmp_path: Path) -> None:
    raw_replay_file(tmp_path)
    app = create_app(None, "", replays=tmp_path)
    page = app.test_client().get("/match/raw")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "\x1b" not in text and "\x07" not in text
    assert "late \\x1b]0;PWNED\\x07\\x1b[2J" in text  # the fault's detail, and the text replay
    index = app.test_client().get("/").get_data(as_text=True)  # the folder's index
    assert "\x1b" not in index and "alice\\x1b]0;PWNED" in index
