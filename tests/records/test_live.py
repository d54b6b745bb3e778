"""A match's live feed in a real Redis: entries in order, a start that voids an earlier attempt, an end that
expires soon, a bounded stream, and the running list kept honest by the match states."""

from __future__ import annotations

import json

import pytest
import redis

from uno_arena.records import identity, live
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, scheduled_match, set_state
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import lifecycle

BOTS = ["ann", "bob"]


@pytest.fixture
def tournament(redis_prefix: tuple[redis.Redis, str]) -> tuple[redis.Redis, Keys]:
    client, prefix = redis_prefix
    for bot in BOTS:
        identity.register_bot(client, prefix, bot)
    tournament_id = lifecycle.create_checked(
        client, prefix, spec_from_dict({"name": "live", "bots": BOTS, "cycles": 3})
    )
    return client, Keys(prefix, tournament_id)


def feed_of(
    client: redis.Redis, keys: Keys, index: int, max_entries: int = live.MAX_ENTRIES
) -> live.LiveFeed:
    bots = scheduled_match(client, keys.prefix, keys.tournament_id, index).bots
    return live.LiveFeed(client, keys, index, bots, max_entries)


def played(seat: int) -> pb.Event:
    return pb.Event(played=pb.Played(seat=seat, card=pb.Card(colour=pb.COLOUR_RED, rank=pb.RANK_5, index=5)))


def test_entries_in_order_then_an_end(tournament: tuple[redis.Redis, Keys]) -> None:
    client, keys = tournament
    feed = feed_of(client, keys, 0)
    feed.start()
    feed.append([pb.Event(hand_started=pb.HandStarted(number=1)), played(0)])
    feed.append([])  # nothing to write: no entry
    feed.append([played(1)])
    entries = live.read(client, keys.prefix, feed.match_id)
    assert [e.kind for e in entries] == ["start", "events", "events"]
    assert json.loads(entries[0].data) == {"match_id": feed.match_id, "bots": list(feed.bots), "index": 0}
    first = json.loads(entries[1].data)
    assert first[0] == {"hand_started": {"number": 1}}  # the replay JSON's shape: proto field names
    assert first[1]["played"]["card"] == {"colour": "COLOUR_RED", "rank": "RANK_5", "index": 5}
    assert live.read(client, keys.prefix, feed.match_id, after=entries[1].id) == entries[2:]  # resumes after
    assert 0 < client.ttl(feed.key) <= live.RUNNING_TTL_S  # a feed nobody ends goes away by itself

    feed.end(recorded=True)
    ended = live.read(client, keys.prefix, feed.match_id, after=entries[2].id)
    assert [e.kind for e in ended] == ["end"]
    assert json.loads(ended[0].data) == {"match_id": feed.match_id, "recorded": True}
    assert live.read(client, keys.prefix, feed.match_id) == [*entries, *ended]  # a reader may still catch up
    assert 0 < client.ttl(feed.key) <= live.ENDED_TTL_S  # then the replay tells it all
    assert live.exists(client, keys.prefix, feed.match_id)


def test_a_second_start_voids_the_first_attempt_and_resumers_read_it_next(
    tournament: tuple[redis.Redis, Keys],
) -> None:
    client, keys = tournament
    feed = feed_of(client, keys, 1)
    feed.start()
    feed.append([played(0), played(1)])
    seen = live.read(client, keys.prefix, feed.match_id)
    feed.start()  # the match is played again (its worker died, or the server restarted)
    feed.append([played(1)])
    again = live.read(client, keys.prefix, feed.match_id)
    assert [e.kind for e in again] == ["start", "events"]  # the first attempt's events are gone
    assert again[0].id > seen[-1].id  # ids keep growing: a reader that was following reads the start next
    assert live.read(client, keys.prefix, feed.match_id, after=seen[-1].id) == again
    assert json.loads(again[1].data)[0]["played"]["seat"] == 1


def test_a_stream_is_capped(tournament: tuple[redis.Redis, Keys]) -> None:
    client, keys = tournament
    feed = feed_of(client, keys, 2, max_entries=10)
    feed.start()
    for _ in range(1000):
        feed.append([played(0)])
    assert client.xlen(feed.key) < 300  # trimmed as it grows (approximately, by whole nodes)


