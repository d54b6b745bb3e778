"""Fixtures of the worker tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sdk.runner import BackgroundBot
from tests.workers.harness import WorkerProcess


@pytest.fixture
def workers() -> Iterator[list[WorkerProcess]]:
    """Worker processes a test started: killed when it ends, pass or fail."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.stop()


@pytest.fixture
def bots() -> Iterator[list[BackgroundBot]]:
    """SDK bots a test started (`harness.connect_bots(server, {...}, bots)`): stopped when it ends, pass or
    fail."""
    running: list[BackgroundBot] = []
    yield running
    for bot in running:
        bot.stop()
