"""A tournament in Redis: its spec, its schedule and the state of every match.

Keys, all under the configured prefix (docs/redis.md lists them all):
- `{p}:tournaments`: sorted set of tournament ids by creation time.
- `{p}:tournament:{id}`: hash with `spec` (JSON), `status`, `matches`, `done`,
  `created`, `started`, `finished` (unix seconds).
- `{p}:tournament:{id}:schedule`: hash, match index -> JSON (bots, seed, ...).
- `{p}:tournament:{id}:state`: hash, match index -> `MatchState`.
- `{p}:tournament:{id}:errors`: hash, match index -> why its last attempt failed.
- `{p}:tournament:{id}:attempts`: hash, match index -> plays started (reruns included).
- `{p}:tournament:{id}:lease:{index}`: the worker playing the match; expires
  unless that worker keeps renewing it, which is how a dead worker is noticed.
- `{p}:tournament:{id}:results`: list of match ids in the order they were recorded.
- `{p}:tournament:{id}:retries`: hash, match index -> when its retry is due (unix seconds), set
  when an attempt fails with retries left; read only while the match is queued.
- `{p}:tournament:{id}:queueing:{index}`: held for a moment while a match is being queued, so that
  two processes never queue it twice.
- `{p}:tournament:{id}:placed`: hash, match index -> the server of its pool it was placed on
  (a tournament on a pool of servers; `uno_arena.records.pool`).
"""

from __future__ import annotations

import enum
import json
import logging
import re
import secrets
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: replay files and the base install need no Redis client
    import redis

from uno_arena.records.identity import NAME
from uno_arena.records.spec import TournamentSpec, spec_from_dict

log = logging.getLogger(__name__)


class TournamentStatus(enum.StrEnum):
    CREATED = "created"  # scheduled, nothing queued yet
    RUNNING = "running"
    FINISHED = "finished"  # every match recorded
    CANCELLED = "cancelled"


class MatchState(enum.StrEnum):
    SCHEDULED = "scheduled"  # not queued yet
    QUEUED = "queued"  # waiting for a worker (or for a retry)
    RUNNING = "running"  # a worker is playing it
    DONE = "done"  # result recorded
    FAILED = "failed"  # out of retries; `rerun-failed` queues it again
    CANCELLED = "cancelled"


class TournamentError(ValueError):
    """An unknown tournament, or an operation its status does not allow."""


def index_key(prefix: str) -> str:
    return f"{prefix}:tournaments"


# An id becomes part of Redis keys and URLs, so it has a bot name's shape (no ':', no '/', no spaces):
# an id like `base:state` would otherwise name tournament `base`'s keys. "all" is the leaderboard's
# name for every tournament (`uno_arena.leaderboard.board.ALL`), so no tournament may take it.
RESERVED_IDS = frozenset({"all"})


def is_valid_id(tournament_id: str) -> bool:
    return bool(NAME.fullmatch(tournament_id)) and tournament_id not in RESERVED_IDS


def check_id(tournament_id: str) -> str:
    """The id if a tournament may have it, else a TournamentError saying what an id looks like."""
    if tournament_id in RESERVED_IDS:
        raise TournamentError(f"bad tournament id {tournament_id!r}: reserved (the leaderboard's name for "
                              "every tournament)")  # fmt: skip
    if not is_valid_id(tournament_id):
        raise TournamentError(f"bad tournament id {tournament_id!r}: 1-63 letters, digits, '_', '.' or '-', "
                              "starting with a letter or digit")  # fmt: skip
    return tournament_id


def exists(client: redis.Redis, prefix: str, tournament_id: str) -> bool:
    """Whether the tournament is listed; a malformed id is False without reading any key."""
    return is_valid_id(tournament_id) and client.zscore(index_key(prefix), tournament_id) is not None


def check_exists(client: redis.Redis, prefix: str, tournament_id: str) -> str:
    """The id of a listed tournament, else a TournamentError (a malformed id is refused as such)."""
    if not exists(client, prefix, check_id(tournament_id)):
        raise TournamentError(f"no tournament {tournament_id!r} (see `uno-arena tournament list`)")
    return tournament_id


def is_match_id(match_id: str) -> bool:
    """Whether `match_id` has the shape `Keys.match_id` gives: a valid tournament id, `-m`, the index."""
    tournament_id, mark, index = match_id.rpartition("-m")
    return bool(mark) and index.isascii() and index.isdigit() and is_valid_id(tournament_id)


