"""How much the web view's server takes on: plain values with no imports, so `uno-arena web` shows its
defaults before it knows which install it runs in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """How much the web view's server takes on; `uno-arena web` has a flag for each (docs/leaderboard.md)."""

    threads: int = 8  # requests run at once; more wait, read and buffered, in the event loop
    connection_limit: int = 1000  # open connections; past it new ones wait in the listen backlog
    channel_timeout_s: int = 30  # an idle connection (a request never finished, too) is closed after it
    # live streams open at once from one client address (0: no limit of its own); None: the app's own
    # (`live.LiveLimits.per_client`, 2)
    live_streams_per_client: int | None = None
