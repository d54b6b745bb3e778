"""The live view's server-sent events on the web view's real server over a real Redis, read with a plain HTTP
client: a feed's entries as `start`, `events` and `end` messages, a resume from Last-Event-ID, streams that
end by themselves and are capped (503), and the running matches' JSON."""

from __future__ import annotations

import contextlib
import http.client
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis

from tests.endpoints import status_of
from tests.web.browser import serving
from tests.web.test_web import recorded  # noqa: F401 (a fixture)
from tests.workers.harness import wait_until
from uno_arena.records import identity, live
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, scheduled_match, set_state
from uno_arena.v1 import game_pb2 as pb
from uno_arena.web import live as live_web
from uno_arena.web.app import ServerLimits, create_app
from uno_arena.workers import lifecycle

BOTS = ["ann", "bob"]


@dataclass(frozen=True)
class Message:
    event: str
    data: str
    id: str | None = None

    def json(self) -> Any:
        return json.loads(self.data)


class EventStream:
    """`GET url` with a plain HTTP client, its body read as server-sent events as they arrive."""

    def __init__(self, url: str, last_id: str | None = None, timeout: float = 15, source: str | None = None,
                 forwarded_for: str | None = None) -> None:  # fmt: skip
        """`source`: the client's own address (another loopback one, e.g. 127.0.0.2, is another client);
        `forwarded_for`: an X-Forwarded-For header, as a proxy sends it."""
        parts = urllib.parse.urlsplit(url)
        bound = (source, 0) if source else None
        self.connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout, bound)
        headers = {"Accept": "text/event-stream"} | ({"Last-Event-ID": last_id} if last_id else {})
        headers |= {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
        self.connection.request("GET", parts.path, headers=headers)
        self.response = self.connection.getresponse()
        self.retry_ms: int | None = None

    @property
    def status(self) -> int:
        return self.response.status

    def messages(self) -> Iterator[Message]:
        """Each message as it comes, until the server ends the response (comments skipped)."""
        fields: dict[str, str] = {}
        while line := self.response.readline():
            text = line.decode().rstrip("\r\n")
            if text:
                name, _, value = text.partition(":")
                if name:  # a line starting with ':' is a comment
                    fields[name] = value.removeprefix(" ")
                continue
            if "retry" in fields:
                self.retry_ms = int(fields.pop("retry"))
            if "data" in fields:
                yield Message(fields.get("event", "message"), fields["data"], fields.get("id"))
            fields = {}

    def close(self) -> None:
        self.response.close()  # the socket closes once the response, which reads it, lets go of it too
        self.connection.close()


def follow(url: str, last_id: str | None = None) -> Iterator[Message]:
    """A browser's EventSource: reads the match's stream, reconnecting with Last-Event-ID when a stream
    ends, until the `end` message."""
    while True:
        stream = EventStream(url, last_id)
        try:
            assert stream.status == 200, stream.response.read()
            for message in stream.messages():
                yield message
                last_id = message.id or last_id
                if message.event == "end":
                    return
        finally:
            stream.close()


@contextlib.contextmanager
def web(client: redis.Redis, prefix: str, threads: int = 8, trust_proxy: bool = False,
        **limits: Any) -> Iterator[str]:  # fmt: skip
    """The web view on its own server (waitress, `threads` threads); `limits`: the live streams'."""
    app = create_app(client, prefix, trust_proxy=trust_proxy)
    live_web.limit(app, live_web.LiveLimits(**limits))
    with serving(app, ServerLimits(threads=threads)) as url:  # the streams: threads - 2
        yield url


@pytest.fixture
def feed(redis_prefix: tuple[redis.Redis, str]) -> live.LiveFeed:
    """The live feed of match 0 of a tournament, which is running."""
    client, prefix = redis_prefix
    for bot in BOTS:
        identity.register_bot(client, prefix, bot)
    tournament_id = lifecycle.create_checked(client, prefix, spec_from_dict({"name": "live", "bots": BOTS}))
    keys = Keys(prefix, tournament_id)
    set_state(client, keys, 0, MatchState.RUNNING)
    return live.LiveFeed(client, keys, 0, scheduled_match(client, prefix, tournament_id, 0).bots)


def played(seat: int, rank: int) -> pb.Event:
    return pb.Event(played=pb.Played(seat=seat, card=pb.Card(colour=pb.COLOUR_BLUE, rank=rank)))


def test_the_events_stream_then_end_and_a_reconnection_resumes(feed: live.LiveFeed) -> None:
    client, prefix = feed.client, feed.keys.prefix
    feed.start()
    feed.append([pb.Event(hand_started=pb.HandStarted(number=1)), played(1, pb.RANK_3)])
    with web(client, prefix, block_ms=200) as url:
        events_url = f"{url}/match/{feed.match_id}/events"
        stream = EventStream(events_url)
        assert stream.response.getheader("Content-Type", "").startswith("text/event-stream")
        assert stream.response.getheader("Cache-Control") == "no-cache"
        messages = stream.messages()
        start, first = next(messages), next(messages)
        assert stream.retry_ms == live_web.LiveLimits().retry_ms  # how soon a browser reconnects
        assert (start.event, start.json()) == (
            "start",
            {"match_id": feed.match_id, "bots": list(feed.bots), "index": 0},
        )
        assert first.event == "events" and first.id is not None
        card = {"colour": "COLOUR_BLUE", "rank": "RANK_3"}
        assert first.json() == [{"hand_started": {"number": 1}},  # the replay JSON's `events` shape
                                {"played": {"seat": 1, "card": card}}]  # fmt: skip

        feed.append([played(1, pb.RANK_4)])  # played while the browser watches: pushed to it
        pushed = next(messages)
        assert pushed.json()[0]["played"]["seat"] == 1 and pushed.id is not None and pushed.id > first.id
        feed.end(recorded=True)
        end = next(messages)
        assert (end.event, end.json()) == ("end", {"match_id": feed.match_id, "recorded": True})
        assert list(messages) == []  # the response ends with the match
        stream.close()

        resumed = list(follow(events_url, last_id=first.id))  # a reconnection after `first`
        assert [(m.event, m.id) for m in resumed] == [("events", pushed.id), ("end", end.id)]
        assert [m.event for m in follow(events_url)] == ["start", "events", "events", "end"]


def test_a_stream_ends_by_itself_and_the_browser_resumes_where_it_was(feed: live.LiveFeed) -> None:
    client, prefix = feed.client, feed.keys.prefix
    feed.start()
    with web(client, prefix, stream_s=0.6, block_ms=100) as url:
        events_url = f"{url}/match/{feed.match_id}/events"
        stream = EventStream(events_url)
        first = list(stream.messages())  # nothing happens for stream_s: the server ends the response
        stream.close()
        assert [m.event for m in first] == ["start"]
        feed.append([played(0, pb.RANK_7)])
        feed.end(recorded=False, reason="the bots left")
        rest = list(follow(events_url, last_id=first[-1].id))
        assert [m.event for m in rest] == ["events", "end"]
        assert rest[-1].json()["reason"] == "the bots left"


def test_live_streams_are_capped_and_a_closed_one_frees_its_place(feed: live.LiveFeed) -> None:
    client, prefix = feed.client, feed.keys.prefix
    feed.start()
    # 4 threads: 2 streams, 2 for the pages; every stream from this one address, so its own limit lifted
    with web(client, prefix, threads=4, block_ms=100, per_client=3) as url:
        events_url = f"{url}/match/{feed.match_id}/events"
        held = [EventStream(events_url) for _ in range(2)]
        for stream in held:
            assert stream.status == 200 and next(stream.messages()).event == "start"
        refused = EventStream(events_url)
        assert refused.status == 503
        assert refused.response.getheader("Retry-After") == str(live_web.LiveLimits().busy_retry_s)
        assert b"live streams are taken" in refused.response.read()
        refused.close()
        assert (
            status_of(f"{url}/api/tournament/{feed.keys.tournament_id}/running")[0] == 200
        )  # pages still work

        held.pop().close()  # a browser leaves: noticed at the next keep-alive comment

        def accepted() -> bool:
            stream = EventStream(events_url)
            stream.close()
            return stream.status == 200

        wait_until(accepted, 10, "a closed stream's place to be free again")
        for stream in held:
            stream.close()


def test_one_client_address_holds_at_most_two_streams(feed: live.LiveFeed) -> None:
    """Six slow readers from one address took every stream; now a client gets two, and others get in."""
    client, prefix = feed.client, feed.keys.prefix
    feed.start()
    with web(client, prefix, threads=8, block_ms=100) as url:  # 6 streams, 2 per client address
        events_url = f"{url}/match/{feed.match_id}/events"
        held = [EventStream(events_url) for _ in range(2)]
        assert [stream.status for stream in held] == [200, 200]
        third = EventStream(events_url)
        assert third.status == 429
        assert third.response.getheader("Retry-After") == str(live_web.LiveLimits().busy_retry_s)
        assert b"this address has 2 live streams open, the most one may" in third.response.read()
        third.close()
        elsewhere = EventStream(events_url, source="127.0.0.2")  # another client is let in
        assert elsewhere.status == 200 and next(elsewhere.messages()).event == "start"
        for stream in [*held, elsewhere]:
            stream.close()


def test_behind_a_trusted_proxy_the_client_it_forwards_for_counts(feed: live.LiveFeed) -> None:
    client, prefix = feed.client, feed.keys.prefix
    feed.start()
    with web(client, prefix, threads=8, trust_proxy=True, block_ms=100) as url:
        events_url = f"{url}/match/{feed.match_id}/events"
        ann = [EventStream(events_url, forwarded_for="10.0.0.1") for _ in range(3)]
        assert [stream.status for stream in ann] == [200, 200, 429]
        bob = EventStream(events_url, forwarded_for="198.51.100.7, 10.0.0.2")  # the proxy's own entry last
        assert bob.status == 200
        for stream in [*ann, bob]:
            stream.close()


def test_unknown_matches_bad_ids_and_matches_long_over(
    feed: live.LiveFeed,
    recorded: tuple[redis.Redis, str, str],  # noqa: F811 (the fixture)
) -> None:
    client, prefix, tournament_id = recorded  # the same Redis and prefix as `feed`: one redis_prefix
    with web(client, prefix) as url:
        assert status_of(f"{url}/match/{tournament_id}-m00099/events")[0] == 404  # never played
        assert status_of(f"{url}/match/no-such-match/events")[0] == 404
        assert status_of(f"{url}/match/{feed.match_id}/events")[0] == 404  # scheduled, not started
        feed.start()
        bad = EventStream(f"{url}/match/{feed.match_id}/events", last_id="$ or anything")
        assert bad.status == 400
        bad.close()
        # recorded, its feed long expired: the page is told at once to load the replay
        over = list(follow(f"{url}/match/{tournament_id}-m00000/events"))
        assert [(m.event, m.json()) for m in over] == [("end", {"match_id": f"{tournament_id}-m00000",
                                                                "recorded": True})]  # fmt: skip


def test_the_running_matches_of_a_tournament(feed: live.LiveFeed) -> None:
    client, prefix, tournament_id = feed.client, feed.keys.prefix, feed.keys.tournament_id
    with web(client, prefix) as url:
        running_url = f"{url}/api/tournament/{tournament_id}/running"
        assert json.loads(status_of(running_url)[1]) == {"running": []}
        feed.start()
        assert json.loads(status_of(running_url)[1]) == {
            "running": [{"match_id": feed.match_id, "bots": list(feed.bots), "index": 0}]
        }
        feed.end(recorded=True)
        assert json.loads(status_of(running_url)[1]) == {"running": []}
        status, body = status_of(f"{url}/api/tournament/nope/running")
        assert status == 404 and "error" in json.loads(body)


def test_faults_are_sent_in_order_with_the_events_and_resumed_across_both(feed: live.LiveFeed) -> None:
    client, prefix = feed.client, feed.keys.prefix
    fault = pb.Fault(match_id=feed.match_id, seat=1, kind=pb.FAULT_KIND_TIMEOUT, detail="no answer in 50 ms",
                     applied=pb.Action(id=108, kind=pb.ACTION_KIND_DRAW, text="draw"), strikes=3,
                     forfeited=True, action_index=0, event_index=1)  # fmt: skip
    feed.start()
    feed.write([[pb.Event(hand_started=pb.HandStarted(number=1))], fault, [played(1, pb.RANK_3)]])
    feed.end(recorded=True)
    with web(client, prefix, block_ms=200) as url:
        events_url = f"{url}/match/{feed.match_id}/events"
        messages = list(follow(events_url))
        assert [m.event for m in messages] == ["start", "events", "fault", "events", "end"]
        draw = {"id": 108, "kind": "ACTION_KIND_DRAW", "text": "draw"}
        assert messages[2].json() == {  # the replay JSON's `finished.faults[]` shape
            "match_id": feed.match_id, "seat": 1, "kind": "FAULT_KIND_TIMEOUT",
            "detail": "no answer in 50 ms",
            "applied": draw, "strikes": 3, "forfeited": True, "action_index": 0, "event_index": 1,
        }  # fmt: skip
        resumed = list(follow(events_url, last_id=messages[1].id))  # after the events, before the fault
        assert [(m.event, m.id) for m in resumed] == [(m.event, m.id) for m in messages[2:]]
        assert [m.event for m in follow(events_url, last_id=messages[2].id)] == ["events", "end"]


def test_a_resume_id_the_stream_never_sent_is_refused(feed: live.LiveFeed) -> None:
    client, prefix = feed.client, feed.keys.prefix
    feed.start()
    feed.append([played(0, pb.RANK_7)])
    with web(client, prefix, block_ms=200) as url:
        events_url = f"{url}/match/{feed.match_id}/events"
        stream = EventStream(events_url)
        messages = stream.messages()
        start, events = next(messages), next(messages)
        stream.close()
        assert start.id is not None and events.id is not None
        milliseconds, sequence = (int(part) for part in events.id.split("-"))
        for never_sent in (f"{milliseconds}-{sequence + 1}", f"{milliseconds + 3_600_000}-0",
                           "99999999999999999999-0"):  # fmt: skip
            refused = EventStream(events_url, last_id=never_sent)
            assert refused.status == 400, never_sent
            assert "not an id this stream sent" in refused.response.read().decode()
            refused.close()
        feed.end(recorded=True)
        assert [m.event for m in follow(events_url, last_id=start.id)] == ["events", "end"]  # a sent id: fine
