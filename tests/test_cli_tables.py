"""The CLI's tables at 80 columns, on real Redis records: ids and bot names whole on one line, columns
that do not fit left out and named under the table, `--wide` for all of them and `--json` for the data."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import redis
from click.testing import CliRunner

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT
from uno_arena.cli.main import cli
from uno_arena.leaderboard import board
from uno_arena.records import identity
from uno_arena.records.match import record
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, scheduled_match
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import lifecycle

REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"
BOTS = ("strong_contender_bot_v2", "greedy_baseline_player_long", "random_reference_bot_xyz")
BOTS_SHORT = ("strong_v2", "greedy_base", "random_ref")


def _invoke(prefix: str, *args: str, columns: int = 80) -> str:
    result = CliRunner().invoke(cli, [*args, "--redis-url", REDIS_URL, "--key-prefix", prefix],
                                env={"COLUMNS": str(columns)})  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.stdout


def _tournament(client: redis.Redis, prefix: str, name: str, bots: tuple[str, ...]) -> str:
    """Three bots at three seats, two cycles; the first match recorded with faults and a forfeit."""
    for bot in bots:
        identity.register_bot(client, prefix, bot)
    spec = spec_from_dict({"name": name, "bots": list(bots), "seats": 3, "cycles": 2})
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    keys, match = Keys(prefix, tournament_id), scheduled_match(client, prefix, tournament_id, 0)
    result = pb.MatchResult(match_id=keys.match_id(0), bots=list(match.bots), reason=pb.MATCH_END_FORFEIT,
                            winners=[0], totals=[510, 40, 0], forfeited=[2])  # fmt: skip
    faults = [pb.Fault(seat=2, kind=pb.FAULT_KIND_TIMEOUT), pb.Fault(seat=1, kind=pb.FAULT_KIND_ILLEGAL)]
    finished = control_pb2.FinishedMatch(result=result, seed=match.seed, faults=faults)
    assert record(client, keys, 0, finished, b"")
    board.refresh(client, prefix, tournament_id)
    return tournament_id


def _assert_whole(text: str, *words: str) -> None:
    """Each word (an id, a name) on one line, whole; no line holds a piece of one; no line over 80."""
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, text
    for word in words:
        assert any(re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])", line) for line in lines), (
            word,
            text,
        )
    for piece in re.findall(r"[\w.-]{6,}", text):
        assert piece in words or not any(piece in word for word in words), (piece, text)
    assert "…" not in text, text


def test_tournament_tables_at_80_columns(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    tournament_id = _tournament(client, prefix, "cup", BOTS_SHORT)
    match_ids = [Keys(prefix, tournament_id).match_id(i) for i in range(2)]

    shown = _invoke(prefix, "tournament", "status", tournament_id, "--matches")
    _assert_whole(shown, tournament_id, *match_ids, *BOTS_SHORT)
    assert re.search(r"faults columns? hidden: --wide or --json shows (it|them)", shown), shown
    wide = _invoke(prefix, "tournament", "status", tournament_id, "--matches", "--wide")
    assert "faults" in wide and "timeout 1" in wide and "hidden" not in wide, wide
    page = json.loads(_invoke(prefix, "tournament", "status", tournament_id, "--matches", "--json"))
    assert [m["match_id"] for m in page["page"]["matches"]] == match_ids
    faults = page["page"]["matches"][0]["faults"]
    assert set(faults) < set(BOTS_SHORT) and sorted(k for f in faults.values() for k in f) == [
        "illegal",
        "timeout",
    ]
    assert page["states"]["done"] == 1 and page["id"] == tournament_id

    listed = _invoke(prefix, "tournament", "list")
    _assert_whole(listed, tournament_id)
    assert [t["id"] for t in json.loads(_invoke(prefix, "tournament", "list", "--json"))] == [tournament_id]
    assert "official rules" in _invoke(prefix, "tournament", "list", "--wide")


def test_long_ids_and_names_at_80_columns(redis_prefix: tuple[redis.Redis, str]) -> None:
    """Ids and names too long to stand side by side: each match is a block of lines, nothing split."""
    client, prefix = redis_prefix
    tournament_id = _tournament(client, prefix, "spring_championship_of_the_long_named_bots", BOTS)
    match_ids = [Keys(prefix, tournament_id).match_id(i) for i in range(2)]
    shown = _invoke(prefix, "tournament", "status", tournament_id, "--matches")
    _assert_whole(shown, tournament_id, *match_ids, *BOTS)
    assert "timeout 1" in shown  # every field, stacked

    listed = _invoke(prefix, "tournament", "list")
    _assert_whole(listed, tournament_id)
    assert "rules column hidden" in listed or "rules columns hidden" in listed, listed

    bots = _invoke(prefix, "bot", "list")
    _assert_whole(bots, *BOTS)
    assert {b["bot"] for b in json.loads(_invoke(prefix, "bot", "list", "--json"))} == set(BOTS)

    standings = _invoke(prefix, "leaderboard", tournament_id)
    _assert_whole(standings, tournament_id, *BOTS)
    assert "columns hidden: --wide or --json shows them" in " ".join(standings.split()), standings
    assert "hands won" in _invoke(prefix, "leaderboard", tournament_id, "--wide")


def in_terminal(args: list[str], columns: int = 80) -> str:
    """What `uno-arena ARGS` shows in a real terminal (a pseudo-terminal) `columns` wide, escapes removed:
    `bot play` fits the terminal it has, and prints whole rows into a pipe or a file."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "24", "NO_COLOR": "1"}
    command = [sys.executable, "-m", "uno_arena.cli", *args]
    process = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the command exited and closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait(60) == 0, b"".join(chunks).decode(errors="replace")
    os.close(leader)
    text = b"".join(chunks).decode(errors="replace").replace("\r", "")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_bot_play_at_80_columns_wide_and_json() -> None:
    """`bot play`'s result table fits an 80-column terminal with the bots' names whole, says what it
    hid, and `--wide` and `--json` show everything (it folded names and cut columns short)."""
    bots = ["uno_arena.sdk.examples.greedy_bot:GreedyBot", "uno_arena.sdk.examples.strong_bot:StrongBot"]
    args = ["bot", "play", *bots, "--matches", "2", "--seed", "3"]
    table = in_terminal(args).split("matches at 2 seats", 1)[1]
    assert max(map(len, table.rstrip().splitlines())) <= 80, table
    _assert_whole(table, "GreedyBot", "StrongBot")
    assert re.search(r"columns? hidden: --wide or --json shows (it|them)", table), table
    wide = in_terminal([*args, "--wide"])
    assert "decisions" in wide and "hidden" not in wide, wide
    result = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    assert [b["bot"] for b in result["bots"]] == ["GreedyBot", "StrongBot"] and result["seed"] == 3
    assert sum(b["wins"] for b in result["bots"]) == result["matches"] == 2


def test_rules_show_at_80_columns_and_as_json() -> None:
    shown = CliRunner().invoke(cli, ["rules", "show"], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    assert max(map(len, shown.stdout.splitlines())) <= 80, shown.stdout
    for name in ("first_wild_draw_four", "draw_until_playable", "draw_each_hand", "multi_play"):
        assert re.search(rf"(?<![\w]){name}(?![\w])", shown.stdout), (name, shown.stdout)
    assert "[rules] in a tournament spec" in " ".join(shown.stdout.split()), shown.stdout
    listed = json.loads(CliRunner().invoke(cli, ["rules", "show", "--json", "--rules", "stacking"]).stdout)
    stacking = next(o for o in listed if o["option"] == "stacking")
    assert stacking == {"option": "stacking", "value": True, "ruling": 25, "what": stacking["what"]}
    assert "RULINGS" in CliRunner().invoke(cli, ["rules", "show", "--wide"], env={"COLUMNS": "80"}).stdout
