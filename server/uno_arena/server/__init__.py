# first, before any module of this package: `build` decides whether compiled modules load compiled
from uno_arena.rules import build as _build  # noqa: F401
