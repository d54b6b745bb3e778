"""A match that cannot be played for a known reason is one warning line in the worker's log, and is tried
exactly `[retries] attempts` times; an unexpected error keeps its traceback."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunningServer
from tests.workers.harness import WorkerProcess, wait_until
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, errors, states
from uno_arena.workers import lifecycle
from uno_arena.workers.queue import job_id


def _missing_bot_tournament(server: RunningServer, name: str, attempts: int) -> str:
    """Two bots registered, neither connected: each try fails at once (no wait for bots)."""
    bots = [f"{name}-a", f"{name}-b"]
    for bot in bots:
        server.register(bot)
    spec = spec_from_dict({
        "name": name, "bots": bots, "target": 50, "server": server.address,
        "deadlines": {"wait_for_bots_ms": 0}, "retries": {"attempts": attempts, "backoff_s": [0]},
    })  # fmt: skip
    tournament_id = lifecycle.create_checked(server.redis, server.prefix, spec)
    lifecycle.start(server.redis, server.prefix, tournament_id)
    return tournament_id


def _tries(server: RunningServer, tournament_id: str) -> int:
    return int(server.redis.hget(Keys(server.prefix, tournament_id).attempts, 0) or 0)


def test_a_missing_bot_is_one_warning_line_per_try_and_attempts_counts_tries(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    once = _missing_bot_tournament(match_server, "once", attempts=1)
    twice = _missing_bot_tournament(match_server, "twice", attempts=2)
    worker = WorkerProcess(prefix, match_server.control_token, tmp_path / "worker.log").start()
    workers.append(worker)
    for tournament_id in (once, twice):
        wait_until(lambda: states(client, prefix, tournament_id)[0] is MatchState.FAILED, 30,  # noqa: B023
                   f"{tournament_id}'s match to fail")  # fmt: skip
    for tournament_id, tries in ((once, 1), (twice, 2)):
        match_id = Keys(prefix, tournament_id).match_id(0)
        wait_until(lambda: len(_logged(worker, match_id)) >= tries, 10, f"{match_id}'s log lines")  # noqa: B023
        lines = _logged(worker, match_id)
        assert len(lines) == tries, lines
        assert all("WARNING" in line and "FAILED_PRECONDITION" in line for line in lines), lines
        assert "not connected" in errors(client, prefix, tournament_id)[0]
    assert "Traceback" not in worker.output(), worker.output()
    assert (_tries(match_server, once), _tries(match_server, twice)) == (1, 2)  # attempts = tries


def _logged(worker: WorkerProcess, match_id: str) -> list[str]:
    """The worker's log lines about the match's failed tries."""
    return [line for line in worker.output().splitlines() if f"match {match_id} failed" in line]


def test_an_unexpected_error_keeps_its_traceback(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    tournament_id = _missing_bot_tournament(match_server, "broken", attempts=1)
    client.hset(Keys(prefix, tournament_id).schedule, "0", "{")  # unreadable: not an expected failure
    worker = WorkerProcess(prefix, match_server.control_token, tmp_path / "worker.log").start()
    workers.append(worker)
    failed = f"rq:job:{job_id(prefix, tournament_id, 0)}"
    wait_until(lambda: client.hget(failed, "status") == b"failed", 30, "the job to fail")
    wait_until(lambda: "JSONDecodeError" in worker.output(), 10, "the error in the log")
    assert "Traceback" in worker.output()
