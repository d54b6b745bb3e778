"""RQ's supported range: pyproject.toml bounds it on both sides (ArenaWorker and queue.py rely on how RQ
works, which a new release may change), and the RQ installed is inside it. CI runs the worker tests on the
range's lowest release and on its highest (.ci/run)."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def rq_requirement() -> Requirement:
    """The `server` extra's requirement on rq."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [rq] = [requirement for requirement in map(Requirement, extras["server"]) if requirement.name == "rq"]
    return rq


def test_the_rq_range_has_a_lower_and_an_upper_bound() -> None:
    specifier = rq_requirement().specifier
    lowest = [Version(s.version) for s in specifier if s.operator == ">="]
    above = [Version(s.version) for s in specifier if s.operator == "<"]
    assert len(lowest) == 1 and len(above) == 1, f"rq{specifier}: want rq>=LOWEST,<NEXT"
    assert lowest[0] < above[0] and lowest[0].major == 3


def test_the_installed_rq_is_inside_the_range() -> None:
    installed = version("rq")
    specifier = rq_requirement().specifier
    assert specifier.contains(installed, prereleases=True), f"rq {installed} is outside rq{specifier}"
