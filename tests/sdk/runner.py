"""Run SDK bots in background threads (each with its own event loop) for tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from uno_arena.sdk import Bot, BotClient, ClientSettings, ClientTLS, PoolClient


class BackgroundBot:
    """A real SDK client in a thread; `stop()` is what Ctrl-C does in `uno-arena bot run`.

    With `pool=True` the client is a `PoolClient` (`server` may list addresses; it connects to every
    server of their pool), as `uno-arena bot run` runs a bot."""

    def __init__(
        self, bot: Bot, server: str, name: str, token: str, tls: ClientTLS | None = None, pool: bool = False,
        **settings: Any,
    ) -> None:  # fmt: skip
        self.loop = asyncio.new_event_loop()
        kind = PoolClient if pool else BotClient
        self.client: BotClient | PoolClient = kind(bot, server, name, token, ClientSettings(**settings), tls)
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"sdk {name}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.client.run())
        except BaseException as error:  # surfaced by the test
            self.error = error
        finally:
            self.finished.set()

    def wait_connected(self, times: int = 1, timeout: float = 30) -> None:
        """`times` welcomes (a `BotClient`), or `times` servers connected at once (a `PoolClient`)."""
        waiting = asyncio.wait_for(self.client.wait_connected(times), timeout)
        asyncio.run_coroutine_threadsafe(waiting, self.loop).result(timeout + 1)

    def read(self, function: Callable[[], Any], timeout: float = 10) -> Any:
        """`function()` run on the client's loop, where its state changes."""

        async def run() -> Any:
            return function()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)

    def stop(self, timeout: float = 30) -> None:
        self.loop.call_soon_threadsafe(self.client.stop)
        assert self.finished.wait(timeout), "the SDK client did not stop"
        self.thread.join(timeout)
