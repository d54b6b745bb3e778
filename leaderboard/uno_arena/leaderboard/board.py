"""The stored leaderboard: standings and head-to-head of a tournament, and of all tournaments.

Kept in Redis as JSON snapshots, recomputed from every recorded result each
time a match is recorded. Recomputing is a pure function of the recorded
results (`leaderboard.standings`), so it is idempotent with the recording: a
job that runs twice, or dies between recording and refreshing, leaves the
same table once the next match (or `uno-arena leaderboard --refresh`) is in.

Keys: `{p}:leaderboard:{tournament id}` and `{p}:leaderboard:all` (strings, JSON).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import redis

from uno_arena.leaderboard.standings import head_to_head, standings
from uno_arena.workers import recording

ALL = "all"


def key(prefix: str, scope: str) -> str:
    return f"{prefix}:leaderboard:{scope}"


def compute(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "standings": [row.to_dict() for row in standings(summaries)],
        "head_to_head": {
            bot: {other: {"score": score, "tables": n} for other, (score, n) in row.items()}
            for bot, row in head_to_head(summaries).items()
        },
        "matches": len(summaries),
        "computed": time.time(),
    }


# Results are only ever added, so a table over more matches is the newer one: two jobs refreshing
# at once can finish in either order without an older table overwriting a newer one.
_STORE_IF_NEWER = """
local current = redis.call('GET', KEYS[1])
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and tonumber(decoded['matches']) > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""


def store(
    client: redis.Redis, prefix: str, scope: str, summaries: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Compute and store the table, unless a table over more matches is stored already."""
    board = compute(summaries)
    client.eval(_STORE_IF_NEWER, 1, key(prefix, scope), json.dumps(board), board["matches"])
    return board


def load(client: redis.Redis, prefix: str, scope: str) -> dict[str, Any] | None:
    raw = client.get(key(prefix, scope))
    return json.loads(raw) if raw is not None else None


def current(client: redis.Redis, prefix: str, tournament_id: str | None,
            summaries: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """The stored table of a tournament (None: of all), or before any job stored one, computed from
    `summaries` (read from Redis if not given); never written, so viewers stay read-only."""
    stored = load(client, prefix, tournament_id or ALL)
    if stored is not None:
        return stored
    return compute(summaries if summaries is not None else recording.summaries(client, prefix, tournament_id))
