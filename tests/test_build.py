"""Which build runs, and how setup.py chooses it (docs/building.md).

These run on whichever build is installed; CI runs them on both.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner
from setuptools import Distribution, Extension  # type: ignore[import-untyped]

import uno_arena.rules
from uno_arena.cli.main import cli
from uno_arena.rules import build

ROOT = Path(__file__).resolve().parent.parent


def test_the_build_is_one_of_two_and_every_report_names_it() -> None:
    assert build.BUILD in ("compiled", "interpreted")
    assert uno_arena.rules.BUILD == build.BUILD
    assert build.describe().startswith(f"{build.BUILD} build")
    importlib.import_module("uno_arena.server.match_host")  # the server's hot path, with wire and gateway
    compiled = build.compiled_modules()
    if build.BUILD == "compiled":
        assert {"uno_arena.rules.hand", "uno_arena.rules.legal", "uno_arena.rules.event"} <= set(compiled)
        hot_path = {"uno_arena.v1.codec", "uno_arena.server.match_host", "uno_arena.server.gateway"}
        assert hot_path <= set(compiled)
    else:
        assert compiled == []


def test_version_and_welcome_say_which_build_runs() -> None:
    from uno_arena.server.servicers import SERVER_NAME

    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("uno-arena, version ")
    assert result.output.rstrip().endswith(f"({build.describe()})")
    assert SERVER_NAME.endswith(f"({build.describe()})")


def _build_in_a_new_process(**environment: str) -> str:
    probe = (
        "import uno_arena.rules as r, uno_arena.rules.build as b; print(r.BUILD, len(b.compiled_modules()))"
    )
    env = {k: v for k, v in os.environ.items() if k != build.ENVIRONMENT} | environment
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_compiled_install_runs_compiled_unless_asked_for_its_source() -> None:
    """The extensions beside the sources are what make a build compiled; UNO_ARENA_BUILD=interpreted
    at run time makes the same install import every module from its source instead."""
    compiled_install = build._has_compiled_install()
    plain = _build_in_a_new_process()
    assert plain.split()[0] == ("compiled" if compiled_install else "interpreted")
    assert _build_in_a_new_process(UNO_ARENA_BUILD="interpreted") == "interpreted 0"


# --- setup.py's choice ------------------------------------------------------------------


@pytest.fixture
def setup_py(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """setup.py as a module: its `setup()` runs only as `__main__`, as setuptools runs it."""
    monkeypatch.delenv("UNO_ARENA_BUILD", raising=False)
    spec = importlib.util.spec_from_file_location("uno_arena_setup_under_test", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def mypycify(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """mypyc's entry point, replaced: what it was asked to compile (compiling is CI's wheel build)."""
    import mypyc.build

    calls: list[list[str]] = []

    def fake(paths: list[str], **options: Any) -> list[str]:
        calls.append(paths)
        return ["extension"]

    monkeypatch.setattr(mypyc.build, "mypycify", fake)
    return calls


@pytest.mark.parametrize(
    ("command", "asked", "compiles", "says"),
    [
        ("bdist_wheel", "", True, None),
        ("bdist_wheel", "interpreted", False, "interpreted (UNO_ARENA_BUILD=interpreted)"),
        ("editable_wheel", "", False, "interpreted (an editable install"),
        ("editable_wheel", "compiled", True, None),
        ("egg_info", "", False, None),  # metadata only: nothing to build, nothing said
    ],
)
def test_setup_compiles_wheels_and_leaves_editable_installs_interpreted(
    setup_py: ModuleType,
    mypycify: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    asked: str,
    compiles: bool,
    says: str | None,
) -> None:
    monkeypatch.setattr(sys, "argv", ["setup.py", command])
    if asked:
        monkeypatch.setenv("UNO_ARENA_BUILD", asked)
    assert setup_py._ext_modules() == (["extension"] if compiles else [])
    said = capsys.readouterr().err
    if compiles:
        (paths,) = mypycify
        assert "--no-warn-unused-configs" in paths
        sources = [path for path in paths if not path.startswith("--")]
        assert "rules/uno_arena/rules/hand.py" in sources
        assert all((ROOT / path).is_file() for path in sources)
    else:
        assert mypycify == []
    if says is not None:
        assert said.startswith(f"uno-arena build: {says}") and said.count("\n") == 1
    elif not compiles:
        assert said == ""


def test_setup_refuses_an_unknown_build(setup_py: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["setup.py", "bdist_wheel"])
    monkeypatch.setenv("UNO_ARENA_BUILD", "fast")
    with pytest.raises(SystemExit, match="expected 'compiled' or 'interpreted'"):
        setup_py._ext_modules()


def test_a_failed_compile_falls_back_to_the_source(
    setup_py: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As with no C compiler: the build goes on without extensions, and says so once."""
    source = tmp_path / "broken.c"
    source.write_text("#error this compile fails, as it would without a C compiler\n")
    distribution = Distribution(
        {"name": "probe", "ext_modules": [Extension("probe_fallback", [str(source)])]}
    )
    command = setup_py.OptionalBuildExt(distribution)
    command.build_lib = str(tmp_path / "lib")
    command.build_temp = str(tmp_path / "temp")
    command.ensure_finalized()
    command.run()
    assert command.extensions == []
    assert not list((tmp_path / "lib").glob("probe_fallback*"))
    said = capsys.readouterr().err
    assert said.startswith("uno-arena build: interpreted (the mypyc build failed") and said.count("\n") == 1


@pytest.mark.parametrize("in_place", [False, True])
def test_setup_clears_what_an_earlier_build_compiled(
    setup_py: ModuleType, tmp_path: Path, in_place: bool
) -> None:
    """setuptools copies build/lib whole into the wheel: an interpreted build must not ship them; and an
    interpreted editable install must not leave compiled files beside the sources, to run instead."""
    setup_py.__file__ = str(tmp_path / "setup.py")
    so = "cpython-311-x86_64-linux-gnu.so"
    lib = tmp_path / "build" / "lib.linux-x86_64-cpython-311"
    stale = [lib / "uno_arena" / "rules" / f"hand.{so}", lib / f"uno_arena_native__mypyc.{so}"]
    beside = [
        tmp_path / "rules" / "uno_arena" / "rules" / f"hand.{so}",
        tmp_path / f"uno_arena_native__mypyc.{so}",
    ]
    kept = [lib / "uno_arena" / "rules" / "hand.py", tmp_path / "rules" / "uno_arena" / "rules" / "hand.py"]
    for path in [*stale, *beside, *kept]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    setup_py._clear_earlier_builds(in_place)
    assert not any(path.exists() for path in stale)
    assert all(path.exists() != in_place for path in beside)
    assert all(path.exists() for path in kept)
