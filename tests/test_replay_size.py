"""Replay files are read within a size limit: an oversize file is refused unread by `uno-arena replay FILE`
(a CLI error) and by a real `uno-arena web --replays DIR` process (a 413, listed as too large), whose
memory stays where it was; a folder's index reads only each file's head."""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.records.test_replay import forfeited_match
from uno_arena.cli.main import cli
from uno_arena.cli.web_commands import MAX_REPLAY_MIB
from uno_arena.records.replay import (
    MAX_REPLAY_BYTES,
    SUMMARY_HEAD_BYTES,
    ReplayFileTooLarge,
    export,
    read_replay_file,
    read_replay_summary,
    write_replay_file,
)

MIB = 1024 * 1024


def oversize(folder: Path, size: int = MAX_REPLAY_BYTES + 1) -> Path:
    """A real replay file (its summary first, as written) whose events, repeated, take it past `size`."""
    values = export(forfeited_match(players=3))
    events = json.dumps(values.pop("events"))[1:-1]
    repeated = ",".join([events] * (size // len(events) + 1))
    path = folder / "big.json"
    path.write_text(f'{json.dumps(values)[:-1]}, "events": [{repeated}]}}', encoding="utf-8")
    assert path.stat().st_size > size
    return path


def test_the_cli_refuses_an_oversize_replay_file_unread(tmp_path: Path) -> None:
    big = tmp_path / "sparse.json"
    with big.open("wb") as file:
        file.truncate(MAX_REPLAY_BYTES + 1)  # sparse: nothing is written, and nothing must be read
    shown = CliRunner().invoke(cli, ["replay", str(big)])
    assert shown.exit_code == 1
    assert "too large to read as a replay file (8 MiB; the limit is 8 MiB); --max-mib" in shown.output
    with pytest.raises(ReplayFileTooLarge):
        read_replay_file(big)
    assert MAX_REPLAY_MIB * MIB == MAX_REPLAY_BYTES  # `uno-arena web`'s default is the same limit


def test_the_limit_is_an_option(tmp_path: Path) -> None:
    small = write_replay_file(forfeited_match(players=3), tmp_path)
    assert CliRunner().invoke(cli, ["replay", str(small), "--max-mib", "1"]).exit_code == 0
    big = tmp_path / "sparse.json"
    with big.open("wb") as file:
        file.truncate(MIB + 1)
    limited = CliRunner().invoke(cli, ["replay", str(big), "--max-mib", "1"])
    assert limited.exit_code == 1 and "(1 MiB; the limit is 1 MiB)" in limited.output


def test_the_index_reads_a_summary_from_the_head_alone(tmp_path: Path) -> None:
    written = write_replay_file(forfeited_match(players=3), tmp_path)
    summary = read_replay_summary(written)
    assert summary["bots"] == ["alice", "bob", "carol"]
    cut = tmp_path / "cut.json"  # the head, then bytes no JSON reader could take
    head = written.read_text(encoding="utf-8").split('"finished"')[0]
    cut.write_text(head + '"events": [' + "x" * (2 * SUMMARY_HEAD_BYTES), encoding="utf-8")
    assert read_replay_summary(cut) == summary


class ReplaysProcess:
    """`uno-arena web --replays DIR` (no Redis) on a free port, in its own process."""

    def __init__(self, folder: Path) -> None:
        command = [sys.executable, "-m", "uno_arena.cli", "web", "--listen", "127.0.0.1:0", "--replays",
                   str(folder)]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=30)
        line = self.process.stdout.readline() if ready else ""
        assert line.startswith(f"replay files of {folder} at http://127.0.0.1:"), line
        self.url = line.split(" at ")[1].split()[0].rstrip("/")

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        return kib / 1024

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()


@pytest.fixture
def replays(tmp_path: Path) -> Iterator[ReplaysProcess]:
    write_replay_file(forfeited_match(players=3), tmp_path)  # f-m00001.json
    oversize(tmp_path)
    process = ReplaysProcess(tmp_path)
    yield process
    process.stop()


def test_the_web_view_refuses_an_oversize_replay_file_with_a_413_and_stays_small(
    replays: ReplaysProcess,
) -> None:
    assert replays.get("/match/f-m00001")[0] == 200
    before = replays.rss_mib()
    for _ in range(3):
        code, page = replays.get("/match/big")
        assert code == 413
        assert "the replay file of &#39;big&#39; is too large to show (" in page
        assert "the limit is 8,388,608: uno-arena web --max-replay-mib)" in page
        code, document = replays.get("/match/big.json")
        assert code == 413 and "too large to show" in json.loads(document)["error"]
    code, index = replays.get("/")
    assert code == 200 and "too large to show" in index and "alice" in index  # the small file listed
    assert replays.rss_mib() - before < 20  # the 8 MiB file was never read (read, it costs ~80 MiB)