@dataclass(frozen=True, slots=True)
class Keys:
    """The Redis keys of one tournament."""

    prefix: str
    tournament_id: str

    @property
    def index(self) -> str:
        return index_key(self.prefix)

    @property
    def tournament(self) -> str:
        return f"{self.prefix}:tournament:{self.tournament_id}"

    @property
    def schedule(self) -> str:
        return f"{self.tournament}:schedule"

    @property
    def state(self) -> str:
        return f"{self.tournament}:state"

    @property
    def errors(self) -> str:
        return f"{self.tournament}:errors"

    @property
    def attempts(self) -> str:
        return f"{self.tournament}:attempts"

    @property
    def results(self) -> str:
        return f"{self.tournament}:results"

    @property
    def retries(self) -> str:
        return f"{self.tournament}:retries"

    @property
    def placed(self) -> str:
        return f"{self.tournament}:placed"

    def lease(self, index: int) -> str:
        return f"{self.tournament}:lease:{index}"

    def queueing(self, index: int) -> str:
        return f"{self.tournament}:queueing:{index}"

    def match_id(self, index: int) -> str:
        return f"{self.tournament_id}-m{index:05d}"

    def log_ids(self, index: int | None = None) -> dict[str, str]:
        """The ids a log line about the tournament (or its match `index`) carries as fields: `extra=`."""
        if index is None:
            return {"tournament_id": self.tournament_id}
        return {"tournament_id": self.tournament_id, "match_id": self.match_id(index)}


def text(value: bytes | str) -> str:
    """A Redis reply as text (clients for RQ must not decode replies themselves)."""
    return value.decode() if isinstance(value, bytes) else value


def new_tournament_id(name: str) -> str:
    """The name's letters, digits, '_' and '-' (anything else becomes '-') and a random suffix: a valid id."""
    slug = re.sub(r"[^A-Za-z0-9_-]", "-", name)[:40].lstrip("_-") or "tournament"
    return check_id(f"{slug}-{secrets.token_hex(3)}")


@dataclass(frozen=True, slots=True)
class ScheduledMatch:
    """One match of the schedule (`uno_arena.workers.schedule` makes them)."""

    index: int
    cycle: int
    bots: tuple[str, ...]  # in seat order
    seed: int  # the match's seed: its first dealer is `bots[dealer]`
    dealer: int  # the seat drawn to deal the first hand


def create(client: redis.Redis, prefix: str, spec: TournamentSpec, matches: list[ScheduledMatch],
           tournament_id: str | None = None) -> str:  # fmt: skip
    """Store the spec and its schedule; nothing is queued until `start`. A bad id writes nothing."""
    tournament_id = new_tournament_id(spec.name) if tournament_id is None else check_id(tournament_id)
    keys = Keys(prefix, tournament_id)
    now = time.time()
    if not client.hsetnx(keys.tournament, "spec", json.dumps(_stored_spec(spec))):
        raise TournamentError(f"tournament {tournament_id!r} already exists")
    with client.pipeline() as pipe:
        pipe.hset(keys.tournament, mapping={"status": TournamentStatus.CREATED, "matches": len(matches),
                                            "done": 0, "created": now})  # fmt: skip
        pipe.hset(keys.schedule, mapping={m.index: _match_json(m) for m in matches})
        pipe.hset(keys.state, mapping={m.index: MatchState.SCHEDULED for m in matches})
        pipe.zadd(keys.index, {tournament_id: now})
        pipe.execute()
    return tournament_id


def _stored_spec(spec: TournamentSpec) -> dict[str, Any]:
    """The spec as stored: its retries say `tries`, which a tournament stored when `attempts` counted
    retries (not tries) lacks."""
    values = spec.to_dict()
    retries = values["retries"]
    values["retries"] = {"tries": retries.pop("attempts"), **retries}
    return values


def _spec_from_stored(values: dict[str, Any]) -> TournamentSpec:
    """A stored spec; one stored with `attempts` counted retries, so it gets the same number of tries."""
    retries = values.get("retries")
    if isinstance(retries, dict):
        if "tries" in retries:
            values["retries"] = {"attempts": retries.pop("tries"), **retries}
        elif isinstance(retries.get("attempts"), int):
            values["retries"] = {**retries, "attempts": retries["attempts"] + 1}
    return spec_from_dict(values)


