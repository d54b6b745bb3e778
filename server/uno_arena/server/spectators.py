"""Spectate streams: each one's bounded backlog of batches, and the caps on how many there are.

What a Spectate stream costs the server is bounded: every batch of a match's public events is encoded
once, as the serialized SpectatorEvent written to every stream of that match, and so is the catch-up
message a new stream begins with (`MatchHost.spectated_so_far`); a stream holds only references to
them, at most `spectator_backlog` batches. A stream that falls further behind (its reader does not
keep up) ends with RESOURCE_EXHAUSTED, and a match takes at most `max_spectators_per_match` streams,
the server `max_spectators` (docs/protocol.md, "The control service").
"""

from __future__ import annotations

import asyncio
from collections import deque


class Spectator:
    """One Spectate stream's batches waiting to be written (serialized SpectatorEvents), at most `backlog`."""

    __slots__ = ("_batches", "_waiting", "backlog", "ended", "fell_behind")

    def __init__(self, backlog: int) -> None:
        self.backlog = backlog
        self._batches: deque[bytes] = deque()
        self._waiting: asyncio.Future[None] | None = None  # the stream, waiting for a batch
        self.ended = False  # no more batches come: the stream ends after those waiting
        self.fell_behind = False  # ended because `backlog` batches were waiting: the rest are dropped

    def put(self, batch: bytes) -> None:
        """A new batch; one too many ends the stream (what waits is dropped: the reader is too slow)."""
        if self.ended:
            return
        if len(self._batches) >= self.backlog:
            self.ended, self.fell_behind = True, True
            self._batches.clear()
        else:
            self._batches.append(batch)
        self._wake()

    def end(self) -> None:
        """The match finished: the stream ends once the batches waiting are written."""
        self.ended = True
        self._wake()

    def waiting(self) -> int:
        return len(self._batches)

    async def next(self) -> bytes | None:
        """The next batch to write; None once the stream is to end."""
        while not self._batches:
            if self.ended:
                return None
            self._waiting = asyncio.get_running_loop().create_future()
            await self._waiting
        return self._batches.popleft()

    def _wake(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not waiting.done():
            waiting.set_result(None)
