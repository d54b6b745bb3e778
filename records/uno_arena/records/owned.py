"""Every Redis key one tournament owns, named from its id and the key prefix: the one list that
`tournament export`, `import` and `delete` read (docs/redis.md describes each key).

A tournament owns:
- its record, schedule, match states, errors, attempts, results list and retries
  (`{p}:tournament:{id}` and `{p}:tournament:{id}:...`, `uno_arena.records.tournament.Keys`);
- each match's record (`{p}:match:{id}-mNNNNN`, `uno_arena.records.match`);
- its stored leaderboard (`{p}:leaderboard:{id}:...`, `uno_arena.leaderboard.board`, whose key names
  are `leaderboard_key` and `LeaderboardPart` here);
- while it runs: each match's lease and queueing lock, live stream (`{p}:live:{match id}`), its
  list of running matches (`{p}:tournament:{id}:running`, `uno_arena.records.live`) and, on a pool of
  servers, where each match was placed (`{p}:tournament:{id}:placed`, `uno_arena.records.pool`).

The first three are *kept*: what an archive holds and an import writes back. The others are
*transient* (locks, leases, live feeds that expire by themselves): deleted with the tournament, never
archived. Beside its keys, a tournament is a member of the prefix's index `{p}:tournaments` (scored by
creation time) and is counted in the leaderboard over every tournament (`{p}:leaderboard:all:...`);
those keys are shared, so they are not listed here. RQ's keys of its jobs are `uno_arena.workers`'
business (`workers.queue`, `workers.removal`). Bots and control tokens belong to no tournament.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from uno_arena.records.live import running_key, stream_key
from uno_arena.records.match import match_key
from uno_arena.records.tournament import Keys, check_id, text

if TYPE_CHECKING:
    import redis


class KeyType(enum.StrEnum):
    """A Redis value's type, as `TYPE` names it."""

    STRING = "string"
    HASH = "hash"
    LIST = "list"
    SET = "set"
    ZSET = "zset"
    STREAM = "stream"


class KeyRole(enum.StrEnum):
    """What a key holds, for what `tournament delete` says it removed."""

    TOURNAMENT = "tournament"  # its record, schedule, states, errors, attempts, results, retries
    MATCH = "match record"
    LEADERBOARD = "leaderboard"
    LIVE = "live feed"  # a running match's stream, the list of running matches, where they were placed
    LOCK = "lock"  # a match's lease or queueing lock, the leaderboard's lock


def leaderboard_key(prefix: str, scope: str) -> str:
    """The base of a stored leaderboard's keys: a tournament id, or `all` (every tournament). Until
    issue 18 the table itself, as JSON (a string: a rebuild deletes it)."""
    return f"{prefix}:leaderboard:{scope}"


class LeaderboardPart(enum.StrEnum):
    """The parts of a stored leaderboard, each the key `{leaderboard_key}:{part}`: the one place their names
    are written (`uno_arena.leaderboard.board.ScopeKeys` names its keys by these)."""

    META = "meta"
    RATINGS = "ratings"
    TALLY = "tally"
    H2H = "h2h"
    MET = "met"
    STEPS = "steps"
    ORDER = "order"
    DIRTY = "dirty"
    LOCK = "lock"


# Each part's type, and whether an archive keeps it: `dirty` (tournaments with results not taken in yet)
# and `lock` are work in progress, which the import's refresh redoes.
LEADERBOARD_PARTS: dict[LeaderboardPart, tuple[KeyType, bool]] = {
    LeaderboardPart.META: (KeyType.HASH, True),
    LeaderboardPart.RATINGS: (KeyType.HASH, True),
    LeaderboardPart.TALLY: (KeyType.HASH, True),
    LeaderboardPart.H2H: (KeyType.HASH, True),
    LeaderboardPart.MET: (KeyType.HASH, True),
    LeaderboardPart.STEPS: (KeyType.HASH, True),
    LeaderboardPart.ORDER: (KeyType.ZSET, True),
    LeaderboardPart.DIRTY: (KeyType.SET, False),
    LeaderboardPart.LOCK: (KeyType.STRING, False),
}


@dataclass(frozen=True, slots=True)
class OwnedKey:
    name: str  # the whole Redis key, prefix included
    type: KeyType
    kind: KeyRole
    kept: bool  # in an archive (else transient: deleted with the tournament, never archived)


