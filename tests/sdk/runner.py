"""Run SDK bots in background threads (each with its own event loop) for tests."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from uno_arena.sdk import Bot, BotClient, ClientSettings, ClientTLS


class BackgroundBot:
    """A real SDK client in a thread; `stop()` is what Ctrl-C does in `uno-arena bot run`."""

    def __init__(
        self, bot: Bot, server: str, name: str, token: str, tls: ClientTLS | None = None, **settings: Any
    ) -> None:
        self.loop = asyncio.new_event_loop()
        self.client = BotClient(bot, server, name, token, ClientSettings(**settings), tls)
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
        waiting = asyncio.wait_for(self.client.wait_connected(times), timeout)
        asyncio.run_coroutine_threadsafe(waiting, self.loop).result(timeout + 1)

    def stop(self, timeout: float = 30) -> None:
        self.loop.call_soon_threadsafe(self.client.stop)
        assert self.finished.wait(timeout), "the SDK client did not stop"
        self.thread.join(timeout)
