"""The tournament archive (`records.archive`, `records.transfer`): what a file that is not one, cut short,
damaged, of a newer version, too big, naming keys a tournament does not own, or match indices its
schedule does not hold gets, and that nothing is written to Redis for it (nor for a file that changed
between its check and its import; and `import --replace` of a file that does not import keeps the copy
already there). An export of a tournament being played is the tournament as of one moment. Also: the
leaderboard's key names are the ones `records.owned` lists."""

from __future__ import annotations

import gzip
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner

from tests.conftest import REDIS_DB, REDIS_HOST, REDIS_PORT
from tests.web.test_web import (
    BOTS,
    finished_match,
    recorded,  # noqa: F401 (the fixture: a tournament of 6 recorded matches)
)
from uno_arena.cli.main import cli
from uno_arena.leaderboard import board
from uno_arena.records import archive, transfer
from uno_arena.records.archive import ArchiveError, ArchiveReader
from uno_arena.records.match import record
from uno_arena.records.owned import (
    LEADERBOARD_PARTS,
    KeyType,
    LeaderboardPart,
    existing,
    kept_key,
    leaderboard_key,
    match_indices,
    tournament_keys,
)
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, load, scheduled_match, states, text
from uno_arena.records.transfer import check_archive, export_tournament, import_tournament
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import lifecycle
from uno_arena.workers.queue import delete_prefix

REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"