def test_the_running_list_shows_only_matches_still_running(tournament: tuple[redis.Redis, Keys]) -> None:
    client, keys = tournament
    prefix, tournament_id = keys.prefix, keys.tournament_id
    assert live.running(client, prefix, tournament_id) == []
    first, second = feed_of(client, keys, 0), feed_of(client, keys, 1)
    for index, feed in ((0, first), (1, second)):
        set_state(client, keys, index, MatchState.RUNNING)
        feed.start()
    listed = live.running(client, prefix, tournament_id)
    assert [(m.match_id, m.index, m.bots) for m in listed] == [(first.match_id, 0, first.bots),
                                                               (second.match_id, 1, second.bots)]  # fmt: skip
    assert live.running_bots(client, prefix, second.match_id) == second.bots

    second.end(recorded=False, reason="bots not connected")
    assert [m.index for m in live.running(client, prefix, tournament_id)] == [0]
    assert live.running_bots(client, prefix, second.match_id) is None
    assert json.loads(live.read(client, prefix, second.match_id)[-1].data)["reason"] == "bots not connected"

    set_state(client, keys, 0, MatchState.QUEUED)  # its worker died and the reaper queued it again
    assert live.running(client, prefix, tournament_id) == []  # the entry it left is not shown
    assert live.running_bots(client, prefix, "not a match id") is None


def test_a_malformed_resume_id_is_refused(tournament: tuple[redis.Redis, Keys]) -> None:
    client, keys = tournament
    with pytest.raises(ValueError, match="not a stream id"):
        live.read(client, keys.prefix, keys.match_id(0), after="$")
    assert live.read(client, keys.prefix, keys.match_id(0)) == []  # no feed: nothing, no error
    assert not live.is_stream_id("18446744073709551616-0")  # past 64 bits: Redis would refuse it
    with pytest.raises(ValueError, match="not a stream id"):
        live.read(client, keys.prefix, keys.match_id(0), after="18446744073709551616-0")


def timeout(seat: int, strikes: int, event_index: int, forfeited: bool = False) -> pb.Fault:
    draw = pb.Action(id=108, kind=pb.ACTION_KIND_DRAW, text="draw")
    return pb.Fault(match_id="m", seat=seat, kind=pb.FAULT_KIND_TIMEOUT, detail="no answer in 100 ms",
                    applied=draw, strikes=strikes, forfeited=forfeited,
                    action_index=event_index // 2, event_index=event_index)  # fmt: skip


def test_faults_are_entries_in_order_with_the_events(tournament: tuple[redis.Redis, Keys]) -> None:
    client, keys = tournament
    feed = feed_of(client, keys, 0)
    feed.start()
    fault = timeout(1, strikes=3, event_index=2, forfeited=True)
    feed.write([[played(0), played(1)], fault, [played(0)], []])
    entries = live.read(client, keys.prefix, feed.match_id)
    assert [e.kind for e in entries] == ["start", "events", "fault", "events"]
    assert json.loads(entries[2].data) == {  # the replay JSON's `finished.faults[]` shape
        "match_id": "m", "seat": 1, "kind": "FAULT_KIND_TIMEOUT", "detail": "no answer in 100 ms",
        "applied": {"id": 108, "kind": "ACTION_KIND_DRAW", "text": "draw"}, "strikes": 3, "forfeited": True,
        "action_index": 1, "event_index": 2,
    }  # fmt: skip
    assert live.read(client, keys.prefix, feed.match_id, after=entries[1].id) == entries[2:]  # resumes


def test_only_ids_a_stream_can_have_sent_are_resumed_from(tournament: tuple[redis.Redis, Keys]) -> None:
    client, keys = tournament
    feed = feed_of(client, keys, 1)
    feed.start()
    feed.append([played(0)])
    feed.append([played(1)])
    first, middle, last = (e.id for e in live.read(client, keys.prefix, feed.match_id))
    for sent in ("0", first, middle, last, "1-0"):  # "1-0": older than the stream (trimmed): may be
        assert live.may_have_sent(client, keys.prefix, feed.match_id, sent), sent
    milliseconds, sequence = (int(part) for part in last.split("-"))
    after_last = f"{milliseconds}-{sequence + 1}"
    between = f"{milliseconds}-{sequence - 1}" if sequence else None
    assert not live.may_have_sent(client, keys.prefix, feed.match_id, after_last)
    assert not live.may_have_sent(client, keys.prefix, feed.match_id, f"{milliseconds + 10**6}-0")
    assert not live.may_have_sent(client, keys.prefix, feed.match_id, "$")
    if between is not None and between not in (first, middle):
        assert not live.may_have_sent(client, keys.prefix, feed.match_id, between)
