"""Hosted bots end to end: submitted code runs in a runner's sandbox, plays a tournament, is replaced by its
next version, and moves to another runner when its runner dies (real Redis, server, worker, runners)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import RunningServer
from tests.runner.harness import (
    RunnerProcess,
    bot_source,
    connected_client,
    hosted_server,
    invoke,
    require_sandbox,
    status_of,
)
from tests.sdk.runner import BackgroundBot
from tests.workers.harness import REDIS_URL, WorkerProcess, wait_until
from uno_arena.records import hosted, identity
from uno_arena.records.match import match_records
from uno_arena.records.tournament import TournamentStatus, load
from uno_arena.sdk.examples.greedy_bot import GreedyBot

__all__ = ["REDIS_URL"]  # tests/conftest.py marks this module's tests `redis` by that name


@pytest.fixture
def setup(redis_prefix: tuple[redis.Redis, str]) -> Iterator[tuple[RunningServer, Path]]:
    require_sandbox()
    with hosted_server(*redis_prefix) as (server, socket_path):
        yield server, socket_path


@pytest.fixture
def processes() -> Iterator[list[RunnerProcess | WorkerProcess]]:
    started: list[RunnerProcess | WorkerProcess] = []
    yield started
    for process in reversed(started):
        process.stop()


def submit(server: RunningServer, tmp_path: Path, token: str, greeting: str) -> str:
    path = tmp_path / f"{greeting.replace(' ', '_')}.py"
    path.write_text(bot_source(greeting))
    return invoke(server.prefix, "bot", "submit", "hb", f"{path}:Hosted", "--token", token).splitlines()[0]


def play_tournament(server: RunningServer, tmp_path: Path, tournament_id: str) -> None:
    spec = tmp_path / f"{tournament_id}.toml"
    spec.write_text(
        f'name = "{tournament_id}"\nbots = ["hb", "greedy"]\ntarget = 60\nseed = 5\n'
        f'server = "{server.address}"\n[deadlines]\nwait_for_bots_ms = 20000\n'
    )
    invoke(server.prefix, "tournament", "create", str(spec), "--cycles", "1", "--id", tournament_id)
    invoke(server.prefix, "tournament", "start", tournament_id)

    def finished() -> bool:
        return load(server.redis, server.prefix, tournament_id).status is TournamentStatus.FINISHED

    wait_until(finished, 120, f"tournament {tournament_id} to finish")


def test_a_submitted_bot_plays_in_its_sandbox_and_its_next_version_replaces_it(
    setup: tuple[RunningServer, Path], processes: list[RunnerProcess | WorkerProcess], tmp_path: Path
) -> None:
    server, socket_path = setup
    token = identity.register_bot(server.redis, server.prefix, "hb")
    remote = BackgroundBot(GreedyBot(), server.address, "greedy", server.register("greedy"), max_matches=4)
    remote.wait_connected()
    assert submit(server, tmp_path, token, "hello from v1") == "v1"
    runner = RunnerProcess(server.prefix, socket_path, tmp_path / "work", tmp_path / "r1.log", "r1")
    processes.append(runner.start())
    wait_until(lambda: connected_client(server, "hb") is not None, 60, "the hosted bot to connect")
    assert status_of(server.redis, server.prefix, "hb", 1)[:2] == (hosted.Status.RUNNING, "r1")
    processes.append(WorkerProcess(server.prefix, server.control_token, tmp_path / "worker.log").start())

    play_tournament(server, tmp_path, "first")
    summaries = match_records(server.redis, server.prefix, "first")
    assert summaries and all("hb" in s.bots and s.reason_name == "target_reached" for s in summaries)
    logs = invoke(server.prefix, "bot", "logs", "hb", "--token", token)
    assert "hello from v1" in logs and "hb connected to unix:/run/uno-arena/server.sock" in logs

    assert submit(server, tmp_path, token, "hello from v2") == "v2"
    wait_until(
        lambda: status_of(server.redis, server.prefix, "hb", 2)[0] is hosted.Status.RUNNING, 60, "v2 to run"
    )
    assert status_of(server.redis, server.prefix, "hb", 1)[0] is hosted.Status.REPLACED
    wait_until(lambda: connected_client(server, "hb") is not None, 60, "v2 to connect")
    play_tournament(server, tmp_path, "second")
    assert "hello from v2" in invoke(server.prefix, "bot", "logs", "hb", "--version", "v2", "--token", token)
    first = invoke(server.prefix, "bot", "logs", "hb", "--version", "v1", "--token", token)
    assert "hello from v2" not in first
    remote.stop()


def test_a_killed_runners_bot_starts_on_another_runner(
    setup: tuple[RunningServer, Path], processes: list[RunnerProcess | WorkerProcess], tmp_path: Path
) -> None:
    server, socket_path = setup
    token = identity.register_bot(server.redis, server.prefix, "hb")
    submit(server, tmp_path, token, "hello")
    first = RunnerProcess(server.prefix, socket_path, tmp_path / "w1", tmp_path / "r1.log", "r1").start()
    processes.append(first)
    wait_until(lambda: status_of(server.redis, server.prefix, "hb", 1)[1] == "r1", 60, "r1 to run the bot")
    second = RunnerProcess(
        server.prefix, socket_path, tmp_path / "w2", tmp_path / "r2.log", "r2", uid_base=231_000
    ).start()
    processes.append(second)
    wait_until(lambda: connected_client(server, "hb") is not None, 60, "the hosted bot to connect")
    first.kill()
    moved = (hosted.Status.RUNNING, "r2")
    wait_until(
        lambda: status_of(server.redis, server.prefix, "hb", 1)[:2] == moved,
        60,
        "runner r2 to take the bot over",
    )
    wait_until(lambda: connected_client(server, "hb") is not None, 60, "the bot to connect from runner r2")
    assert server.redis.get(hosted.Keys(server.prefix, "hb").lease) == b"r2"


def test_a_bot_that_keeps_crashing_is_disabled_with_its_reason(
    setup: tuple[RunningServer, Path], processes: list[RunnerProcess | WorkerProcess], tmp_path: Path
) -> None:
    server, socket_path = setup
    token = identity.register_bot(server.redis, server.prefix, "hb")
    path = tmp_path / "crash.py"
    path.write_text(bot_source("about to fail", body="raise SystemExit('I give up at import')"))
    invoke(server.prefix, "bot", "submit", "hb", f"{path}:Hosted", "--token", token)
    processes.append(
        RunnerProcess(
            server.prefix,
            socket_path,
            tmp_path / "w",
            tmp_path / "r.log",
            "r1",
            options=["--crash-limit", "3"],
        ).start()
    )
    wait_until(
        lambda: status_of(server.redis, server.prefix, "hb", 1)[0] is hosted.Status.DISABLED,
        60,
        "the crashing bot to be disabled",
    )
    reason = status_of(server.redis, server.prefix, "hb", 1)[2]
    assert "3 exits" in reason and "I give up at import" in reason
    assert "I give up at import" in invoke(server.prefix, "bot", "versions", "hb", "--wide")
