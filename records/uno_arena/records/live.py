"""A running match's public events in Redis, as it is played: what the web view's live page follows.

The worker playing a match follows the server's Spectate stream (public events only: no seat's cards)
and writes it here (`LiveFeed`); the web view reads it (`read`, `running`) and pushes it to browsers.

Keys, under the configured prefix (docs/redis.md):
- `{p}:live:{match_id}`: a stream of the match's entries, each with a `kind` and a `data` field (JSON):
  `start` ({"match_id", "bots", "index"}: the match starts from its first event; whatever came before,
  an earlier attempt's events, is void), `events` (a JSON list of events, each as the replay JSON's
  `events` holds them), `fault` (a bot's fault as the replay JSON's `finished.faults[]` holds it, its
  `event_index` saying how many events came before it: written after those events, so in order with
  them), `end` ({"match_id", "recorded", "reason"?}: nothing follows). Capped at
  `MAX_ENTRIES` entries (oldest trimmed first); it expires `RUNNING_TTL_S` after its last write while
  the match runs (a worker that died leaves nothing for long), and `ENDED_TTL_S` after its end: enough
  for a reader to catch up and hear the end, after which the replay tells it all.
- `{p}:tournament:{id}:running`: hash, match index -> JSON {"match_id", "bots", "index", "started"}:
  the matches being played and followed now. `running` lists only those whose state is still
  `running`, so an entry a killed worker left behind is never shown.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from google.protobuf.json_format import MessageToDict

from uno_arena.records.tournament import Keys, MatchState, is_match_id, states, text

if TYPE_CHECKING:  # annotations only: replay files and the base install need no Redis client
    import redis

    from uno_arena.v1 import game_pb2 as pb

MAX_ENTRIES = 10_000  # a stream's cap; the worker writes at most one entry per `FLUSH_S` (workers.live)
RUNNING_TTL_S = 3600  # a stream nobody writes to for this long (its worker died) is dropped
ENDED_TTL_S = 60  # how long an ended match's stream stays for readers catching up
READ_COUNT = 100  # entries per read at most
STREAM_ID = re.compile(r"\d{1,20}-\d{1,20}")  # a Redis stream id (`Last-Event-ID`)

Kind = Literal["start", "events", "fault", "end"]
KINDS: tuple[Kind, ...] = ("start", "events", "fault", "end")
_KIND_NAMED: dict[str, Kind] = {kind: kind for kind in KINDS}


def stream_key(prefix: str, match_id: str) -> str:
    return f"{prefix}:live:{match_id}"


def running_key(keys: Keys) -> str:
    return f"{keys.tournament}:running"


def events_json(events: Sequence[pb.Event]) -> str:
    """Events as the replay JSON holds them (protobuf's JSON mapping, the proto's field names)."""
    return json.dumps([MessageToDict(e, preserving_proto_field_name=True) for e in events],
                      separators=(",", ":"))  # fmt: skip


def fault_json(fault: pb.Fault) -> str:
    """A fault as the replay JSON's `finished.faults` holds it."""
    return json.dumps(MessageToDict(fault, preserving_proto_field_name=True), separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class LiveEntry:
    """One entry of a match's stream: `data` is JSON text, passed on to browsers as it is."""

    id: str  # the stream id, e.g. "1718000000000-0": read on after it
    kind: Kind
    data: str


@dataclass(frozen=True, slots=True)
class RunningMatch:
    match_id: str
    bots: tuple[str, ...]
    index: int
    started: float  # unix seconds

    def to_dict(self) -> dict[str, Any]:
        return {"match_id": self.match_id, "bots": list(self.bots), "index": self.index,
                "started": self.started}  # fmt: skip


class LiveFeed:
    """The writer of one match's live stream and its entry among the running matches.

    Every write is bounded (the stream's cap) and sets an expiry, so a feed left by a worker that died
    goes away by itself.
    """

    def __init__(self, client: redis.Redis, keys: Keys, index: int, bots: Sequence[str],
                 max_entries: int = MAX_ENTRIES) -> None:  # fmt: skip
        self.client, self.keys, self.index = client, keys, index
        self.match_id = keys.match_id(index)
        self.bots = tuple(bots)
        self.key = stream_key(keys.prefix, self.match_id)
        self.max_entries = max_entries

    def start(self) -> None:
        """The match starts (again) from its first event: voids what an earlier attempt wrote, and lists
        the match as running. Trimming rather than deleting keeps the stream's ids growing, so a reader
        resuming from an old id reads this `start` next."""
        started = time.time()
        running = RunningMatch(self.match_id, self.bots, self.index, started)
        with self.client.pipeline() as pipe:
            pipe.xtrim(self.key, maxlen=0, approximate=False)
            self._add(pipe, "start", json.dumps({"match_id": self.match_id, "bots": list(self.bots),
                                                 "index": self.index}))  # fmt: skip
            pipe.hset(running_key(self.keys), str(self.index), json.dumps(running.to_dict()))
            pipe.execute()

    def append(self, events: Sequence[pb.Event]) -> None:
        self.write([events])

    def write(self, parts: Sequence[Sequence[pb.Event] | pb.Fault]) -> None:
        """Events and faults in the order given, in one round trip: a list of events is one `events`
        entry (none if it is empty), a fault one `fault` entry."""
        with self.client.pipeline() as pipe:
            for part in parts:
                if isinstance(part, Sequence):
                    if part:
                        self._add(pipe, "events", events_json(part))
                else:
                    self._add(pipe, "fault", fault_json(part))
            if pipe:
                pipe.execute()

    def end(self, recorded: bool, reason: str = "") -> None:
        """Nothing follows (readers load the replay, or hear the match was not recorded); the stream
        expires after `ENDED_TTL_S`, and the match is no longer listed as running."""
        data: dict[str, Any] = {"match_id": self.match_id, "recorded": recorded}
        if reason:
            data["reason"] = reason
        with self.client.pipeline() as pipe:
            pipe.xadd(self.key, {"kind": "end", "data": json.dumps(data)}, maxlen=self.max_entries,
                      approximate=True)  # fmt: skip
            pipe.expire(self.key, ENDED_TTL_S)
            pipe.hdel(running_key(self.keys), str(self.index))
            pipe.execute()

    def _add(self, pipe: redis.client.Pipeline, kind: Kind, data: str) -> None:
        pipe.xadd(self.key, {"kind": kind, "data": data}, maxlen=self.max_entries, approximate=True)
        pipe.expire(self.key, RUNNING_TTL_S)


def exists(client: redis.Redis, prefix: str, match_id: str) -> bool:
    """Whether the match has a live stream: it runs, or it ended less than `ENDED_TTL_S` ago."""
    return bool(client.exists(stream_key(prefix, match_id)))


def is_stream_id(entry_id: str) -> bool:
    """Whether it has a Redis stream id's shape: two unsigned 64-bit integers, "MS-SEQ"."""
    return bool(STREAM_ID.fullmatch(entry_id)) and max(_stream_id(entry_id)) < 2**64


def _stream_id(entry_id: str) -> tuple[int, int]:
    milliseconds, _, sequence = entry_id.partition("-")
    return int(milliseconds), int(sequence)


def may_have_sent(client: redis.Redis, prefix: str, match_id: str, entry_id: str) -> bool:
    """Whether the match's stream can have sent `entry_id` (a `Last-Event-ID` to resume after): "0", an id
    it holds, or one older than its first entry (trimmed since, or voided by a `start`). An id after its
    last entry, or between two of its entries, it never sent. A stream with no entries (gone meanwhile)
    cannot tell: True."""
    if entry_id == "0":
        return True
    if not is_stream_id(entry_id):
        return False
    key = stream_key(prefix, match_id)
    with client.pipeline(transaction=False) as pipe:
        pipe.xrange(key, entry_id, entry_id, count=1)
        pipe.xrange(key, "-", "+", count=1)
        held, first = pipe.execute()
    if held:
        return True
    if not first:
        return True
    return _stream_id(entry_id) < _stream_id(text(first[0][0]))


def read(client: redis.Redis, prefix: str, match_id: str, after: str = "0", block_ms: int | None = None,
         count: int = READ_COUNT) -> list[LiveEntry]:  # fmt: skip
    """The entries after stream id `after` ("0": from the first), at most `count`; with `block_ms`, waits
    up to that long for one when there is none yet. Entries of an unknown kind are skipped."""
    if after != "0" and not is_stream_id(after):
        raise ValueError(f"not a stream id: {after[:40]!r}")
    reply = client.xread({stream_key(prefix, match_id): after}, count=max(1, min(count, READ_COUNT)),
                         block=block_ms)  # fmt: skip
    found = []
    for _key, entries in cast(list[tuple[Any, list[tuple[Any, dict[Any, Any]]]]], reply or []):
        for entry_id, fields in entries:
            values = {text(k): text(v) for k, v in fields.items()}
            kind = _KIND_NAMED.get(values.get("kind", ""))
            if kind is not None:
                found.append(LiveEntry(text(entry_id), kind, values.get("data", "null")))
    return found


def running_bots(client: redis.Redis, prefix: str, match_id: str) -> tuple[str, ...] | None:
    """The seats of a match being played now (listed as running; its feed has not ended), else None."""
    if not is_match_id(match_id):
        return None
    tournament_id, _, index = match_id.rpartition("-m")
    match = _running_match(client.hget(running_key(Keys(prefix, tournament_id)), str(int(index))))
    return match.bots if match is not None and match.match_id == match_id else None


def _running_match(raw: bytes | str | None) -> RunningMatch | None:
    if raw is None:
        return None
    try:
        values = json.loads(raw)
        return RunningMatch(str(values["match_id"]), tuple(str(b) for b in values["bots"]),
                            int(values["index"]), float(values["started"]))  # fmt: skip
    except (ValueError, KeyError, TypeError):
        return None  # not ours to read: never takes a page down


def running(client: redis.Redis, prefix: str, tournament_id: str) -> list[RunningMatch]:
    """The tournament's matches being played now, by index: those listed whose state is `running`."""
    keys = Keys(prefix, tournament_id)
    now_running = {i for i, s in states(client, prefix, tournament_id).items() if s is MatchState.RUNNING}
    found = []
    for raw in client.hvals(running_key(keys)):
        match = _running_match(raw)
        if match is not None and match.index in now_running:
            found.append(match)
    return sorted(found, key=lambda m: m.index)
