"""Which build is running: the rules core compiled with mypyc, or the same source interpreted.

A compiled install holds each compiled module twice, its extension (`hand.cpython-311-...so`) and
its source (`hand.py`), and Python imports the extension. `UNO_ARENA_BUILD=interpreted` in the
environment makes it import the source instead (this module must then be imported before any
compiled one: every package with a compiled module imports it first), so one install runs both
builds, side by side in two processes. Not compiled itself, nor the packages' `__init__`.

See docs/building.md.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

ENVIRONMENT = "UNO_ARENA_BUILD"
"""The variable that asks for a build: when installing (setup.py) and, `interpreted` only, at run time."""

_SWITCHED = ("uno_arena.",)
"""The modules that may be compiled: any of the namespace's (setup.py says which; a module without an
extension is found as its source either way, so the rules core need not name the packages above it)."""

_PROBE = "uno_arena.rules.hand"
"""A module that every compiled build compiles: whether it was is whether the build is compiled."""


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the `.py` source of the switched packages' modules, ahead of their compiled extensions.

    All of them or none: compiled modules share one library and call each other directly, so one
    loaded from source among compiled ones would not be the class they expect.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_SWITCHED) or path is None:
            return None
        leaf = fullname.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, leaf + ".py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def _asked() -> str:
    asked = os.environ.get(ENVIRONMENT, "").strip().lower()
    return asked if asked in ("compiled", "interpreted") else ""


def _install_source_finder() -> bool:
    """Run the source when asked to; whether it is asked (and so done)."""
    if _asked() != "interpreted":
        return False
    if not any(isinstance(finder, _SourceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder())
    return True


def _compiled(module: str) -> bool:
    """Whether importing `module` now would load a compiled extension (without importing it)."""
    loaded = sys.modules.get(module)
    origin = getattr(loaded, "__file__", None) if loaded is not None else None
    if origin is None:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
    return origin is not None and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


FORCED_INTERPRETED = _install_source_finder()
"""Whether `UNO_ARENA_BUILD=interpreted` made a compiled install run its source."""

BUILD = "compiled" if _compiled(_PROBE) else "interpreted"
"""`compiled` (mypyc) or `interpreted`: the build that this process runs."""


def compiled_modules() -> list[str]:
    """The modules of the switched packages that this process loaded compiled, sorted."""
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if name.startswith(_SWITCHED)
        and str(getattr(module, "__file__", "")).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    )


def describe() -> str:
    """One phrase for `--version`, the server's log and `Welcome.server`: which build, and why."""
    if BUILD == "compiled":
        return "compiled build, mypyc"
    if FORCED_INTERPRETED and _has_compiled_install():
        return f"interpreted build, {ENVIRONMENT}=interpreted"
    return "interpreted build"


def _has_compiled_install() -> bool:
    """Whether the installed rules core has compiled extensions (looked for, not imported)."""
    spec = importlib.util.find_spec(_PROBE.rpartition(".")[0])
    folders = spec.submodule_search_locations if spec is not None else None
    leaf = _PROBE.rpartition(".")[2]
    return any(
        os.path.isfile(os.path.join(folder, leaf + suffix))
        for folder in folders or ()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )
