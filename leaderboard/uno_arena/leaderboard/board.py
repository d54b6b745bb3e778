"""The stored leaderboard: standings and head-to-head of a tournament, and of all tournaments.

Kept in Redis as running sums, updated by each match job from the results recorded since the last
update, so recording a match costs the same at the 100,000th match as at the first (docs/performance.md).
The stored table always equals `compute` over the same recorded matches (a test holds them so):

- Counts (matches, wins, points, faults, head-to-head scores) are integer sums, added with HINCRBY in
  whatever order results arrive (`standings.tally`, `standings.pair_scores`).
- Ratings depend on the order of matches, which is match-id order (`ratings.order_key`). The last
  `WINDOW` rating steps are kept with each bot's rating before the step, so a result that arrives after
  later ones (parallel workers finish out of order) undoes those steps, rates itself and redoes them.
  A result older than the window (a match rerun long after) rebuilds the scope from every record.
- Which results are in: how much of each tournament's results list (`{p}:tournament:{id}:results`,
  each recorded match once, in recording order) has been added. A job that dies before updating, or
  runs twice, changes nothing: the next update reads the list from where the last one stopped.

Updates are coalesced: a job marks its tournament as having new results (`dirty`) and tries to take
the scope's lock; a job that finds it taken leaves, and the holder takes every marked tournament in,
over and over until none is left. Writes are a MULTI/EXEC under WATCH of the scope's `meta` hash, so
two writers can never both commit from the same state, lock or no lock.

Nothing is written for a tournament that is not listed (`tournament delete` takes its id out of the
prefix's index `{p}:tournaments` before it deletes its keys; `tournament import` lists it last): its
mark and its table's lock are set by scripts that check the index, and a table's update WATCHes the
index too, so a refresh that was already running when its tournament was deleted commits nothing of it
and re-creates none of its keys.

Keys (docs/redis.md), for a scope (a tournament id, or `all`) under `{p}:leaderboard:{scope}`:
`:meta`, `:ratings`, `:tally`, `:h2h`, `:met`, `:steps`, `:order`, `:dirty`, `:lock`.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import redis

from uno_arena.leaderboard.ratings import Outcome, Rating, order_key, outcome, step
from uno_arena.leaderboard.standings import (
    COUNTS,
    Standing,
    head_to_head,
    pair_scores,
    pairing,
    ranked,
    row,
    standings,
    tally,
)
from uno_arena.records.match import MatchRecord, match_key, match_records
from uno_arena.records.owned import LeaderboardPart, leaderboard_key
from uno_arena.records.tournament import Keys, TournamentError, exists, index_key, list_ids, text

ALL = "all"
WINDOW = 2048  # rating steps kept undoable: far more than results ever arrive out of order
LOCK_MS = 120_000  # a holder that died frees the scope after this; WATCH keeps a slow one correct
HOLD_BUDGET_S = 30.0  # a job takes marked results in for this long at most, then goes back to playing
WAIT_FOR_LOCK_S = 60.0  # how long a forced rebuild (`leaderboard --refresh`) waits for the holder


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
        """Plain values: what the JSON API and `--json` give."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Table:
        known = {f.name for f in fields(Standing)}
        rows = tuple(Standing(**{k: v for k, v in row.items() if k in known}) for row in values["standings"])
        pairs = {bot: {other: Pairing(float(p["score"]), int(p["tables"])) for other, p in row.items()}
                 for bot, row in values["head_to_head"].items()}  # fmt: skip
        return cls(rows, pairs, int(values["matches"]), float(values["computed"]))


def compute(records: Iterable[MatchRecord]) -> Table:
    """The full recomputation: every record, rated in match-id order."""
    ordered = sorted(records, key=lambda r: order_key(r.match_id))
    pairs = {
        bot: {other: Pairing(score, n) for other, (score, n) in row.items()}
        for bot, row in head_to_head(ordered).items()
    }
    return Table(tuple(standings(ordered)), pairs, len(ordered), time.time())


@dataclass(frozen=True, slots=True)
class ScopeKeys:
    """The Redis keys of one stored leaderboard: `{base}:{part}`, named by `records.owned.LeaderboardPart`
    (which `tournament export`, `import` and `delete` read too)."""

    base: str

    def part(self, part: LeaderboardPart) -> str:
        return f"{self.base}:{part}"

    @property
    def meta(self) -> str:
        """Hash: `built`, `matches`, `updated`, `floor` (the last order key out of the window), and
        `cursor:{tournament id}`: how many entries of its results list are in."""
        return self.part(LeaderboardPart.META)

    @property
    def ratings(self) -> str:
        return self.part(LeaderboardPart.RATINGS)  # hash: bot -> "mu sigma" (repr floats: exact)

    @property
    def tally(self) -> str:
        return self.part(LeaderboardPart.TALLY)  # hash: "bot count" -> integer (`standings.COUNTS`)

    @property
    def h2h(self) -> str:
        return self.part(LeaderboardPart.H2H)  # hash: "bot other" -> half-points bot scored against other

    @property
    def met(self) -> str:
        return self.part(LeaderboardPart.MET)  # hash: "bot other" -> tables they shared

    @property
    def steps(self) -> str:
        return self.part(LeaderboardPart.STEPS)  # hash: order key -> JSON {id, bots, ranks, before}

    @property
    def order(self) -> str:
        return self.part(LeaderboardPart.ORDER)  # sorted set, all scores 0: the window's order keys

    @property
    def dirty(self) -> str:
        return self.part(LeaderboardPart.DIRTY)  # set: tournaments with results not taken in yet

    @property
    def lock(self) -> str:
        return self.part(LeaderboardPart.LOCK)

    @property
    def state(self) -> tuple[str, ...]:
        """What a rebuild writes from scratch."""
        return (self.meta, self.ratings, self.tally, self.h2h, self.met, self.steps, self.order)


def key(prefix: str, scope: str) -> str:
    """The scope's key base; until this version the table itself, as JSON (removed by a rebuild). The
    names are `uno_arena.records.owned`'s, which lists a tournament's keys for export and deletion."""
    return leaderboard_key(prefix, scope)


def scope_keys(prefix: str, scope: str) -> ScopeKeys:
    return ScopeKeys(key(prefix, scope))


def load(client: redis.Redis, prefix: str, scope: str) -> Table | None:
    """The stored table, or None before any job stored one."""
    keys = scope_keys(prefix, scope)
    with client.pipeline(transaction=True) as pipe:  # one snapshot of every part
        for part in (keys.meta, keys.ratings, keys.tally, keys.h2h, keys.met):
            pipe.hgetall(part)
        meta, ratings, tallies, halves, met = (_texts(values) for values in pipe.execute())
    if not meta.get("built"):
        return None
    counts: dict[str, dict[str, int]] = {}
    for field, value in tallies.items():
        bot, _, name = field.rpartition(" ")
        counts.setdefault(bot, dict.fromkeys(COUNTS, 0))[name] = int(value)
    rows = ranked(row(bot, _rating(ratings[bot]), totals) for bot, totals in counts.items())
    pairs: dict[str, dict[str, Pairing]] = {}
    for field, tables in met.items():
        bot, other = field.split(" ")
        pairs.setdefault(bot, {})[other] = Pairing(*pairing(int(halves.get(field, 0)), int(tables)))
    return Table(tuple(rows), pairs, int(meta.get("matches", 0)), float(meta.get("updated", 0.0)))


def current(client: redis.Redis, prefix: str, tournament_id: str | None,
            records: Sequence[MatchRecord] | None = None) -> Table:  # fmt: skip
    """The stored table of a tournament (None: of all), or before any job stored one, computed from
    `records` (read from Redis if not given); never written, so viewers stay read-only."""
    stored = load(client, prefix, tournament_id or ALL)
    if stored is not None:
        return stored
    return compute(records if records is not None else match_records(client, prefix, tournament_id))


def refresh(client: redis.Redis, prefix: str, tournament_id: str) -> None:
    """Take the tournament's new results into its table and the overall one (a job calls this after
    recording its match); returns at once if another job holds a table's lock, which then takes them.
    A tournament deleted before or meanwhile (`tournament delete`) has no table to write: nothing of it
    is written."""
    if not exists(client, prefix, tournament_id):
        return
    for scope in (tournament_id, ALL):
        if not _mark(client, prefix, scope, [tournament_id]):
            return  # deleted since: not listed any more
        _drain(client, prefix, scope, rebuild=False)


# Mark listed tournaments (ARGV) as having results to take in (KEYS[2]: a scope's `dirty`); those not in
# the prefix's index (KEYS[1]) are deleted, or not imported yet: they are not marked. How many were.
_MARK = """
local marked = 0
for i = 1, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('SADD', KEYS[2], ARGV[i])
    marked = marked + 1
  end
end
return marked
"""


def _mark(client: redis.Redis, prefix: str, scope: str, tournaments: list[str]) -> int:
    return int(client.eval(_MARK, 2, index_key(prefix), scope_keys(prefix, scope).dirty, *tournaments))


# Take a scope's lock (KEYS[1]) for ARGV[2] ms; a tournament's (ARGV[3], not '') only while it is listed in
# the index (KEYS[2]). 1: taken; 0: another holder has it; -1: the tournament is not listed.
_LOCK = """
if ARGV[3] ~= '' and not redis.call('ZSCORE', KEYS[2], ARGV[3]) then return -1 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
"""


def take_in_imported(client: redis.Redis, prefix: str, tournament_id: str) -> None:
    """Count a tournament just imported (`tournament import`, its own table imported with it) in the
    table over every tournament. One that still counts a tournament of this id (deleted without the
    table being rebuilt: its cursor for the id is left) is rebuilt; else the results are added."""
    meta = scope_keys(prefix, ALL).meta
    if client.hexists(meta, f"cursor:{tournament_id}"):
        rebuild(client, prefix, ALL)
    else:
        refresh(client, prefix, tournament_id)


def forget_deleted(client: redis.Redis, prefix: str) -> bool:
    """Rebuild the table over every tournament after one was deleted (`tournament delete`), so that it
    no longer counts that one's matches; True if there was a stored table to rebuild (none: the web view
    and `leaderboard` compute it from the records left, and the next match job stores it)."""
    if load(client, prefix, ALL) is None:
        return False
    rebuild(client, prefix, ALL)
    return True


def rebuild(client: redis.Redis, prefix: str, scope: str) -> Table:
    """Recompute the scope's table from every recorded match (`uno-arena leaderboard --refresh`). A
    TournamentError for a tournament that is not listed (deleted, or not imported yet): nothing is written."""
    _drain(client, prefix, scope, rebuild=True)
    if scope != ALL and not exists(client, prefix, scope):
        raise TournamentError(f"no tournament {scope!r} (see `uno-arena tournament list`)")
    table = load(client, prefix, scope)
    assert table is not None  # just built
    return table


def _drain(client: redis.Redis, prefix: str, scope: str, rebuild: bool) -> None:
    """Hold the scope's lock and take marked results in until none is left (or the budget is spent).

    A job that marked its tournament and found the lock taken relies on the holder: the holder checks
    for marks after releasing the lock, so a mark made while it held the lock is never left behind.
    """
    keys = scope_keys(prefix, scope)
    deadline = time.monotonic() + HOLD_BUDGET_S
    waited_until = time.monotonic() + WAIT_FOR_LOCK_S
    pause = 0.01
    listed = "" if scope == ALL else scope  # a tournament's lock is taken only while it is listed
    while True:
        token = secrets.token_hex(8)
        taken = client.eval(_LOCK, 2, keys.lock, index_key(prefix), token, LOCK_MS, listed)
        if taken == -1:
            return  # deleted: nothing of it is written
        if not taken:
            if not rebuild or time.monotonic() > waited_until:
                return
            time.sleep(pause)  # a forced rebuild waits its turn (the holder is mid-update)
            pause = min(pause * 2, 0.5)
            continue
        claimed: set[str] = set()
        try:
            popped: list[bytes] | None = client.spop(keys.dirty, 1 << 30)  # type: ignore[assignment]
            claimed = {text(t) for t in popped or []}
            if claimed or rebuild:
                _update(client, prefix, scope, claimed, rebuild)
        except BaseException:
            if claimed:  # leave them marked for the next update (those still listed)
                _mark(client, prefix, scope, sorted(claimed))
            raise
        finally:
            client.eval(_RELEASE, 1, keys.lock, token)
        rebuild = False
        if not client.scard(keys.dirty) or time.monotonic() > deadline:
            return


_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def _update(client: redis.Redis, prefix: str, scope: str, claimed: set[str], rebuild: bool) -> None:
    """One update under WATCH of `meta` and of the prefix's index of tournaments: retried from a fresh
    read if another writer committed first, or a tournament was deleted (or listed) meanwhile. A
    tournament's table is not written once the tournament is no longer listed."""
    keys = scope_keys(prefix, scope)
    listed = index_key(prefix)
    while True:
        with client.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(keys.meta, listed)  # type: ignore[no-untyped-call]
                if scope != ALL and pipe.zscore(listed, scope) is None:
                    pipe.unwatch()
                    return  # deleted: its table is not written
                meta = _texts(pipe.hgetall(keys.meta))
                if rebuild or not meta.get("built") or not _add(client, pipe, prefix, keys, meta, claimed):
                    _rebuild(client, pipe, prefix, scope, keys)
                return
            except redis.WatchError:
                continue


def _add(client: redis.Redis, pipe: Any, prefix: str, keys: ScopeKeys, meta: Mapping[str, str],
         tournaments: Iterable[str]) -> bool:  # fmt: skip
    """Add the tournaments' results recorded since the last update; False if one is older than the
    window (the caller rebuilds)."""
    asked = sorted(tournaments)
    with client.pipeline(transaction=False) as reads:  # a deleted one is not counted (`_update`)
        for tournament_id in asked:
            reads.zscore(index_key(prefix), tournament_id)
        listed = [t for t, score in zip(asked, reads.execute(), strict=True) if score is not None]
    cursors = {t: int(meta.get(f"cursor:{t}", 0)) for t in listed}
    with client.pipeline(transaction=False) as reads:
        for tournament_id, start in cursors.items():
            reads.lrange(Keys(prefix, tournament_id).results, start, -1)
        listed = reads.execute()
    ids = {t: [text(i) for i in found] for t, found in zip(cursors, listed, strict=True)}
    records = _records(client, prefix, [i for found in ids.values() for i in found])
    if not records:
        pipe.unwatch()
        return True
    arrived = sorted((outcome(r) for r in records), key=lambda o: order_key(o.match_id))
    lowest = order_key(arrived[0].match_id)
    if meta.get("floor") and lowest < meta["floor"]:
        return False
    # Undo the kept steps after the earliest arrival, newest first, then rate everything from there.
    later = [text(k) for k in client.zrangebylex(keys.order, f"({lowest}", "+")]
    kept_steps = client.hmget(keys.steps, later) if later else []
    if None in kept_steps:  # not as written (an interrupted rebuild?): rebuild
        return False
    undone = [json.loads(raw) for raw in kept_steps if raw is not None]
    bots = sorted({bot for o in arrived for bot in o.bots} | {bot for s in undone for bot in s["bots"]})
    ratings = {bot: _rating(raw) for bot, raw in zip(bots, client.hmget(keys.ratings, bots), strict=True)
               if raw is not None}  # fmt: skip
    for undo in reversed(undone):
        for bot, before in zip(undo["bots"], undo["before"], strict=True):
            if before is None:
                ratings.pop(bot, None)
            else:
                ratings[bot] = Rating(*before)
    redo = sorted([*arrived, *(Outcome(s["id"], tuple(s["bots"]), tuple(s["ranks"])) for s in undone)],
                  key=lambda o: order_key(o.match_id))  # fmt: skip
    steps = {}
    for match in redo:
        steps[order_key(match.match_id)] = _step_json(match, ratings)
        ratings.update(step(ratings, match))
    new_keys = [order_key(o.match_id) for o in arrived]
    excess = client.zcard(keys.order) + len(new_keys) - WINDOW
    oldest_keys: list[bytes] = client.zrange(keys.order, 0, excess - 1) if excess > 0 else []  # type: ignore[assignment]
    oldest = [text(k) for k in oldest_keys]
    dropped = sorted([*oldest, *new_keys])[: max(excess, 0)]
    kept = {k: v for k, v in steps.items() if k not in set(dropped)}
    added = {k: 0 for k in new_keys if k in kept}

    pipe.multi()
    pipe.hset(keys.ratings, mapping={bot: _rating_text(r) for bot, r in ratings.items()})
    if kept:
        pipe.hset(keys.steps, mapping=kept)
    if added:
        pipe.zadd(keys.order, added)
    if dropped:
        pipe.zrem(keys.order, *dropped)
        pipe.hdel(keys.steps, *dropped)
        pipe.hset(keys.meta, "floor", max(dropped[-1], meta.get("floor", "")))
    _add_counts(pipe, keys, records)
    pipe.hset(keys.meta, mapping={**{f"cursor:{t}": cursors[t] + len(ids[t]) for t in cursors},
                                  "updated": repr(time.time())})  # fmt: skip
    pipe.hincrby(keys.meta, "matches", len(records))
    pipe.execute()
    return True


