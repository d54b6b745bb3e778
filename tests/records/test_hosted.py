"""Submitting hosted bots' code: packing, limits, versions, logs for the author only (records.hosted, CLI)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner

from tests.conftest import REDIS_URL
from uno_arena.cli.main import cli
from uno_arena.records import hosted, identity

BOT = "from uno_arena.sdk.examples.greedy_bot import GreedyBot\n\n\nclass MyBot(GreedyBot):\n    pass\n"


def invoke(prefix: str, *args: str, ok: bool = True) -> str:
    result = CliRunner().invoke(cli, [*args[:2], "--redis-url", REDIS_URL, "--key-prefix", prefix, *args[2:]])
    assert (result.exit_code == 0) == ok, result.output
    return result.output


def test_a_file_is_submitted_as_versions_and_logs_are_for_its_author(
    redis_prefix: tuple[redis.Redis, str], tmp_path: Path
) -> None:
    client, prefix = redis_prefix
    token = identity.register_bot(client, prefix, "hb")
    (tmp_path / "bot.py").write_text(BOT)
    target = f"{tmp_path}/bot.py:MyBot"
    assert invoke(prefix, "bot", "submit", "hb", target, "--token", token).startswith("v1")
    assert invoke(prefix, "bot", "submit", "hb", target, "--token", token).startswith("v2")
    listed = json.loads(invoke(prefix, "bot", "versions", "hb", "--json"))
    assert [(v["version"], v["active"], v["status"]) for v in listed] == [
        ("v1", False, "submitted"),
        ("v2", True, "submitted"),
    ]
    assert hosted.code_of(client, prefix, "hb", 2)[1] == "bot.py:MyBot"
    hosted.store_log(client, prefix, "hb", 1, b"x" * (hosted.LOG_BYTES + 10) + b"the end\n")
    shown = invoke(prefix, "bot", "logs", "hb", "--version", "v1", "--token", token)
    assert shown.endswith("the end\n") and len(shown) < hosted.LOG_BYTES + 100
    assert "not its token" in invoke(prefix, "bot", "logs", "hb", "--token", "wrong", ok=False)
    assert "not its token" in invoke(prefix, "bot", "submit", "hb", target, "--token", "x", ok=False)
    missing = invoke(prefix, "bot", "logs", "hb", "--version", "9", "--token", token, ok=False)
    assert "no version v9" in missing


def test_a_folder_with_its_manifest(redis_prefix: tuple[redis.Redis, str], tmp_path: Path) -> None:
    client, prefix = redis_prefix
    token = identity.register_bot(client, prefix, "folder")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "main.py").write_text(BOT)
    (tmp_path / "pkg" / "helper.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "junk.pyc").write_bytes(b"junk")
    (tmp_path / "pkg" / hosted.MANIFEST).write_text('entry = "main.py:MyBot"\n')
    package = hosted.pack(tmp_path / "pkg")
    assert package.files == 3 and package.entry == "main.py:MyBot"
    invoke(prefix, "bot", "submit", "folder", str(tmp_path / "pkg"), "--token", token)
    out = tmp_path / "out"
    out.mkdir()
    hosted.unpack(hosted.code_of(client, prefix, "folder", 1)[0], out)
    assert sorted(p.name for p in out.iterdir()) == ["helper.py", "main.py", hosted.MANIFEST]


@pytest.mark.parametrize(
    ("files", "target", "error"),
    [
        ({"bot.py": BOT}, "bot.py:Other", "defines no class Other"),
        ({"bot.py": "def (:\n"}, "bot.py:MyBot", "syntax error"),
        ({"bot.py": BOT}, "missing.py:MyBot", "no such file"),
        ({"bot.py": BOT}, "bot.py", "expected path/to/bot.py:ClassName"),
        ({"bot.py": BOT}, ".", "no uno-arena-bot.toml"),
        ({"bot.py": BOT, hosted.MANIFEST: "entry = ["}, ".", "not valid TOML"),
        ({"bot.py": BOT, hosted.MANIFEST: 'entry = "bot.py:MyBot"\nextra = 1\n'}, ".", "unknown key extra"),
        ({"bot.py": BOT, hosted.MANIFEST: 'entry = "../bot.py:MyBot"\n'}, ".", "bad entry point"),
        ({"bot.py": BOT, hosted.MANIFEST: 'entry = "gone.py:MyBot"\n'}, ".", "missing entry point: no file"),
    ],
)
def test_bad_submissions_say_why(tmp_path: Path, files: dict[str, str], target: str, error: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(hosted.SubmitError, match=error.replace("(", r"\(").replace(")", r"\)")):
        hosted.pack(Path(f"{tmp_path}/{target}") if target != "." else tmp_path)


def test_over_a_megabyte_packed_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT)
    (tmp_path / "weights.bin").write_bytes(os.urandom(hosted.MAX_PACKED_BYTES + 1))  # random: no compression
    (tmp_path / hosted.MANIFEST).write_text('entry = "bot.py:MyBot"\n')
    with pytest.raises(hosted.SubmitError, match="over the limit of 1048576"):
        hosted.pack(tmp_path)


def test_stored_code_that_escapes_its_folder_is_not_unpacked(tmp_path: Path) -> None:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../evil.py", "x")
    with pytest.raises(hosted.SubmitError, match="bad path"):
        hosted.unpack(buffer.getvalue(), tmp_path)
    assert not (tmp_path.parent / "evil.py").exists()
