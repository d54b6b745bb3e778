"""The recorded match: typed values with one encoding in Redis, written once, atomically.

Workers write it (`record`); the leaderboard, the web view, `replay` and `status` read it (`load_match`,
`match_records`). One Lua script writes the match's record and moves the tournament's counters together,
and does nothing if the match is already recorded, so a job that runs twice counts once and a
half-written result never appears.

`{p}:match:{match_id}` (hash):
- `summary`: `MatchRecord` as JSON (bots, winners, totals, reason, hands, faults by seat and kind, and
  `finished_at`: when the match ended, which orders a bot's recent matches; a summary stored before it
  was kept has none, and reads back with `recorded` instead);
- `finished`: the `FinishedMatch` message (result, actions, seed, rules), zlib-compressed;
- `log`: the complete event log as an `EventLogChunk` message, zlib-compressed;
- `tournament`, `index`, `recorded` (unix seconds).
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: replay files and the base install need no Redis client
    import redis

from uno_arena.records.tournament import Keys, MatchState, TournamentError, list_ids, states, text
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import name_of, names_of, number_of

_RECORD = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[5]) == 0 then return 2 end
redis.call('HSET', KEYS[1], 'summary', ARGV[3], 'finished', ARGV[4], 'log', ARGV[5],
           'recorded', ARGV[6], 'tournament', ARGV[7], 'index', ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], 'done')
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[2])
local done = redis.call('HINCRBY', KEYS[5], 'done', 1)
local total = tonumber(redis.call('HGET', KEYS[5], 'matches'))
if done >= total and redis.call('HGET', KEYS[5], 'status') == 'running' then
  redis.call('HSET', KEYS[5], 'status', 'finished', 'finished', ARGV[6])
end
return 1
"""


def match_key(prefix: str, match_id: str) -> str:
    return f"{prefix}:match:{match_id}"


@dataclass(frozen=True, slots=True)
class Faults:
    """One seat's faults in a match, by kind (the fields are `FaultKind`'s names; a test keeps them so).

    Every count defaults to 0, so a summary stored before a kind existed reads back with none of it.
    """

    timeout: int = 0
    illegal: int = 0
    invalid: int = 0
    disconnected: int = 0
    bot_error: int = 0  # the bot reported that its own code failed (BotError); no strike by default

    @property
    def total(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self))

    def by_kind(self) -> dict[str, int]:
        """The kinds that happened and how often, in `FaultKind` order: `{"timeout": 2}`."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def described(self) -> str:
        """`3 (timeout 2, illegal 1)`, or `0`."""
        kinds = ", ".join(f"{kind} {count}" for kind, count in self.by_kind().items())
        return f"{self.total} ({kinds})" if kinds else "0"

    @classmethod
    def count(cls, kinds: list[pb.FaultKind]) -> Faults:
        known = {f.name for f in fields(cls)}
        counts = dict.fromkeys(known, 0)
        for kind in kinds:
            name = name_of(pb.FaultKind, kind)
            if name in known:
                counts[name] += 1
        return cls(**counts)


@dataclass(frozen=True, slots=True)
class HandRecord:
    """How one hand ended: its winner (None when nobody played out), points by seat, the reason."""

    winner: int | None
    points: tuple[int, ...]
    reason: pb.HandEnd

    @property
    def reason_name(self) -> str:
        return name_of(pb.HandEnd, self.reason)


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A recorded match's result as typed values: what standings, ratings, status views and the web read."""

    match_id: str
    tournament: str
    index: int
    bots: tuple[str, ...]  # by seat
    reason: pb.MatchEnd
    winners: tuple[int, ...]  # seats sharing the win
    totals: tuple[int, ...]
    forfeited: tuple[int, ...]
    hands: tuple[HandRecord, ...]
    faults: tuple[Faults, ...]  # by seat
    seed: int
    actions: int  # how many actions were applied (the list is in the `finished` message)
    finished_at: float = 0.0  # unix seconds the match ended (0.0: unknown); recent matches are by it

    @property
    def reason_name(self) -> str:
        return name_of(pb.MatchEnd, self.reason)

    @classmethod
    def from_finished(
        cls, finished: control_pb2.FinishedMatch, tournament: str, index: int, match_id: str,
        finished_at: float = 0.0,
    ) -> MatchRecord:  # fmt: skip
        result = finished.result
        kinds: list[list[pb.FaultKind]] = [[] for _ in result.bots]
        for fault in finished.faults:
            if fault.seat < len(kinds):
                kinds[fault.seat].append(fault.kind)
        hands = tuple(
            HandRecord(hand.winner if hand.HasField("winner") else None, tuple(hand.points), hand.reason)
            for hand in result.hands
        )
        faults = tuple(Faults.count(k) for k in kinds)
        return cls(match_id, tournament, index, tuple(result.bots), result.reason, tuple(result.winners),
                   tuple(result.totals), tuple(result.forfeited), hands, faults, finished.seed,
                   len(finished.actions), finished_at)  # fmt: skip

    def to_json(self) -> str:
        """The stored form: plain JSON, enum values by their names (so the stored text reads well)."""
        values = asdict(self)
        values["reason"] = self.reason_name
        values["hands"] = [{**asdict(h), "reason": h.reason_name} for h in self.hands]
        return json.dumps(values)

    def to_dict(self) -> dict[str, Any]:
        """The stored form as plain values (lists, enum values by name), as `replay --json` shows it."""
        values: dict[str, Any] = json.loads(self.to_json())
        return values

    @classmethod
    def from_json(cls, raw: bytes | str, recorded: float = 0.0) -> MatchRecord:
        """`recorded`: when the match was recorded, the finish time of a summary stored before
        `finished_at` was kept (the match hash's `recorded`, a replay file's modification time)."""
        values: dict[str, Any] = json.loads(raw)
        hands = tuple(
            HandRecord(h["winner"], tuple(h["points"]), number_of(pb.HandEnd, h["reason"]))
            for h in values["hands"]
        )
        known = {f.name for f in fields(Faults)}
        faults = tuple(Faults(**{k: v for k, v in seat.items() if k in known}) for seat in values["faults"])
        return cls(str(values["match_id"]), str(values["tournament"]), int(values["index"]),
                   tuple(values["bots"]), number_of(pb.MatchEnd, values["reason"]),
                   tuple(values["winners"]), tuple(values["totals"]), tuple(values.get("forfeited", ())),
                   hands, faults, int(values["seed"]), int(values["actions"]),
                   float(values.get("finished_at", recorded)))  # fmt: skip


