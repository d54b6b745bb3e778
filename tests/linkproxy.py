"""A network link for tests: an in-process TCP proxy on loopback between a client and a server, whose
faults are real TCP behaviour, not mocks.

- `delay`: each chunk is forwarded that many seconds after it was read, in order (a slow link);
- `hold()`: from now on nothing is forwarded either way, and the sockets stay open (a blackholed route:
  what is sent is accepted and goes nowhere, no reset, no FIN); `release()` delivers what was held, in
  order (the route comes back and TCP retransmits it), unless the server has closed its end meanwhile.

It serves one test and stops with it (`close`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time


class LinkProxy:
    """127.0.0.1:PORT -> 127.0.0.1:`target_port`."""

    def __init__(self, target_port: int, delay: float = 0.0) -> None:
        self.target_port, self.delay = target_port, delay
        self.loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._flowing: asyncio.Event | None = None  # set: bytes are forwarded; clear: held
        self.connections = 0  # accepted so far
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), name="link-proxy", daemon=True)
        self.thread.start()
        assert started.wait(10), "the proxy did not start"
        assert self._server is not None
        self.port: int = self._server.sockets[0].getsockname()[1]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = self.loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", 0))
        started.set()
        self.loop.run_forever()
        for task in self._tasks:
            task.cancel()
        self._server.close()
        self.loop.run_until_complete(asyncio.gather(*self._tasks, return_exceptions=True))
        self.loop.close()

    async def _accept(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        self.connections += 1
        server_in, server_out = await asyncio.open_connection("127.0.0.1", self.target_port)
        for reader, writer in ((client_in, server_out), (server_in, client_out)):
            task = asyncio.create_task(self._pipe(reader, writer))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        sender = asyncio.create_task(self._send(held, writer))
        try:
            while chunk := await reader.read(65536):  # read on while held: the sender's writes succeed
                held.put_nowait((time.monotonic() + self.delay, chunk))
            held.put_nowait((time.monotonic() + self.delay, b""))  # the end, after what came before
            await sender
        except ConnectionError:  # an end reset (a server that closed the connection while it was held)
            pass
        finally:
            sender.cancel()
            writer.close()

    async def _send(self, held: asyncio.Queue[tuple[float, bytes]], writer: asyncio.StreamWriter) -> None:
        assert self._flowing is not None
        while True:
            due, chunk = await held.get()
            await asyncio.sleep(max(due - time.monotonic(), 0))  # the link's delay itself
            await self._flowing.wait()  # a held link delivers nothing
            if not chunk:
                with contextlib.suppress(OSError):
                    writer.write_eof()
                return
            writer.write(chunk)
            await writer.drain()

    def hold(self) -> None:
        """Stop forwarding, both ways, on every connection (and new ones), keeping the sockets open; in
        force when this returns (a bot may call it from `decide`: its answer is then held)."""
        self._set_flowing(False)

    def release(self) -> None:
        """Forward again, what was held first."""
        self._set_flowing(True)

    def _set_flowing(self, flowing: bool) -> None:
        async def change() -> None:
            assert self._flowing is not None
            (self._flowing.set if flowing else self._flowing.clear)()

        asyncio.run_coroutine_threadsafe(change(), self.loop).result(10)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
