"""Following a match's public events while the job plays it: the server's Spectate stream into the match's
live feed in Redis (`uno_arena.records.live`), which the web view pushes to browsers.

Two threads per match: a reader, because a gRPC stream is a blocking iterator, and a writer, which
writes what arrived at most every `FLUSH_S` (a burst of quick decisions is one entry, and a slow Redis
never holds the reader). Nothing here can fail or slow the match: the job's PlayMatch call does not wait
for them, and their errors are logged, never raised. The reader asks again while the match is not
running yet (NOT_FOUND: its bots are being waited for) or the server is away (UNAVAILABLE); a server that
restarted plays the match again from its first event, which the reader tells from a reconnection by
comparing what it is sent again with what it wrote, and then starts the feed over.

Faults do not come through Spectate: the job hands each to `fault` as its PlayMatch stream reports it.
The writer puts a fault into the feed after the events logged before it (its `event_index`), so a
reader meets it in place; one that arrives before those events waits for them (or for the match's end).
Limits: a job that attaches to a match an earlier job started hears only the faults from then on, and
after a server restart a fault of the new run that arrives before the restart is noticed may be lost;
the replay has every fault.
"""

from __future__ import annotations

import logging
import threading
import time

import grpc
import redis

from uno_arena.records.live import LiveFeed
from uno_arena.v1 import channels, control_pb2, control_pb2_grpc
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.channels import ClientTLS, TLSError

log = logging.getLogger(__name__)

FLUSH_S = 0.05  # at most one write per this long: the stream's entries per second are bounded
POLL_S = 0.1  # asking again for a match that is not running yet
LONGEST_PAUSE_S = 1.0  # the longest pause between asks while the server is away
FINISH_GRACE_S = 2.0  # how long `close` waits for the last events of a match that ended
RETRIED = frozenset({grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAVAILABLE})