def _match_json(match: ScheduledMatch) -> str:
    return json.dumps({"bots": match.bots, "seed": match.seed, "cycle": match.cycle, "dealer": match.dealer})


@dataclass(frozen=True, slots=True)
class Tournament:
    """A snapshot of one tournament as stored."""

    id: str
    spec: TournamentSpec
    status: TournamentStatus
    matches: int
    done: int
    created: float
    started: float | None
    finished: float | None
    states: Counter[MatchState]


def load(client: redis.Redis, prefix: str, tournament_id: str) -> Tournament:
    keys = Keys(prefix, check_id(tournament_id))
    record = {text(k): text(v) for k, v in client.hgetall(keys.tournament).items()}
    if "spec" not in record:
        raise TournamentError(f"no tournament {tournament_id!r} (see `uno-arena tournament list`)")
    states = Counter(_match_states(tournament_id, client.hgetall(keys.state)).values())
    return Tournament(
        id=tournament_id,
        spec=_spec_from_stored(json.loads(record["spec"])),
        status=TournamentStatus(record["status"]),
        matches=int(record["matches"]),
        done=int(record.get("done", 0)),
        created=float(record["created"]),
        started=float(record["started"]) if "started" in record else None,
        finished=float(record["finished"]) if "finished" in record else None,
        states=states,
    )


def scheduled_match(client: redis.Redis, prefix: str, tournament_id: str, index: int) -> ScheduledMatch:
    raw = client.hget(Keys(prefix, tournament_id).schedule, index)
    if raw is None:
        raise TournamentError(f"tournament {tournament_id!r} has no match {index}")
    values = json.loads(raw)
    return ScheduledMatch(index, values["cycle"], tuple(values["bots"]), values["seed"], values["dealer"])


_STATES = frozenset(s.value for s in MatchState)
_warned: set[str] = set()  # malformed ids and records already logged: a page refreshing every 5 s logs once


def _warn_once(what: str, message: str, *args: object) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning(message, *args)


def list_ids(client: redis.Redis, prefix: str) -> list[str]:
    """Every tournament's id, oldest first. An id a version before ids were checked stored (`base:state`)
    is skipped, with a warning: its keys may be another tournament's, so it is never read."""
    ids = [text(i) for i in client.zrange(index_key(prefix), 0, -1)]  # type: ignore[arg-type]
    for bad in (i for i in ids if not is_valid_id(i)):
        _warn_once(f"{prefix} {bad}", "skipping tournament %r under %s: not a valid id (stored by an older "
                   "version; its keys may overlap another tournament's)", bad, prefix)  # fmt: skip
    return [i for i in ids if is_valid_id(i)]


def _match_states(tournament_id: str, raw: Mapping[bytes | str, bytes | str]) -> dict[int, MatchState]:
    """Match index -> state; a field that is neither is skipped with a warning (an older version that
    took any id wrote a tournament `X:state`'s own fields into tournament X's state hash)."""
    found = {}
    for key, value in raw.items():
        index, state = text(key), text(value)
        if index.isascii() and index.isdigit() and state in _STATES:
            found[int(index)] = MatchState(state)
        else:
            _warn_once(f"{tournament_id} {index}", "tournament %s: ignoring %r in its match states (not a "
                       "match index and state)", tournament_id, index)  # fmt: skip
    return found


def states(client: redis.Redis, prefix: str, tournament_id: str) -> dict[int, MatchState]:
    return _match_states(tournament_id, client.hgetall(Keys(prefix, tournament_id).state))


def errors(client: redis.Redis, prefix: str, tournament_id: str) -> dict[int, str]:
    raw = client.hgetall(Keys(prefix, tournament_id).errors)
    return {int(k): text(v) for k, v in raw.items()}


# Set a match's state unless its result is recorded (a late or duplicate job never un-finishes it), or the
# tournament is gone (a job that outlived `tournament delete --force` re-creates none of its keys).
# KEYS: state, errors, retries, tournament; ARGV: index, state, error ('': none), retry due ('': none).
_SET_STATE = """
if redis.call('EXISTS', KEYS[4]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], ARGV[1]) == 'done' then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], ARGV[1], ARGV[4]) end
return 1
"""