@pytest.fixture
def exported(recorded: tuple[redis.Redis, str, str], tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:  # noqa: F811
    """An archive of the recorded tournament, and its lines as JSON."""
    client, prefix, tournament_id = recorded
    board.refresh(client, prefix, tournament_id)
    path = tmp_path / "good.jsonl.gz"
    export_tournament(client, prefix, tournament_id, path)
    return path, [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def written(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_bytes(gzip.compress(b"".join(json.dumps(line).encode() + b"\n" for line in lines)))
    return path


def refused(path: Path, prefix: str, says: str, max_bytes: int = archive.DEFAULT_MAX_BYTES) -> None:
    with pytest.raises(ArchiveError) as caught:
        check_archive(path, prefix, max_bytes)
    assert str(caught.value).startswith(f"{path}: ") and says in str(caught.value), str(caught.value)


def test_an_archive_holds_a_versioned_header_every_kept_key_and_an_end_line(
    recorded: tuple[redis.Redis, str, str],  # noqa: F811
    exported: tuple[Path, list[dict[str, Any]]],
) -> None:
    _, prefix, tournament_id = recorded
    path, lines = exported
    header, *keys, end = lines
    assert (header["format"], header["version"], header["tournament_id"]) == (
        archive.FORMAT,
        1,
        tournament_id,
    )
    assert header["about"]["spec"]["bots"] == ["alpha", "beta", "gamma"] and header["about"]["done"] == 6
    names = {line["key"] for line in keys}
    assert f"tournament:{tournament_id}" in names and f"leaderboard:{tournament_id}:ratings" in names
    assert sum(name.startswith("match:") for name in names) == 6
    assert end == {"end": True, "keys": len(names), "lines": len(keys)}
    match = next(line for line in keys if line["key"].startswith("match:"))
    fields_of = dict(match["items"])
    assert isinstance(fields_of["summary"], str) and set(fields_of["log"]) == {"base64"}  # zlib: not text
    summary = check_archive(path, prefix)
    assert (summary.keys, summary.matches, summary.header.tournament_id) == (len(names), 6, tournament_id)


def test_bad_files_are_refused_saying_where_and_why(
    recorded: tuple[redis.Redis, str, str],  # noqa: F811
    exported: tuple[Path, list[dict[str, Any]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, prefix, tournament_id = recorded
    path, lines = exported
    header, *keys, end = lines
    data = path.read_bytes()

    refused(tmp_path / "missing.jsonl.gz", prefix, "no such file")
    (tmp_path / "empty").write_bytes(b"")
    refused(tmp_path / "empty", prefix, "empty")
    (tmp_path / "text").write_text("hello\n")
    refused(tmp_path / "text", prefix, "not a tournament archive (gzip-compressed JSON lines")
    (tmp_path / "cut.gz").write_bytes(data[: len(data) // 2])
    refused(tmp_path / "cut.gz", prefix, "cut short: the compressed data ends after line")
    damaged = bytearray(data)
    damaged[-6] ^= 0xFF  # in gzip's CRC of the whole: every line reads, the check at the end fails
    (tmp_path / "damaged.gz").write_bytes(bytes(damaged))
    refused(
        tmp_path / "damaged.gz", prefix, f"damaged compressed data after line {len(lines)} (CRC check failed"
    )
    refused(written(tmp_path / "no-end", [header, *keys]), prefix, "cut short after line")
    refused(written(tmp_path / "other", [{**header, "format": "something-else"}, *keys, end]), prefix,
            'not a tournament archive (its first line has no "format": "uno-arena-tournament")')  # fmt: skip
    refused(
        written(tmp_path / "newer", [{**header, "version": 2}, *keys, end]),
        prefix,
        "format version 2, newer than this uno-arena reads (up to 1): import it with a newer uno-arena",
    )
    refused(written(tmp_path / "no-id", [{**header, "tournament_id": 5}, *keys, end]), prefix,
            "line 1: header: tournament_id: expected a string, got 5")  # fmt: skip
    refused(written(tmp_path / "bad-id", [{**header, "tournament_id": "a:b"}, *keys, end]), prefix,
            "bad tournament id 'a:b'")  # fmt: skip
    refused(written(tmp_path / "counts", [header, *keys, {**end, "keys": 1}]), prefix,
            "the end line counts 1 keys")  # fmt: skip
    refused(written(tmp_path / "after", [header, *keys, end, end]), prefix, "more after the end line")
    token = {"key": "control-token:abc", "type": "string", "items": ["1"]}  # never a tournament's to write
    refused(
        written(tmp_path / "token", [header, token, *keys, end]),
        prefix,
        f"line 2: 'control-token:abc' is not a key of tournament {tournament_id!r} an archive holds",
    )
    other = {"key": "tournament:someone-else", "type": "hash", "items": [["spec", "{}"]]}
    refused(written(tmp_path / "theirs", [header, other, *keys, end]), prefix, "is not a key of tournament")
    lease = {"key": f"tournament:{tournament_id}:lease:0", "type": "string", "items": ["x"]}
    refused(written(tmp_path / "lease", [header, lease, *keys, end]), prefix, "is not a key of tournament")
    typed = {"key": f"tournament:{tournament_id}:results", "type": "hash", "items": [["a", "b"]]}
    refused(written(tmp_path / "typed", [header, typed, *keys, end]), prefix, "is a list, not a hash")
    odd = {"key": f"tournament:{tournament_id}:state", "type": "hash", "items": [["0"]]}
    refused(written(tmp_path / "pairs", [header, odd, *keys, end]), prefix, "expected [field, value] pairs")
    encoded = {"key": f"tournament:{tournament_id}:state", "type": "hash", "items": [["0", {"base64": "*"}]]}
    refused(written(tmp_path / "b64", [header, encoded, *keys, end]), prefix, "not base64")
    no_record = [k for k in keys if k["key"] != f"tournament:{tournament_id}"]
    refused(written(tmp_path / "headless", [header, *no_record, {**end, "keys": end["keys"] - 1,
                                                                  "lines": len(no_record)}]),
            prefix, f"holds no record of tournament {tournament_id!r}")  # fmt: skip
    refused(path, prefix, "more than 0 MiB of JSON (the limit: tournament import --max-mib)", max_bytes=2000)
    monkeypatch.setattr(archive, "MAX_LINE_BYTES", 1000)
    refused(path, prefix, "longer than 0 MiB: not a line this format has")


def test_a_refused_file_writes_nothing_and_an_existing_tournament_is_kept(
    recorded: tuple[redis.Redis, str, str],  # noqa: F811
    exported: tuple[Path, list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    client, prefix, tournament_id = recorded
    path, lines = exported
    header, *keys, end = lines
    before = sorted(client.scan_iter(match=f"{prefix}:*"))
    elsewhere = f"{prefix}-elsewhere"  # an empty prefix of the same Redis: nothing there yet
    try:
        token = {"key": "control-token:abc", "type": "string", "items": ["1"]}
        bad = written(tmp_path / "late-bad.jsonl.gz", [header, *keys, token, end])  # the bad line comes last
        result = CliRunner().invoke(cli, ["tournament", "import", str(bad), "--redis-url", REDIS_URL,
                                          "--key-prefix", elsewhere])  # fmt: skip
        assert result.exit_code == 1 and "is not a key of tournament" in result.output
        assert list(client.scan_iter(match=f"{elsewhere}:*")) == []  # checked whole before any write
        with pytest.raises(ArchiveError, match="not a tournament archive"):
            (tmp_path / "text").write_text("{}\n")
            import_tournament(client, elsewhere, tmp_path / "text")
        assert list(client.scan_iter(match=f"{elsewhere}:*")) == []

        same = CliRunner().invoke(cli, ["tournament", "import", str(path), "--redis-url", REDIS_URL,
                                        "--key-prefix", prefix])  # fmt: skip
        assert (
            same.exit_code == 1
            and f"tournament {tournament_id!r} already exists under {prefix!r}" in same.output
        )
        assert sorted(client.scan_iter(match=f"{prefix}:*")) == before  # untouched

        moved = CliRunner().invoke(cli, ["tournament", "import", str(path), "--redis-url", REDIS_URL,
                                         "--key-prefix", elsewhere])  # fmt: skip
        assert moved.exit_code == 0, moved.output  # the same Redis, another prefix: another deployment
        assert (
            board.current(client, elsewhere, tournament_id).to_dict()["standings"]
            == (board.current(client, prefix, tournament_id).to_dict()["standings"])
        )
    finally:
        delete_prefix(client, elsewhere)


def test_reading_stops_at_the_first_bad_line_and_a_plain_file_reads_too(
    exported: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    path, lines = exported
    plain = tmp_path / "plain.jsonl"  # decompressed by hand (gunzip): still read
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    with ArchiveReader(plain) as reader:
        assert sum(1 for _ in reader.key_lines()) == lines[-1]["lines"]
    (tmp_path / "bad.jsonl").write_bytes(plain.read_bytes().replace(b'"items":', b'"itemz":', 1))
    with ArchiveReader(tmp_path / "bad.jsonl") as reader, pytest.raises(ArchiveError, match="line 2: "):
        list(reader.key_lines())


def test_the_leaderboards_keys_are_the_ones_owned_lists() -> None:
    parts = {name for name in dir(board.ScopeKeys) if isinstance(getattr(board.ScopeKeys, name), property)}
    scope = board.scope_keys("p", "cup")
    named = {getattr(scope, part) for part in parts - {"state"}}
    assert named == {f"{leaderboard_key('p', 'cup')}:{part}" for part in LEADERBOARD_PARTS}
    assert set(LEADERBOARD_PARTS) == set(LeaderboardPart)
    assert board.key("p", "cup") == leaderboard_key("p", "cup")
    assert all(kept_key("p", "cup", key) is not None for key in scope.state)  # what a rebuild writes: kept
    assert kept_key("p", "cup", scope.lock) is None and kept_key("p", "cup", scope.dirty) is None
    match = kept_key("p", "cup", "p:match:cup-m00003")
    assert match is not None and match.type is KeyType.HASH
    assert (
        kept_key("p", "cup", "p:match:cup-m3") is None
        and kept_key("p", "cup", "p:match:cup-x-m00003") is None
    )
    assert {f.name for f in fields(board.ScopeKeys)} == {"base"}


def with_record(lines: list[dict[str, Any]], tournament_id: str, **changed: str) -> list[dict[str, Any]]:
    """The archive's lines with fields of the tournament's record changed."""
    changed_lines = []
    for line in lines:
        if line.get("key") == f"tournament:{tournament_id}":
            items = dict(line["items"])
            line = {**line, "items": sorted({**items, **changed}.items())}
        changed_lines.append(line)
    return changed_lines


def test_match_indices_are_the_ones_its_schedule_holds(
    recorded: tuple[redis.Redis, str, str],  # noqa: F811
    exported: tuple[Path, list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    """A crafted archive cannot name matches its schedule does not hold (which `tournament delete` and
    `export` would then look for), nor make a record count a billion of them."""
    client, prefix, tournament_id = recorded
    _, lines = exported
    header, *keys, end = lines
    stray = {"key": f"match:{tournament_id}-m00099", "type": "hash", "items": [["summary", "{}"]]}
    more = {"end": True, "keys": end["keys"] + 1, "lines": end["lines"] + 1}
    said = f"match:{tournament_id}-m00099 is the record of match 99, which its schedule does not hold"
    refused(written(tmp_path / "stray", [header, *keys, stray, more]), prefix, said)
    billion = with_record([header, *keys, end], tournament_id, matches="1000000000")
    refused(written(tmp_path / "billion", billion), prefix, "its record counts '1000000000' matches, its "
            "schedule holds 6")  # fmt: skip
    schedule = f"tournament:{tournament_id}:schedule"
    odd = [{**line, "items": [["007", "{}"], *line["items"][1:]]} if line.get("key") == schedule else line
           for line in lines]  # fmt: skip
    refused(written(tmp_path / "odd", odd), prefix, "its schedule names '007', not a match index")

    # and a record in Redis that counts more than its schedule holds names its scheduled matches only
    client.hset(Keys(prefix, tournament_id).tournament, "matches", 1_000_000)
    assert match_indices(client, prefix, tournament_id) == list(range(6))


def test_a_file_changed_between_its_check_and_its_import_writes_nothing(
    recorded: tuple[redis.Redis, str, str],  # noqa: F811
    exported: tuple[Path, list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    """The import reads the file twice (checks it whole, then writes it): each line is checked again as
    it is written, and the file must be the one checked, else nothing is left written."""
    client, prefix, tournament_id = recorded
    path, lines = exported
    header, *keys, end = lines
    summary = check_archive(path, prefix)
    elsewhere = f"{prefix}-elsewhere"
    token = {"key": "control-token:abc", "type": "string", "items": ["1"]}
    try:
        more = {**end, "keys": end["keys"] + 1, "lines": end["lines"] + 1}
        swapped = written(tmp_path / "swapped", [header, token, *keys, more])
        with pytest.raises(ArchiveError, match="line 2: 'control-token:abc' is not a key of tournament"):
            import_tournament(client, elsewhere, swapped, summary=summary)  # checked as `path` was
        assert list(client.scan_iter(match=f"{elsewhere}:*")) == []
        edited = written(tmp_path / "edited", with_record(lines, tournament_id, status="cancelled"))
        with pytest.raises(ArchiveError, match="changed since it was checked: not imported"):
            import_tournament(client, elsewhere, edited, summary=summary)
        assert list(client.scan_iter(match=f"{elsewhere}:*")) == []
    finally:
        delete_prefix(client, elsewhere)


def test_an_export_while_a_match_is_recorded_is_the_tournament_as_of_one_moment(
    recorded: tuple[redis.Redis, str, str],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A match recorded while the export reads (here: as soon as it reports progress, after its first
    round trip) is wholly out of the file: not in its results, its states, its record's count or its
    match records."""
    client, prefix, _ = recorded  # its bots registered
    monkeypatch.setattr(transfer, "READ_BATCH", 1)  # a key a round trip: a match recorded between any two
    tournament_id = lifecycle.create_checked(client, prefix, spec_from_dict({"name": "live", "bots": BOTS}))
    lifecycle.start(client, prefix, tournament_id)
    keys = Keys(prefix, tournament_id)
    log = control_pb2.EventLogChunk(
        events=[pb.Event(hand_started=pb.HandStarted(number=1))]
    ).SerializeToString()

    def play(index: int) -> None:
        bots = scheduled_match(client, prefix, tournament_id, index).bots
        assert record(client, keys, index, finished_match(keys.match_id(index), bots), log)

    for index in (0, 1):
        play(index)
    recorded_meanwhile: list[int] = []

    def progress(done: int, total: int) -> None:
        if not recorded_meanwhile:
            recorded_meanwhile.append(done)
            play(2)  # the last match is recorded while the export runs: the tournament finishes

    path = tmp_path / "live.jsonl.gz"
    exported = export_tournament(client, prefix, tournament_id, path, progress=progress)
    assert recorded_meanwhile and states(client, prefix, tournament_id)[2] is MatchState.DONE
    assert exported.matches == 2
    elsewhere = f"{prefix}-elsewhere"
    try:
        import_tournament(client, elsewhere, path)
        copy = load(client, elsewhere, tournament_id)
        assert (copy.done, str(copy.status)) == (2, "running")
        assert states(client, elsewhere, tournament_id) == {0: MatchState.DONE, 1: MatchState.DONE,
                                                             2: MatchState.QUEUED}  # fmt: skip
        there = existing(client, tournament_keys(client, elsewhere, tournament_id))
        moved = {key.name.removeprefix(elsewhere) for key in there}
        assert f":match:{keys.match_id(2)}" not in moved and f":match:{keys.match_id(1)}" in moved
        results = client.lrange(Keys(elsewhere, tournament_id).results, 0, -1)
        assert [text(m) for m in results] == [keys.match_id(0), keys.match_id(1)]
    finally:
        delete_prefix(client, elsewhere)


def test_import_replace_of_a_file_that_does_not_import_keeps_the_tournament_here(
    recorded: tuple[redis.Redis, str, str],  # noqa: F811
    exported: tuple[Path, list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    """The file's copy is written aside and read back before the one here is deleted: a record that
    passes the file's checks but does not read as a tournament costs nothing."""
    client, prefix, tournament_id = recorded
    path, lines = exported
    before = sorted(client.scan_iter(match=f"{prefix}:*"))
    broken = written(tmp_path / "broken", with_record(lines, tournament_id, status="bogus"))
    where = ["--redis-url", REDIS_URL, "--key-prefix", prefix]
    result = CliRunner().invoke(cli, ["tournament", "import", str(broken), "--replace", *where])
    assert result.exit_code == 1, result.output
    assert sorted(client.scan_iter(match=f"{prefix}:*")) == before  # nothing staged is left either
    assert load(client, prefix, tournament_id).done == 6
    assert "its tournament does not read" in result.output and "here is untouched" in result.output

    replaced = CliRunner().invoke(cli, ["tournament", "import", str(path), "--replace", *where])
    assert replaced.exit_code == 0, replaced.output
    assert (
        "deleted the tournament here first" in replaced.output
        and f"imported {tournament_id}" in replaced.output
    )
    assert load(client, prefix, tournament_id).done == 6
    assert not list(client.scan_iter(match=f"{prefix}:importing:*"))
