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
"""

from __future__ import annotations

import enum
import json
import re
import secrets
import time
from collections import Counter
from dataclasses import dataclass

import redis

from uno_arena.records.spec import TournamentSpec, spec_from_dict


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

    def lease(self, index: int) -> str:
        return f"{self.tournament}:lease:{index}"

    def match_id(self, index: int) -> str:
        return f"{self.tournament_id}-m{index:05d}"


def text(value: bytes | str) -> str:
    """A Redis reply as text (clients for RQ must not decode replies themselves)."""
    return value.decode() if isinstance(value, bytes) else value


def new_tournament_id(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]", "-", name)[:40]
    return f"{slug}-{secrets.token_hex(3)}"


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
    """Store the spec and its schedule; nothing is queued until `start`."""
    tournament_id = tournament_id or new_tournament_id(spec.name)
    keys = Keys(prefix, tournament_id)
    now = time.time()
    if not client.hsetnx(keys.tournament, "spec", json.dumps(spec.to_dict())):
        raise TournamentError(f"tournament {tournament_id!r} already exists")
    with client.pipeline() as pipe:
        pipe.hset(keys.tournament, mapping={"status": TournamentStatus.CREATED, "matches": len(matches),
                                            "done": 0, "created": now})  # fmt: skip
        pipe.hset(keys.schedule, mapping={m.index: _match_json(m) for m in matches})
        pipe.hset(keys.state, mapping={m.index: MatchState.SCHEDULED for m in matches})
        pipe.zadd(keys.index, {tournament_id: now})
        pipe.execute()
    return tournament_id


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
    keys = Keys(prefix, tournament_id)
    record = {text(k): text(v) for k, v in client.hgetall(keys.tournament).items()}
    if "spec" not in record:
        raise TournamentError(f"no tournament {tournament_id!r} (see `uno-arena tournament list`)")
    states = Counter(MatchState(text(v)) for v in client.hvals(keys.state))
    return Tournament(
        id=tournament_id,
        spec=spec_from_dict(json.loads(record["spec"])),
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


def list_ids(client: redis.Redis, prefix: str) -> list[str]:
    return [text(i) for i in client.zrange(index_key(prefix), 0, -1)]  # type: ignore[arg-type]


def states(client: redis.Redis, prefix: str, tournament_id: str) -> dict[int, MatchState]:
    raw = client.hgetall(Keys(prefix, tournament_id).state)
    return {int(k): MatchState(text(v)) for k, v in raw.items()}


def errors(client: redis.Redis, prefix: str, tournament_id: str) -> dict[int, str]:
    raw = client.hgetall(Keys(prefix, tournament_id).errors)
    return {int(k): text(v) for k, v in raw.items()}


# Set a match's state unless its result is recorded: a late or duplicate job never un-finishes it.
_SET_STATE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == 'done' then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
return 1
"""


def set_state(client: redis.Redis, keys: Keys, index: int, state: MatchState, error: str = "") -> bool:
    """Move a match to `state` (never out of DONE); `error` records why, if it failed."""
    return bool(client.eval(_SET_STATE, 2, keys.state, keys.errors, index, state.value, error))


def set_status(client: redis.Redis, keys: Keys, status: TournamentStatus, **times: float) -> None:
    mapping: dict[str, str | float] = {"status": status.value, **times}
    client.hset(keys.tournament, mapping=mapping)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Progress:
    tournament: Tournament
    eta_s: float | None  # from the pace since the start; None before the first result

    @property
    def remaining(self) -> int:
        return self.tournament.matches - self.tournament.done


def progress(client: redis.Redis, prefix: str, tournament_id: str) -> Progress:
    tournament = load(client, prefix, tournament_id)
    eta = None
    if tournament.started and tournament.done and tournament.status is TournamentStatus.RUNNING:
        elapsed = time.time() - tournament.started
        eta = elapsed / tournament.done * (tournament.matches - tournament.done)
    return Progress(tournament, eta)