class Follower:
    """Follows one match's Spectate stream into its `LiveFeed`, from `start` until `close`."""

    def __init__(self, feed: LiveFeed, server: str | None, control_token: str,
                 tls: ClientTLS | None = None) -> None:  # fmt: skip
        """`server`: where the match plays; None until it is placed (a pool's, `follow` says where)."""
        self.feed, self.server, self.tls = feed, server, tls or ClientTLS()
        self._ids = feed.keys.log_ids(feed.index)  # the fields of its log lines (`--log-format json`)
        self._metadata = [("authorization", f"Bearer {control_token}")]
        self._finishing = threading.Event()  # the match ended or failed: read to the stream's end, then stop
        self._cancel = threading.Event()  # the reader stops now
        self._abandon = threading.Event()  # the writer stops now, leaving what it could not write
        self._changed = threading.Condition()  # guards what follows; notified when there is work to write
        self._seen: list[pb.Event] = []  # the match's events as received, to tell a restart from a resend
        self._pending: list[pb.Event] = []  # received, not written yet
        self._faults: list[pb.Fault] = []  # the match's faults as received, to tell a resend
        self._pending_faults: list[pb.Fault] = []  # received, not written yet, by event_index
        self._start_due = True  # a `start` entry goes first: at the beginning and after a restart
        self._reading = True
        self._call: grpc.Future[object] | None = None
        self.written = 0  # events written (after the last start)
        self._reader = threading.Thread(target=self._read, name=f"spectate-{feed.match_id}", daemon=True)
        self._writer = threading.Thread(target=self._write, name=f"live-{feed.match_id}", daemon=True)
        self._closed = False

    def start(self) -> None:
        self._reader.start()
        self._writer.start()

    def close(self, grace_s: float = FINISH_GRACE_S) -> None:
        """Stop following: a match that just ended has its last events read (the stream ends by itself
        right after the match) and written, for up to `grace_s`; then both threads stop. Idempotent."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + grace_s
        self._finishing.set()
        if self._reader.is_alive():
            self._reader.join(grace_s)
            self._cancel.set()
            with self._changed:
                call = self._call
            if call is not None:
                call.cancel()
            self._reader.join(grace_s)
        if self._writer.is_alive():
            self._writer.join(max(deadline - time.monotonic(), 0.1))
        if self._writer.is_alive():  # Redis slow or away: what is left is dropped, the feed expires
            self._abandon.set()
            with self._changed:
                self._changed.notify_all()
            log.warning("%s: its last public events were not written to its live feed in time",
                        self.feed.match_id, extra=self._ids)  # fmt: skip

    def fault(self, fault: pb.Fault) -> None:
        """A fault the job's PlayMatch stream reported: written after the events logged before it."""
        with self._changed:
            if fault in self._faults:
                return  # reported again (an attempt attached to the match): written already
            self._faults.append(fault)
            self._pending_faults.append(fault)
            self._pending_faults.sort(key=lambda f: f.event_index)
            self._changed.notify_all()

    def follow(self, server: str) -> None:
        """Follow the match on `server` from now on: a pool's job placed it there (again, after the
        server it played on was lost: the match starts over there, and so does its feed)."""
        with self._changed:
            if server == self.server:
                return
            self.server, call = server, self._call
        if call is not None:
            call.cancel()  # the reader then asks the new server

    # --- the reader -------------------------------------------------------

    def _read(self) -> None:
        request = control_pb2.SpectateRequest(match_id=self.feed.match_id)
        pause = POLL_S
        try:
            while not self._cancel.is_set():
                server = self.server
                if server is None:  # not placed yet
                    if self._finishing.wait(POLL_S):
                        return
                    continue
                with channels.channel(server, self.tls) as channel:
                    stub = control_pb2_grpc.ControlServiceStub(channel)
                    while not self._cancel.is_set() and self.server == server:
                        code = self._follow(stub, request, server)
                        if self.server != server:  # moved: ask the new server
                            break
                        if code is not None and code not in RETRIED:
                            return
                        away = code == grpc.StatusCode.UNAVAILABLE  # back off; not running yet: soon
                        pause = min(pause * 2, LONGEST_PAUSE_S) if away else POLL_S
                        if self._finishing.wait(pause):  # the match is over: nothing more will come
                            return
        except TLSError as error:  # the job refuses the match for the same reason, and says so
            log.debug("%s: not following its public events: %s", self.feed.match_id, error)
        except Exception:  # a bug of ours must not touch the match
            log.exception("%s: following its public events failed", self.feed.match_id, extra=self._ids)
        finally:
            with self._changed:
                self._reading = False
                self._changed.notify_all()

    def _follow(self, stub: control_pb2_grpc.ControlServiceStub, request: control_pb2.SpectateRequest,
                server: str) -> grpc.StatusCode | None:  # fmt: skip
        """Read one Spectate stream to its end: None when it ended (the match ended on that server), else
        the status code it failed with."""
        call = stub.Spectate(request, metadata=self._metadata)
        with self._changed:
            self._call = call
            moved = self.server != server
        if self._cancel.is_set() or moved:
            call.cancel()
        position = 0  # this stream's events so far: every stream starts from the match's first event
        try:
            for batch in call:
                self._received(position, batch.events)
                position += len(batch.events)
        except grpc.RpcError as error:
            code: grpc.StatusCode = error.code()
            if code == grpc.StatusCode.CANCELLED and (self._cancel.is_set() or self.server != server):
                return code
            if code == grpc.StatusCode.UNAVAILABLE and position:
                log.info("%s: its Spectate stream broke (%s); asking again", self.feed.match_id,
                         error.details(), extra=self._ids)  # fmt: skip
            elif code not in RETRIED:
                log.warning("%s: cannot follow its public events: %s: %s", self.feed.match_id, code.name,
                            error.details(), extra=self._ids)  # fmt: skip
            return code
        return None

    def _received(self, position: int, events: list[pb.Event]) -> None:
        with self._changed:
            for offset, event in enumerate(events):
                at = position + offset
                if at < len(self._seen):
                    if self._seen[at] == event:
                        continue  # sent again from the start after a reconnection: written already
                    log.info("%s: the match started over on the server (event %d differs); its live feed "
                             "starts over", self.feed.match_id, at, extra=self._ids)  # fmt: skip
                    del self._seen[at:]
                    self._pending = list(self._seen)
                    self._faults = [f for f in self._faults if f.event_index < at]  # the others are void
                    self._pending_faults = list(self._faults)
                    self._start_due = True
                self._seen.append(event)
                self._pending.append(event)
            self._changed.notify_all()

    # --- the writer -------------------------------------------------------

    def _faults_due(self, events: int) -> bool:
        """Whether a pending fault can be written now, with `events` more events written first."""
        faults = self._pending_faults
        return bool(faults) and (not self._reading or faults[0].event_index <= self.written + events)

    def _write(self) -> None:
        failing_since: float | None = None
        while not self._abandon.is_set():
            with self._changed:
                self._changed.wait_for(lambda: self._pending or self._start_due or not self._reading
                                       or self._faults_due(0) or self._abandon.is_set())  # fmt: skip
                start, events = self._start_due, self._pending
                self._start_due, self._pending = False, []
                written = 0 if start else self.written
                due = [f for f in self._pending_faults
                       if not self._reading or f.event_index <= written + len(events)]  # fmt: skip
                self._pending_faults = self._pending_faults[len(due) :]
                if not start and not events and not due and not self._reading:
                    return
            if self._abandon.is_set():
                return
            try:
                if start:
                    self.feed.start()
                    self.written = 0
                self.feed.write(_in_order(events, due, written))
                self.written += len(events)
                if failing_since is not None:
                    log.info("%s: its live feed is written again", self.feed.match_id, extra=self._ids)
                    failing_since = None
            except redis.RedisError as error:
                with self._changed:  # kept for the next try, in order (a restart meanwhile rewrites it all)
                    if not self._start_due:
                        self._pending, self._start_due = events + self._pending, start
                        self._pending_faults = due + self._pending_faults
                if failing_since is None:
                    failing_since = time.monotonic()
                    log.warning("%s: cannot write its live feed (%s); trying again", self.feed.match_id,
                                error, extra=self._ids)  # fmt: skip
                self._abandon.wait(LONGEST_PAUSE_S)
                continue
            if self._reading:
                self._abandon.wait(FLUSH_S)  # what arrives meanwhile goes in the next entry


def _in_order(events: list[pb.Event], faults: list[pb.Fault],
              written: int) -> list[list[pb.Event] | pb.Fault]:  # fmt: skip
    """`events` (the feed's from `written` on) with each of `faults` (by event_index) after the events
    logged before it; a fault whose place was written already goes first."""
    parts: list[list[pb.Event] | pb.Fault] = []
    done = 0
    for fault in faults:
        cut = min(max(fault.event_index - written, done), len(events))
        if cut > done:
            parts.append(events[done:cut])
            done = cut
        parts.append(fault)
    parts.append(events[done:])
    return parts