def set_state(client: redis.Redis, keys: Keys, index: int, state: MatchState, error: str = "",
              retry_at: float | None = None) -> bool:  # fmt: skip
    """Move a match to `state` (never out of DONE; nothing if the tournament's record is gone); `error`
    records why, if it failed, and `retry_at` when its retry is due (unix seconds), if it waits for one.
    False if nothing was written."""
    due = "" if retry_at is None else f"{retry_at:.3f}"
    return bool(client.eval(_SET_STATE, 4, keys.state, keys.errors, keys.retries, keys.tournament, index,
                            state.value, error, due))  # fmt: skip


def set_status(client: redis.Redis, keys: Keys, status: TournamentStatus, **times: float) -> None:
    mapping: dict[str, str | float] = {"status": status.value, **times}
    client.hset(keys.tournament, mapping=mapping)  # type: ignore[arg-type]


def being_played(client: redis.Redis, prefix: str, tournament_id: str) -> str | None:
    """Why the tournament counts as being played, or None: its status is `running`, or matches of it are
    still being played (a cancelled tournament plays its running matches out). What `tournament
    delete` and `export` refuse without --force (`delete` also waits for the tournament's RQ jobs that
    still write to it: `uno_arena.workers.removal`)."""
    status = client.hget(Keys(prefix, tournament_id).tournament, "status")
    playing = sum(s is MatchState.RUNNING for s in states(client, prefix, tournament_id).values())
    matches = f"{playing} match{'es' if playing != 1 else ''}"
    if status is not None and text(status) == TournamentStatus.RUNNING:
        return f"it is running ({matches} being played)" if playing else "it is running"
    if playing:
        return f"{matches} of it still being played"
    return None


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a tournament is, and what its waiting matches wait for."""

    tournament: Tournament
    eta_s: float | None  # from the pace since the start; None before the first result and while none runs
    retries: dict[int, float] = field(default_factory=dict)  # queued matches waiting out a retry: when due

    def to_dict(self) -> dict[str, Any]:
        """As `tournament status --json` and the web view's `/api/tournament/ID` give it (their fields
        are documented in docs/operations.md); times are unix seconds, null when not yet."""
        t = self.tournament
        return {"id": t.id, "name": t.spec.name, "status": str(t.status), "matches": t.matches,
                "done": t.done, "states": {str(s): t.states[s] for s in MatchState},
                "retries_waiting": len(self.retries), "next_retry": self.next_retry, "eta_s": self.eta_s,
                "target": t.spec.target, "created": t.created, "started": t.started,
                "finished": t.finished}  # fmt: skip

    @property
    def remaining(self) -> int:
        return self.tournament.matches - self.tournament.done

    @property
    def next_retry(self) -> float | None:
        """When the first of the retries waited for is due (unix seconds)."""
        return min(self.retries.values(), default=None)

    @property
    def only_failed_left(self) -> bool:
        """Running, but nothing will move without an organiser: every match not done has failed."""
        states = self.tournament.states
        waiting = states[MatchState.SCHEDULED] + states[MatchState.QUEUED] + states[MatchState.RUNNING]
        failed = states[MatchState.FAILED]
        return self.tournament.status is TournamentStatus.RUNNING and not waiting and failed > 0


def progress(client: redis.Redis, prefix: str, tournament_id: str) -> Progress:
    tournament = load(client, prefix, tournament_id)
    retries: dict[int, float] = {}
    if tournament.states[MatchState.QUEUED]:
        keys, now = Keys(prefix, tournament_id), time.time()
        queued = {i for i, s in states(client, prefix, tournament_id).items() if s is MatchState.QUEUED}
        for raw_index, raw_due in client.hgetall(keys.retries).items():
            index, due = text(raw_index), text(raw_due)
            try:
                if int(index) in queued and float(due) > now:
                    retries[int(index)] = float(due)
            except ValueError:
                _warn_once(f"{tournament_id} retries {index}", "tournament %s: ignoring retry %r: %r",
                           tournament_id, index, due)  # fmt: skip
    eta = None
    running = tournament.states[MatchState.RUNNING]
    if tournament.started and tournament.done and running and tournament.status is TournamentStatus.RUNNING:
        elapsed = time.time() - tournament.started
        eta = elapsed / tournament.done * (tournament.matches - tournament.done)
    return Progress(tournament, eta, retries)
