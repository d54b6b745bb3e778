"""Every `RULINGS n` the repository cites names a ruling of docs/rulings.md, which numbers them 1, 2, ..."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULINGS = ROOT / "docs" / "rulings.md"
HEADING = re.compile(r"^### (\d+)\. \S", re.MULTILINE)
# "RULINGS 17", "RULINGS 9, 10", "RULINGS 25-28", "RULINGS 19, 27": numbers and ranges after the word
CITATION = re.compile(r"RULINGS\s+(\d+(?:\s*[-\u2013]\s*\d+)?(?:\s*,\s*\d+(?:\s*[-\u2013]\s*\d+)?)*)")


def rulings() -> list[int]:
    return [int(number) for number in HEADING.findall(RULINGS.read_text(encoding="utf-8"))]


def cited_numbers(text: str) -> set[int]:
    numbers: set[int] = set()
    for citation in CITATION.findall(text):
        for part in citation.split(","):
            bounds = [int(number) for number in re.findall(r"\d+", part)]  # one number, or a range's two
            numbers.update(range(bounds[0], bounds[-1] + 1))
    return numbers


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = [ROOT / name for name in listed.decode().split("\0") if name]
    return [f for f in files if f.suffix in {".py", ".md", ".proto", ".js", ".html", ".pyi", ".toml"}]


def test_the_rulings_are_numbered_from_one_without_gaps() -> None:
    assert rulings() == list(range(1, 30))


def test_citations_are_read_whole() -> None:
    cited = cited_numbers("see RULINGS 9, 10 and RULINGS 25-28; RULINGS 29, a seat")
    assert cited == {9, 10, 25, 26, 27, 28, 29}
    assert cited_numbers("RULINGS 1-2") == {1, 2}
    assert cited_numbers("RULINGS defaults") == set()


def test_every_ruling_the_repository_cites_exists() -> None:
    known = set(rulings())
    citing: dict[int, list[str]] = {}
    for path in tracked_text_files():
        if path == RULINGS or not path.is_file():
            continue
        for number in cited_numbers(path.read_text(encoding="utf-8", errors="replace")):
            citing.setdefault(number, []).append(str(path.relative_to(ROOT)))
    assert len(citing) >= 25, "hardly any citation found: is the pattern still right?"
    unknown = {n: files for n, files in citing.items() if n not in known}
    assert not unknown, f"cited rulings not in docs/rulings.md: {unknown}"
