"""The stored leaderboard: standings and head-to-head of a tournament, and of all tournaments.

Kept in Redis as JSON snapshots, recomputed from every recorded match each
time a match is recorded. Recomputing is a pure function of the recorded
matches (`leaderboard.standings`), so it is idempotent with the recording: a
job that runs twice, or dies between recording and refreshing, leaves the
same table once the next match (or `uno-arena leaderboard --refresh`) is in.

Keys: `{p}:leaderboard:{tournament id}` and `{p}:leaderboard:all` (strings, `Table` as JSON).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import redis

from uno_arena.leaderboard.standings import Standing, head_to_head, standings
from uno_arena.records.match import MatchRecord, match_records

ALL = "all"


def key(prefix: str, scope: str) -> str:
    return f"{prefix}:leaderboard:{scope}"


@dataclass(frozen=True, slots=True)
class Pairing:
    """How often one bot finished ahead of another when both sat at a table (ties half), over `tables`."""

    score: float
    tables: int


@dataclass(frozen=True, slots=True)
class Table:
    """A leaderboard: standings in rank order, head to head (row bot -> column bot), and what it covers."""

    standings: tuple[Standing, ...]
    head_to_head: dict[str, dict[str, Pairing]]
    matches: int
    computed: float  # unix seconds

    @property
    def bots(self) -> list[str]:
        return [row.bot for row in self.standings]

    def pairing(self, bot: str, other: str) -> Pairing | None:
        return self.head_to_head.get(bot, {}).get(other)

    def to_dict(self) -> dict[str, Any]:
        """Plain values: what the JSON API, `--json` and Redis hold."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Table:
        known = {f.name for f in fields(Standing)}
        rows = tuple(Standing(**{k: v for k, v in row.items() if k in known}) for row in values["standings"])
        pairs = {bot: {other: Pairing(float(p["score"]), int(p["tables"])) for other, p in row.items()}
                 for bot, row in values["head_to_head"].items()}  # fmt: skip
        return cls(rows, pairs, int(values["matches"]), float(values["computed"]))


def compute(records: Sequence[MatchRecord]) -> Table:
    pairs = {
        bot: {other: Pairing(score, n) for other, (score, n) in row.items()}
        for bot, row in head_to_head(records).items()
    }
    return Table(tuple(standings(records)), pairs, len(records), time.time())


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


def store(client: redis.Redis, prefix: str, scope: str, records: Sequence[MatchRecord]) -> Table:
    """Compute and store the table, unless a table over more matches is stored already."""
    table = compute(records)
    client.eval(_STORE_IF_NEWER, 1, key(prefix, scope), json.dumps(table.to_dict()), table.matches)
    return table


def load(client: redis.Redis, prefix: str, scope: str) -> Table | None:
    raw = client.get(key(prefix, scope))
    return Table.from_dict(json.loads(raw)) if raw is not None else None


def refresh(client: redis.Redis, prefix: str, tournament_id: str) -> None:
    """Recompute the tournament's and the overall leaderboard from every recorded match."""
    store(client, prefix, tournament_id, match_records(client, prefix, tournament_id))
    store(client, prefix, ALL, match_records(client, prefix, None))


def current(client: redis.Redis, prefix: str, tournament_id: str | None,
            records: Sequence[MatchRecord] | None = None) -> Table:  # fmt: skip
    """The stored table of a tournament (None: of all), or before any job stored one, computed from
    `records` (read from Redis if not given); never written, so viewers stay read-only."""
    stored = load(client, prefix, tournament_id or ALL)
    if stored is not None:
        return stored
    return compute(records if records is not None else match_records(client, prefix, tournament_id))
