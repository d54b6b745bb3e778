"""What every page of the web view reads: the Redis client, its key prefix, how often pages refresh,
and the folder of replay files; one `WebContext` per app, kept in `app.extensions`.

Without Redis (`uno-arena web --replays DIR` and no Redis URL) the app serves the replay files alone:
`client` is None, and only the parts that read no Redis are registered. Nothing here imports redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from flask import current_app

from uno_arena.records.replay import MAX_REPLAY_BYTES

if TYPE_CHECKING:  # annotations only: the replay files alone are served without a Redis client
    import redis

RECENT = 20  # matches listed as recent


@dataclass(frozen=True, slots=True)
class WebContext:
    client: redis.Redis | None  # None: the replay files only, no Redis at all
    prefix: str
    refresh: int  # seconds between a page's updates while its tournament runs
    replays: Path | None  # replay files served at /match/<id> when Redis holds no match of that id
    where: str  # the Redis's address, for messages (never its password); "" without Redis
    max_replay_bytes: int = MAX_REPLAY_BYTES  # a larger replay file is refused (413), never read

    @property
    def store(self) -> redis.Redis:
        """The Redis client, for the parts served only with Redis (never registered without one)."""
        if self.client is None:
            raise RuntimeError("this web view serves replay files only: it has no Redis")
        return self.client


def context() -> WebContext:
    """The running app's context (inside a request)."""
    return cast(WebContext, current_app.extensions["uno_arena"])