def fixed_keys(prefix: str, tournament_id: str) -> list[OwnedKey]:
    """The keys every tournament has (or may have), whatever its matches."""
    keys = Keys(prefix, check_id(tournament_id))
    found = [OwnedKey(keys.tournament, KeyType.HASH, KeyRole.TOURNAMENT, True)]
    found += [OwnedKey(name, KeyType.HASH, KeyRole.TOURNAMENT, True)
              for name in (keys.schedule, keys.state, keys.errors, keys.attempts, keys.retries)]  # fmt: skip
    found.append(OwnedKey(keys.results, KeyType.LIST, KeyRole.TOURNAMENT, True))
    found.append(OwnedKey(running_key(keys), KeyType.HASH, KeyRole.LIVE, False))
    found.append(OwnedKey(keys.placed, KeyType.HASH, KeyRole.LIVE, False))  # the servers of a pool it runs on
    base = leaderboard_key(prefix, tournament_id)
    found.append(OwnedKey(base, KeyType.STRING, KeyRole.LEADERBOARD, False))  # an old version's table
    for part, (kind, kept) in LEADERBOARD_PARTS.items():
        role = KeyRole.LOCK if part is LeaderboardPart.LOCK else KeyRole.LEADERBOARD
        found.append(OwnedKey(f"{base}:{part}", kind, role, kept))
    return found


def match_keys(prefix: str, tournament_id: str, index: int) -> list[OwnedKey]:
    """The keys of one match of the tournament: its record, live stream, lease and queueing lock."""
    keys = Keys(prefix, tournament_id)
    match_id = keys.match_id(index)
    return [
        OwnedKey(match_key(prefix, match_id), KeyType.HASH, KeyRole.MATCH, True),
        OwnedKey(stream_key(prefix, match_id), KeyType.STREAM, KeyRole.LIVE, False),
        OwnedKey(keys.lease(index), KeyType.STRING, KeyRole.LOCK, False),
        OwnedKey(keys.queueing(index), KeyType.STRING, KeyRole.LOCK, False),
    ]


def owned_keys(prefix: str, tournament_id: str, indices: Iterable[int]) -> list[OwnedKey]:
    """Every key the tournament may have, for these match indices (`match_indices`): fixed keys first,
    then each match's, by index."""
    found = fixed_keys(prefix, tournament_id)
    for index in sorted(set(indices)):
        found += match_keys(prefix, tournament_id, index)
    return found


def match_indices(client: redis.Redis, prefix: str, tournament_id: str) -> list[int]:
    """The tournament's match indices: every one its schedule or its states name, and those its record
    counts (0 to `matches` - 1; a record half gone still names its matches through what is left). The
    count is trusted only as far as the schedule's or the states' size: a tournament has one entry of
    each per match, so a record that says more (damaged, or crafted) cannot make this a billion
    indices."""
    keys = Keys(prefix, check_id(tournament_id))
    with client.pipeline(transaction=False) as pipe:
        pipe.hget(keys.tournament, "matches")
        pipe.hkeys(keys.schedule)
        pipe.hkeys(keys.state)
        counted, scheduled, stated = pipe.execute()
    found: set[int] = set()
    if counted is not None and text(counted).isascii() and text(counted).isdigit():
        found.update(range(min(int(counted), max(len(scheduled), len(stated)))))
    for raw in (*scheduled, *stated):
        index = text(raw)
        if index.isascii() and index.isdigit() and len(index) <= 9:
            found.add(int(index))
    return sorted(found)


def tournament_keys(client: redis.Redis, prefix: str, tournament_id: str) -> list[OwnedKey]:
    """Every key the tournament may have in this Redis (whether each exists is not read)."""
    return owned_keys(prefix, tournament_id, match_indices(client, prefix, tournament_id))


def existing(client: redis.Redis, keys: list[OwnedKey], batch: int = 1000) -> list[OwnedKey]:
    """Those of `keys` that exist."""
    found = []
    for start in range(0, len(keys), batch):
        part = keys[start : start + batch]
        with client.pipeline(transaction=False) as pipe:
            for key in part:
                pipe.exists(key.name)
            found += [key for key, present in zip(part, pipe.execute(), strict=True) if present]
    return found


_MATCH_INDEX = re.compile(r"-m(\d{5,9})")


def kept_key(prefix: str, tournament_id: str, name: str) -> OwnedKey | None:
    """The kept key of the tournament that `name` (a whole Redis key) is, or None if it is none of them:
    what an import may write, and nothing else."""
    for key in fixed_keys(prefix, tournament_id):
        if key.name == name:
            return key if key.kept else None
    match_prefix = match_key(prefix, f"{tournament_id}")
    if name.startswith(match_prefix):
        found = _MATCH_INDEX.fullmatch(name[len(match_prefix) :])
        if found is not None:
            (key, *_) = match_keys(prefix, tournament_id, int(found.group(1)))
            return key if key.name == name else None  # the index written as `match_id` writes it
    return None
