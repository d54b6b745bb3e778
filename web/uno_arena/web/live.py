"""A running match's public events as they happen, for the live view (server-sent events).

`GET /match/<id>/events` streams the match's live feed (`uno_arena.records.live`, written by the worker
playing it from the server's Spectate stream): `event: start` (data {"match_id", "bots", "index"}: the
match starts from its first event, forget what came before), `event: events` (data: a JSON list of
events, as the replay JSON's `events`), `event: fault` (data: a bot's fault, as the replay JSON's
`finished.faults[]`: seat, kind, detail, applied, strikes, forfeited, action_index, event_index; sent
after the events logged before it), `event: end` (data {"match_id", "recorded", "reason"?}: the match
is over, load its replay); each with `id:` its stream id, so a browser that reconnects with
`Last-Event-ID` resumes after it (an id the stream never sent, e.g. one after its last entry, is a 400:
silence would leave the browser waiting for nothing). `GET /api/tournament/<id>/running` lists the
matches being played.

A stream holds one of the server's few threads while it is open, so they are bounded: at most
`LiveLimits.streams` at once (more get a 503 with Retry-After), at most `per_client` of them from one
client address (more get a 429 with Retry-After: one client cannot take every stream), each ends after
`stream_s` (the browser reconnects after the `retry:` hint, resuming where it was), and Redis is waited
on in slices of `block_ms`, so a stopping server or a client that left is noticed within one.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from flask import Blueprint, Flask, Response, abort, current_app, jsonify, request

from uno_arena.records import live
from uno_arena.records.match import match_key
from uno_arena.records.tournament import exists, is_match_id
from uno_arena.web.context import context

if TYPE_CHECKING:  # annotations only: `WebServer` sets the limits of an app without Redis too
    import redis

log = logging.getLogger(__name__)
blueprint = Blueprint("live", __name__)
EXTENSION = "uno_arena.live"


@dataclass(frozen=True)
class LiveLimits:
    """How much of the web server the live streams may take."""

    streams: int = 6  # open at once (`limit_streams`: the server's threads less two, for the pages)
    stream_s: float = 30.0  # a stream ends after this long; the browser reconnects and resumes
    block_ms: int = 1000  # one wait on Redis; a comment line is sent after each empty one
    retry_ms: int = 1000  # the `retry:` hint: how soon a browser reconnects after a stream ends
    busy_retry_s: int = 5  # the Retry-After of a 503 when every stream is taken (and of a 429)
    per_client: int = 2  # open at once from one client address (0: no limit but `streams`)
    slots: threading.BoundedSemaphore = field(init=False, repr=False, compare=False)
    by_client: Counter[str] = field(init=False, repr=False, compare=False)  # open streams per address
    lock: threading.Lock = field(init=False, repr=False, compare=False)  # guards `by_client`

    def __post_init__(self) -> None:
        object.__setattr__(self, "slots", threading.BoundedSemaphore(max(self.streams, 0)))
        object.__setattr__(self, "by_client", Counter())
        object.__setattr__(self, "lock", threading.Lock())

    def take(self, client: str) -> int | None:
        """Open a stream for `client`: None if it may, else the status refusing it (429: this client has
        `per_client` open; 503: every stream is taken). A stream taken is given back by `give_back`."""
        with self.lock:
            if self.per_client and self.by_client[client] >= self.per_client:
                return 429
            if not self.slots.acquire(blocking=False):
                return 503
            self.by_client[client] += 1
            return None

    def open_streams(self) -> int:
        """How many streams are open now (the web view's metrics read it)."""
        with self.lock:
            return sum(self.by_client.values())

    def give_back(self, client: str) -> None:
        with self.lock:
            self.by_client[client] -= 1
            if self.by_client[client] <= 0:
                del self.by_client[client]  # bounded by the streams open, not by every client ever seen
            self.slots.release()


def limit(app: Flask, limits: LiveLimits) -> None:
    """Set the app's live-stream limits."""
    app.extensions[EXTENSION] = limits


def limit_streams(app: Flask, threads: int, per_client: int | None = None) -> None:
    """Streams for a server of `threads` threads (`WebServer` calls it): two stay free for the pages (one
    of two; none of one), and `per_client` from one address (None: as it was); the app's other limits
    are kept."""
    streams = threads - 2 if threads > 2 else threads - 1
    limits = replace(app.extensions.get(EXTENSION, LiveLimits()), streams=streams)
    if per_client is not None:
        limits = replace(limits, per_client=per_client)
    app.extensions[EXTENSION] = limits


def open_streams(app: Flask) -> int:
    """The live streams `app` has open now (0 before any was asked for)."""
    limits = app.extensions.get(EXTENSION)
    return limits.open_streams() if isinstance(limits, LiveLimits) else 0


def _limits() -> LiveLimits:
    limits = current_app.extensions.get(EXTENSION)
    if limits is None:
        limits = current_app.extensions.setdefault(EXTENSION, LiveLimits())
    assert isinstance(limits, LiveLimits)
    return limits


@blueprint.get("/api/tournament/<tournament_id>/running")
def running(tournament_id: str) -> Response:
    web = context()
    if not exists(web.store, web.prefix, tournament_id):
        abort(404, f"no tournament {tournament_id!r}")
    matches = live.running(web.store, web.prefix, tournament_id)
    return jsonify(running=[{"match_id": m.match_id, "bots": list(m.bots), "index": m.index}
                            for m in matches])  # fmt: skip


@blueprint.get("/match/<match_id>/events")
def events(match_id: str) -> Response:
    web = context()
    after = request.headers.get("Last-Event-ID", "").strip() or "0"
    if after != "0" and not live.is_stream_id(after):
        abort(400, "Last-Event-ID: not an id this stream sent")
    if not is_match_id(match_id):
        abort(404, f"no match {match_id!r}")
    if not live.exists(web.store, web.prefix, match_id):
        if not web.store.exists(match_key(web.prefix, match_id)):
            abort(404, f"no running or recorded match {match_id!r}")
        ended = json.dumps({"match_id": match_id, "recorded": True})  # its feed is gone: it ended long ago
        return _event_stream(iter([f"event: end\ndata: {ended}\n\n"]))
    if not live.may_have_sent(web.store, web.prefix, match_id, after):
        abort(400, "Last-Event-ID: not an id this stream sent")
    limits = _limits()
    client = request.remote_addr or ""  # behind a trusted proxy, the address it forwarded for
    refused = limits.take(client)
    if refused is not None:
        retry = {"Retry-After": str(limits.busy_retry_s)}
        if refused == 429:
            log.info("live stream of %s refused: %s has %d open", match_id, client, limits.per_client,
                     extra={"match_id": match_id})  # fmt: skip
            many = (f"this address has {limits.per_client} live streams open, the most one may; close one, "
                    f"or try again in {limits.busy_retry_s} s\n")  # fmt: skip
            return Response(many, 429, retry, mimetype="text/plain")
        log.info("live stream of %s refused: all %d streams are open", match_id, limits.streams,
                 extra={"match_id": match_id})  # fmt: skip
        busy = f"all {limits.streams} live streams are taken; try again in {limits.busy_retry_s} s\n"
        return Response(busy, 503, retry, mimetype="text/plain")
    released = threading.Lock()

    def release() -> None:  # once, whether the stream ran to its end, failed or was never started
        if released.acquire(blocking=False):
            limits.give_back(client)

    response = _event_stream(_entries(web.store, web.prefix, match_id, after, limits))
    response.call_on_close(release)
    return response


def _event_stream(body: Iterator[str]) -> Response:
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # a proxy must not buffer it
    return Response(body, 200, headers, mimetype="text/event-stream")


def _entries(client: redis.Redis, prefix: str, match_id: str, after: str,
             limits: LiveLimits) -> Iterator[str]:  # fmt: skip
    """The stream's messages after `after`, for up to `limits.stream_s`; ends early at the match's end."""
    import redis  # here: this module is imported without Redis too (`uno-arena web --replays DIR`)

    yield f"retry: {limits.retry_ms}\n\n"
    deadline = time.monotonic() + limits.stream_s
    while (left_ms := int((deadline - time.monotonic()) * 1000)) > 0:
        block_ms = max(1, min(limits.block_ms, left_ms))
        try:
            entries = live.read(client, prefix, match_id, after, block_ms=block_ms)
        except redis.RedisError as error:  # the browser reconnects after `retry`, resuming from `after`
            log.warning("live stream of %s: Redis is not answering: %s", match_id, error,
                        extra={"match_id": match_id})  # fmt: skip
            return
        if not entries:
            yield ":\n\n"  # a comment: a client that left is noticed when it cannot be sent
        for entry in entries:
            yield f"id: {entry.id}\nevent: {entry.kind}\ndata: {entry.data}\n\n"
            after = entry.id
            if entry.kind == "end":
                return
