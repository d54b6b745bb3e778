"""The tournament archive (`records.archive`, `records.transfer`): what a file that is not one, cut short,
damaged, of a newer version, too big, or naming keys a tournament does not own gets, and that nothing is
written to Redis for it. Also: the leaderboard's key names are the ones `records.owned` lists."""

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
from tests.web.test_web import recorded  # noqa: F401 (the fixture: a tournament of 6 recorded matches)
from uno_arena.cli.main import cli
from uno_arena.leaderboard import board
from uno_arena.records import archive
from uno_arena.records.archive import ArchiveError, ArchiveReader
from uno_arena.records.owned import LEADERBOARD_PARTS, KeyType, kept_key, leaderboard_key
from uno_arena.records.transfer import check_archive, export_tournament, import_tournament

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
        from uno_arena.workers.queue import delete_prefix

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
