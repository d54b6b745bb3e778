"""Protocol v1: the generated bindings (`*_pb2`) and `codec`, the one converter between them and the
rules core's values."""

# first, before any module of this package: `build` decides whether compiled modules (`codec`) load compiled
from uno_arena.rules import build as _build  # noqa: F401

DEFAULT_SERVER = "127.0.0.1:50051"
"""Where a match server listens, and where its clients (bots, workers, the CLI) look for it, unless told."""
