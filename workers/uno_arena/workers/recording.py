"""Recording a played match: once, atomically, with its full event log.

One Lua script writes the match's record and moves the tournament's counters
together, and does nothing if the match is already recorded, so a job that
runs twice counts once and a half-written result never appears.

`{p}:match:{match_id}` (hash):
- `summary`: JSON (bots, winners, totals, reason, hands, faults by seat and kind);
- `finished`: the `FinishedMatch` message (result, actions, seed, rules), zlib-compressed;
- `log`: the complete event log as an `EventLogChunk` message, zlib-compressed;
- `tournament`, `index`, `recorded` (unix seconds).
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass
from typing import Any

import redis

from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers.tournament import Keys, list_ids, text

_RECORD = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
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

_FAULT_NAMES = {pb.FAULT_KIND_TIMEOUT: "timeout", pb.FAULT_KIND_ILLEGAL: "illegal",
                pb.FAULT_KIND_INVALID: "invalid", pb.FAULT_KIND_DISCONNECTED: "disconnected"}  # fmt: skip


def summary(finished: control_pb2.FinishedMatch, tournament_id: str, index: int) -> dict[str, Any]:
    """The result as plain values: what standings and status views read."""
    result = finished.result
    faults: list[dict[str, int]] = [{} for _ in result.bots]
    for fault in finished.faults:
        name = _FAULT_NAMES.get(fault.kind, "other")
        faults[fault.seat][name] = faults[fault.seat].get(name, 0) + 1
    return {
        "match_id": result.match_id,
        "tournament": tournament_id,
        "index": index,
        "bots": list(result.bots),
        "reason": pb.MatchEnd.Name(result.reason).removeprefix("MATCH_END_").lower(),
        "winners": list(result.winners),
        "totals": list(result.totals),
        "forfeited": list(result.forfeited),
        "hands": [_hand(h) for h in result.hands],
        "faults": faults,
        "seed": finished.seed,
        "actions": len(finished.actions),
    }


def _hand(hand: pb.HandEnded) -> dict[str, Any]:
    winner = hand.winner if hand.HasField("winner") else None
    return {"winner": winner, "points": list(hand.points),
            "reason": pb.HandEnd.Name(hand.reason).removeprefix("HAND_END_").lower()}  # fmt: skip


def record(
    client: redis.Redis, keys: Keys, index: int, finished: control_pb2.FinishedMatch, log: bytes
) -> bool:
    """Record a finished match of the tournament; False if it was recorded before (nothing changes).

    `log` is the serialized `EventLogChunk` of every event: the log chunks as
    received, concatenated (protobuf merges repeated fields), never re-encoded.
    """
    match_id = keys.match_id(index)
    values = summary(finished, keys.tournament_id, index)
    values["match_id"] = match_id
    argv: list[str | bytes | float] = [index, match_id, json.dumps(values),
                                       zlib.compress(finished.SerializeToString(), 1), zlib.compress(log, 1),
                                       time.time(), keys.tournament_id]  # fmt: skip
    script_keys = [keys.match(match_id), keys.state, keys.errors, keys.results, keys.tournament]
    return bool(client.eval(_RECORD, len(script_keys), *script_keys, *argv))


@dataclass(frozen=True, slots=True)
class RecordedMatch:
    match_id: str
    summary: dict[str, Any]
    finished: control_pb2.FinishedMatch
    events: list[pb.Event]
    recorded: float


def is_recorded(client: redis.Redis, keys: Keys, index: int) -> bool:
    return bool(client.exists(keys.match(keys.match_id(index))))


def load_match(client: redis.Redis, prefix: str, match_id: str) -> RecordedMatch | None:
    raw = client.hgetall(f"{prefix}:match:{match_id}")
    if not raw:
        return None
    finished = control_pb2.FinishedMatch.FromString(zlib.decompress(_bytes(raw[b"finished"])))
    log = control_pb2.EventLogChunk.FromString(zlib.decompress(_bytes(raw[b"log"])))
    return RecordedMatch(match_id, json.loads(raw[b"summary"]), finished, list(log.events),
                         float(raw[b"recorded"]))  # fmt: skip


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def summaries(client: redis.Redis, prefix: str, tournament_id: str | None) -> list[dict[str, Any]]:
    """Every recorded match of the tournament (None: of every tournament), in recording order."""
    if tournament_id is None:
        return [s for t in list_ids(client, prefix) for s in summaries(client, prefix, t)]
    ids = [text(i) for i in client.lrange(Keys(prefix, tournament_id).results, 0, -1)]
    with client.pipeline(transaction=False) as pipe:
        for match_id in ids:
            pipe.hget(f"{prefix}:match:{match_id}", "summary")
        return [json.loads(raw) for raw in pipe.execute() if raw is not None]