FAULT_KINDS: tuple[str, ...] = names_of(pb.FaultKind)


def record(
    client: redis.Redis, keys: Keys, index: int, finished: control_pb2.FinishedMatch, log: bytes,
    finished_at: float | None = None,
) -> bool:  # fmt: skip
    """Record a finished match of the tournament; False if it was recorded before (nothing changes), a
    TournamentError if the tournament is gone (deleted while the match was played: nothing is written).

    `log` is the serialized `EventLogChunk` of every event: the log chunks as
    received, concatenated (protobuf merges repeated fields), never re-encoded. `finished_at`: when the
    match ended (unix seconds; default now), kept even if recording it waited out a Redis outage.
    """
    match_id = keys.match_id(index)
    now = time.time()
    ended = now if finished_at is None else finished_at
    summary = MatchRecord.from_finished(finished, keys.tournament_id, index, match_id, ended)
    argv: list[str | bytes | float] = [index, match_id, summary.to_json(),
                                       zlib.compress(finished.SerializeToString(), 1), zlib.compress(log, 1),
                                       now, keys.tournament_id]  # fmt: skip
    script_keys = [match_key(keys.prefix, match_id), keys.state, keys.errors, keys.results, keys.tournament]
    written = client.eval(_RECORD, len(script_keys), *script_keys, *argv)
    if written == 2:
        raise TournamentError(f"tournament {keys.tournament_id!r} is gone: match {match_id} not recorded")
    return bool(written)


@dataclass(frozen=True, slots=True)
class RecordedMatch:
    """A match's record with what replays it: the `FinishedMatch` message and the complete event log."""

    record: MatchRecord
    finished: control_pb2.FinishedMatch
    events: list[pb.Event]
    recorded: float  # unix seconds

    @property
    def match_id(self) -> str:
        return self.record.match_id


def is_recorded(client: redis.Redis, keys: Keys, index: int) -> bool:
    return bool(client.exists(match_key(keys.prefix, keys.match_id(index))))


