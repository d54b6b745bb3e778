"""The compiled build: the rules core and the server's hot path compiled with mypyc, when they can
be (docs/building.md).

Everything else about the package is in pyproject.toml; this file only decides on `ext_modules`.

- A wheel (`pip install .`, `pip wheel .`) compiles `COMPILED` with mypyc when a C compiler works,
  and falls back to the same pure-Python source when not (no compiler, a failed build).
- An editable install (`pip install -e .`) stays interpreted, so an edit never runs stale code: the
  compiled files would sit next to the sources and shadow them. `UNO_ARENA_BUILD=compiled` asks for
  it anyway; an interpreted editable install deletes compiled files left beside the sources.
- `UNO_ARENA_BUILD=interpreted` never compiles.

Either way one line on stderr says which build this is (`pip install -v` shows it). At run time
`uno_arena.rules.build` says which build is running.
"""

from __future__ import annotations

import glob
import os
import sys
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

# The modules compiled. Left out: `__init__` and `build.py` (which switch builds at import), and
# `config.py` (its constructor converts strings to enums after setting them, which a compiled class's
# typed attributes refuse; a config is built once a match).
RULES = [
    "value",
    "card",
    "action",
    "event",
    "dealer",
    "hand",
    "legal",
    "observation",
    "validate",
    "match",
    "runner",
    "replay",
    "position",
    "deck",
    "statistics",
]
CODEC = ["codec"]  # the one converter between the rules core's values and the wire
SERVER = ["match_host", "gateway"]  # the server's hot path: a decision's request and its answer
ENV = ["table"]  # the RL environments' hot path: a step and a seat's vector (numpy-free; docs/rl.md)
COMPILED = (
    [f"rules/uno_arena/rules/{name}.py" for name in RULES]
    + [f"proto/uno_arena/v1/{name}.py" for name in CODEC]
    + [f"server/uno_arena/server/{name}.py" for name in SERVER]
    + [f"env/uno_arena/env/{name}.py" for name in ENV]
)

GROUP = "uno_arena_native"  # the shared library of the compiled modules: uno_arena_native__mypyc
ENVIRONMENT = "UNO_ARENA_BUILD"


def _say(message: str) -> None:
    print(f"uno-arena build: {message}", file=sys.stderr, flush=True)


def _editable() -> bool:
    """Whether setuptools is building an editable install (PEP 660) or a legacy `develop` one."""
    return any(command in sys.argv for command in ("editable_wheel", "develop"))


def _building() -> bool:
    """Whether this run builds code: pip also runs setup.py for metadata only (`egg_info`,
    `dist_info`), where compiling would only cost time."""
    return any(command in sys.argv for command in ("bdist_wheel", "build", "build_ext", "install")) or (
        _editable()
    )


class OptionalBuildExt(build_ext):
    """Build the compiled modules if a C compiler can; otherwise leave the pure-Python source alone."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # a missing compiler or a failed compile: the source still works
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            first = first if len(first) <= 120 else first[:117] + "..."
            # no half build: a module's shim without the shared library would fail at import
            for ext in self.extensions:
                built = self.get_ext_fullpath(ext.name)
                if os.path.exists(built):
                    os.remove(built)
            self.extensions = []
            _say(f"interpreted (the mypyc build failed: {first}); the pure-Python source is installed")
        else:
            if self.extensions:
                _say(f"compiled (mypyc: {len(COMPILED)} modules)")


def _clear_earlier_builds(in_place: bool) -> None:
    """Delete compiled files an earlier build left: in build/lib, which setuptools copies whole into
    the wheel (so an interpreted build, or one compiling fewer modules, would ship them); and, for an
    interpreted editable install, beside the sources, where they would run instead of them."""
    here = os.path.dirname(os.path.abspath(__file__))
    patterns = ["build/lib*/uno_arena/**/*.so", "build/lib*/uno_arena/**/*.pyd", "build/lib*/*__mypyc*"]
    if in_place:
        patterns += [f"{source[: -len('.py')]}.*.so" for source in COMPILED]
        patterns += [f"{source[: -len('.py')]}.*.pyd" for source in COMPILED]
        patterns += [f"{GROUP}__mypyc*"]
    for pattern in patterns:
        for stale in glob.glob(os.path.join(here, pattern), recursive=True):
            os.remove(stale)


def _ext_modules() -> list[Any]:
    asked = os.environ.get(ENVIRONMENT, "").strip().lower()
    if asked not in ("", "compiled", "interpreted"):
        raise SystemExit(f"{ENVIRONMENT}={asked!r}: expected 'compiled' or 'interpreted'")
    if not _building():
        return []
    if asked == "interpreted":
        _say(f"interpreted ({ENVIRONMENT}=interpreted)")
        return []
    if _editable() and asked != "compiled":
        _say(f"interpreted (an editable install; {ENVIRONMENT}=compiled compiles it in place)")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _say("interpreted (mypyc is not installed)")
        return []
    try:
        # pyproject's [tool.mypy] applies; warn_unused_configs would fail the build on the overrides
        # for modules this build does not see
        return list(mypycify(["--no-warn-unused-configs", *COMPILED], group_name=GROUP))
    except (Exception, SystemExit) as error:  # mypyc refused the source: it still runs interpreted
        _say(f"interpreted (mypyc could not compile: {error})")
        return []


if __name__ == "__main__":  # as setuptools runs it; tests import it to check the choices above
    extensions = _ext_modules()
    if _building():
        _clear_earlier_builds(in_place=_editable() and not extensions)
    setup(ext_modules=extensions, cmdclass={"build_ext": OptionalBuildExt})
