"""What every page of the web view reads: the Redis client, its key prefix, how often pages refresh,
and the folder of replay files; one `WebContext` per app, kept in `app.extensions`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import cast

import redis
from flask import current_app

RECENT = 20  # matches listed as recent


@dataclass(frozen=True, slots=True)
class WebContext:
    client: redis.Redis
    prefix: str
    refresh: int  # seconds between a page's updates while its tournament runs
    replays: Path | None  # replay files served at /match/<id> when Redis holds no match of that id
    where: str  # the Redis's address, for messages (never its password)


def context() -> WebContext:
    """The running app's context (inside a request)."""
    return cast(WebContext, current_app.extensions["uno_arena"])