def load_match(client: redis.Redis, prefix: str, match_id: str) -> RecordedMatch | None:
    raw = client.hgetall(match_key(prefix, match_id))
    if not raw:
        return None
    finished = control_pb2.FinishedMatch.FromString(zlib.decompress(_bytes(raw[b"finished"])))
    log = control_pb2.EventLogChunk.FromString(zlib.decompress(_bytes(raw[b"log"])))
    recorded = float(raw[b"recorded"])
    return RecordedMatch(MatchRecord.from_json(raw[b"summary"], recorded), finished, list(log.events),
                         recorded)  # fmt: skip


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def match_records(client: redis.Redis, prefix: str, tournament_id: str | None) -> list[MatchRecord]:
    """Every recorded match of the tournament (None: of every tournament), in recording order."""
    if tournament_id is None:
        return [r for t in list_ids(client, prefix) for r in match_records(client, prefix, t)]
    ids = [text(i) for i in client.lrange(Keys(prefix, tournament_id).results, 0, -1)]
    with client.pipeline(transaction=False) as pipe:
        for match_id in ids:
            pipe.hmget(match_key(prefix, match_id), "summary", "recorded")
        return [MatchRecord.from_json(raw, float(recorded or 0.0))
                for raw, recorded in pipe.execute() if raw is not None]  # fmt: skip


MAX_PAGE = 1000  # matches per `tournament_matches` page: a client asks for a page, never for all


@dataclass(frozen=True, slots=True)
class TournamentMatch:
    """One scheduled match of a tournament with what is known of it: its record once recorded, and why
    its last attempt failed if one did (`tournament status --matches` lists them)."""

    index: int
    match_id: str
    bots: tuple[str, ...]  # by seat
    state: MatchState
    record: MatchRecord | None
    error: str

    def to_dict(self) -> dict[str, Any]:
        """As `tournament status --matches --json` and the web view's `/api/tournament/ID` give it: the
        result's fields (bots by name) once recorded, and `error`, why its last attempt failed (null)."""
        values: dict[str, Any] = {"index": self.index, "match_id": self.match_id, "bots": list(self.bots),
                                  "state": str(self.state), "error": self.error or None}  # fmt: skip
        record = self.record
        if record is not None:
            bots = record.bots
            values.update(
                winners=[bots[w] for w in record.winners],
                reason=record.reason_name,
                totals=list(record.totals),
                forfeited=[bots[s] for s in record.forfeited if s < len(bots)],
                faults={bots[seat]: f.by_kind() for seat, f in enumerate(record.faults) if f.total},
                finished_at=record.finished_at or None,
            )
        return values


def tournament_matches(
    client: redis.Redis, prefix: str, tournament_id: str, first: int = 0, limit: int = 50,
    state: MatchState | None = None,
) -> tuple[list[TournamentMatch], int]:  # fmt: skip
    """A page of the tournament's matches by index (only those in `state`, if given): `limit` of them
    (at most `MAX_PAGE`) from the `first`-th on, and how many there are in all. Reads the states of
    every match, then only the page's schedule, records and errors."""
    if not 1 <= limit <= MAX_PAGE or first < 0:
        raise ValueError(f"a page is 1 to {MAX_PAGE} matches from 0 on, not {limit} from {first}")
    keys = Keys(prefix, tournament_id)
    found = sorted((i, s) for i, s in states(client, prefix, tournament_id).items() if state in (None, s))
    page = found[first : first + limit]
    if not page:
        return [], len(found)
    indices = [index for index, _ in page]
    with client.pipeline(transaction=False) as pipe:
        pipe.hmget(keys.schedule, indices)
        pipe.hmget(keys.errors, indices)
        for index in indices:
            pipe.hmget(match_key(prefix, keys.match_id(index)), "summary", "recorded")
        scheduled, errors, *summaries = pipe.execute()
    matches = []
    for (index, match_state), raw, error, (summary, recorded) in zip(page, scheduled, errors, summaries,
                                                                     strict=True):  # fmt: skip
        bots = tuple(json.loads(raw)["bots"]) if raw is not None else ()
        record = MatchRecord.from_json(summary, float(recorded or 0.0)) if summary is not None else None
        matches.append(TournamentMatch(index, keys.match_id(index), bots, match_state, record,
                                       text(error) if error is not None else ""))  # fmt: skip
    return matches, len(found)