def _add_counts(pipe: Any, keys: ScopeKeys, records: Iterable[MatchRecord]) -> None:
    """HINCRBY the order-free sums, summed over the records first (one command per field)."""
    counts: dict[str, int] = {}
    halves: dict[str, int] = {}
    met: dict[str, int] = {}
    for record in records:
        for bot, added in tally(record).items():
            for name, count in added.items():
                counts[f"{bot} {name}"] = counts.get(f"{bot} {name}", 0) + count
        for bot, other, half_points in pair_scores(outcome(record)):
            halves[f"{bot} {other}"] = halves.get(f"{bot} {other}", 0) + half_points
            met[f"{bot} {other}"] = met.get(f"{bot} {other}", 0) + 1
    for target, sums in ((keys.tally, counts), (keys.h2h, halves), (keys.met, met)):
        for field, value in sums.items():
            pipe.hincrby(target, field, value)


def _rebuild(client: redis.Redis, pipe: Any, prefix: str, scope: str, keys: ScopeKeys) -> None:
    """Write the scope from scratch from every recorded match (the caller WATCHes `meta`)."""
    tournaments = list_ids(client, prefix) if scope == ALL else [scope]
    with client.pipeline(transaction=False) as reads:
        for tournament_id in tournaments:
            reads.lrange(Keys(prefix, tournament_id).results, 0, -1)
        listed = [[text(i) for i in found] for found in reads.execute()]
    records = sorted(_records(client, prefix, [i for found in listed for i in found]),
                     key=lambda r: order_key(r.match_id))  # fmt: skip
    ratings: dict[str, Rating] = {}
    steps = {}
    for match in (outcome(r) for r in records):
        steps[order_key(match.match_id)] = _step_json(match, ratings)
        ratings.update(step(ratings, match))
    window = sorted(steps)[-WINDOW:]
    floor = sorted(steps)[-WINDOW - 1] if len(steps) > WINDOW else ""

    pipe.multi()
    pipe.delete(key(prefix, scope), *keys.state)
    if ratings:
        pipe.hset(keys.ratings, mapping={bot: _rating_text(r) for bot, r in ratings.items()})
    if window:
        pipe.hset(keys.steps, mapping={k: steps[k] for k in window})
        pipe.zadd(keys.order, dict.fromkeys(window, 0))
    _add_counts(pipe, keys, records)
    cursors = {f"cursor:{t}": len(found) for t, found in zip(tournaments, listed, strict=True)}
    pipe.hset(keys.meta, mapping={**cursors, "built": 1, "matches": len(records), "floor": floor,
                                  "updated": repr(time.time())})  # fmt: skip
    pipe.execute()


def _records(client: redis.Redis, prefix: str, match_ids: Sequence[str]) -> list[MatchRecord]:
    with client.pipeline(transaction=False) as reads:
        for match_id in match_ids:
            reads.hget(match_key(prefix, match_id), "summary")
        return [MatchRecord.from_json(raw) for raw in reads.execute() if raw is not None]


def _step_json(match: Outcome, ratings: Mapping[str, Rating]) -> str:
    """A kept step: the outcome, and its bots' ratings before it (None: not rated yet)."""
    before = [[r.mu, r.sigma] if (r := ratings.get(bot)) is not None else None for bot in match.bots]
    return json.dumps({"id": match.match_id, "bots": match.bots, "ranks": match.ranks, "before": before})


def _rating_text(rating: Rating) -> str:
    return f"{rating.mu!r} {rating.sigma!r}"


def _rating(raw: bytes | str) -> Rating:
    mu, sigma = text(raw).split(" ")
    return Rating(float(mu), float(sigma))


def _texts(values: Mapping[Any, Any]) -> dict[str, str]:
    return {text(k): text(v) for k, v in values.items()}
