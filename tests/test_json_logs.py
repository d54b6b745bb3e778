"""`--log-format json`: the real `uno-arena server`, `worker` and `web` processes write nothing but JSON
objects, one a line, whose ids say which match, tournament and bot a line is about."""

from __future__ import annotations

import datetime
import json
import logging
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import redis

from tests.conftest import free_port
from tests.server.botclient import TestBot
from tests.workers.harness import REDIS_URL, ServerProcess, WorkerProcess, wait_until
from uno_arena.cli.log_format import JsonFormatter
from uno_arena.records import identity
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, TournamentStatus, load
from uno_arena.workers import lifecycle

# A name a bot could send in its Hello: a line break for log viewers, a terminal escape, a bidi override
HOSTILE = "evil\u2028\x1b[2J\u202e\x7f"
JSON = ("--log-format", "json")


def json_lines(output: str, component: str) -> list[dict[str, Any]]:
    """Every line parsed (one fails the test), each checked for the fields every line has."""
    lines = [json.loads(line) for line in output.splitlines()]
    assert lines, "no output"
    for line in lines:
        assert line["component"] == component and line["level"] in ("DEBUG", "INFO", "WARNING", "ERROR")
        assert line["logger"] and isinstance(line["message"], str)
        when = datetime.datetime.fromisoformat(line["time"])
        assert line["time"].endswith("Z") and when.utcoffset() == datetime.timedelta(0)
    assert output.isascii() and "\x7f" not in output  # every other character is a \\u escape
    return lines


def test_server_worker_and_web_write_json_lines_with_the_ids(
    redis_prefix: tuple[redis.Redis, str], tmp_path: Path
) -> None:
    client, prefix = redis_prefix
    server = ServerProcess(prefix, tmp_path / "server.log", options=JSON).start()
    worker = WorkerProcess(prefix, identity.create_control_token(client, prefix), tmp_path / "worker.log",
                           options=(*JSON, "--burst"))  # fmt: skip
    port, web_log = free_port(), tmp_path / "web.log"
    web_command = [sys.executable, "-m", "uno_arena.cli", "web", "--listen", f"127.0.0.1:{port}",
                   "--redis-url", REDIS_URL, "--key-prefix", prefix]  # fmt: skip
    web: subprocess.Popen[bytes] | None = None
    bots = [TestBot(server.address, name, identity.register_bot(client, prefix, name)) for name in "ab"]
    bots.append(TestBot(server.address, HOSTILE, "wrong token"))  # refused: logged with its name
    try:
        wait_until(lambda: bots[2].ended and all(bot.received for bot in bots[:2]), 30, "the Hellos' answers")
        spec = spec_from_dict({"name": "logs", "bots": ["a", "b"], "target": 50, "server": server.address})
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        lifecycle.start(client, prefix, tournament_id)
        match_id = Keys(prefix, tournament_id).match_id(0)
        process = worker.start().process
        assert process is not None and process.wait(120) == 0, worker.output()  # --burst: ends when all ran
        assert load(client, prefix, tournament_id).status is TournamentStatus.FINISHED

        with web_log.open("wb") as out:  # the format from the environment this time
            web = subprocess.Popen(web_command, env={**os.environ, "UNO_ARENA_LOG_FORMAT": "json"},
                                   stdout=out, stderr=out)  # fmt: skip
        wait_until(lambda: b"leaderboard at" in web_log.read_bytes(), 30, "the web view to serve")
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/tournament/{tournament_id}", timeout=10
        ) as page:
            assert page.status == 200
        wait_until(lambda: b'"status": 200' in web_log.read_bytes(), 10, "the request's line")
    finally:
        if web is not None:
            web.terminate()
            web.wait(15)
        worker.stop()
        server.stop()
        for bot in bots:
            bot.close()

    served = json_lines((tmp_path / "server.log").read_text(), "server")
    ended = [line for line in served if line.get("match_id") == match_id]
    assert any(" finished: " in line["message"] for line in ended), served
    assert {line.get("bot") for line in served} >= {"a", "b", HOSTILE}  # the refused name, escaped

    worked = json_lines(worker.output(), "worker")
    recorded = [line for line in worked if line.get("match_id") == match_id]
    assert any(": recorded (" in line["message"] for line in recorded), worked
    assert all(line["tournament_id"] == tournament_id for line in recorded)

    requests = [line for line in json_lines(web_log.read_text(), "web") if "route" in line]
    expected = {"route": "/tournament/<tournament_id>", "status": 200, "tournament_id": tournament_id,
                "method": "GET", "path": f"/tournament/{tournament_id}", "client": "127.0.0.1"}  # fmt: skip
    assert expected.items() <= requests[0].items() and requests[0]["duration_ms"] >= 0, requests


def test_an_error_that_ends_the_command_is_a_json_line_too() -> None:
    """Redis not answering at the start: one ERROR object, the exit status of the plain format's."""
    ended = subprocess.run([sys.executable, "-m", "uno_arena.cli", "web", *JSON, "--redis-url",
                            "redis://127.0.0.1:1/0"], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert ended.returncode == 1 and not ended.stdout
    (line,) = json_lines(ended.stderr, "web")
    assert line["level"] == "ERROR" and line["message"].startswith(
        "cannot use Redis at redis://127.0.0.1:1/0"
    )


def test_the_exception_of_a_record_is_its_traceback() -> None:
    try:
        raise ValueError("bad")
    except ValueError:
        record = logging.LogRecord(
            "uno_arena.x", logging.ERROR, __file__, 1, "failed %s", ("x",), sys.exc_info()
        )
    line = json.loads(JsonFormatter("worker").format(record))
    assert line["message"] == "failed x"
    assert line["exception"].startswith("Traceback") and line["exception"].endswith("ValueError: bad")
