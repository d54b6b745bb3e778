"""Workers against the faults of issues 14 and 30: Redis crashing under a busy worker, Redis refusing writes
(out of memory, too few replicas), the worker that ran a retry killed, a match id the server knows as another
match. Real Redis, real worker processes, a real server."""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
import redis
from click.testing import CliRunner
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry
from rq.worker import Worker

from tests.conftest import RunningServer, free_port
from tests.endpoints import scrape
from tests.sdk.runner import BackgroundBot
from tests.workers.harness import (
    REDIS_URL,
    RedisServer,
    ServerProcess,
    WorkerProcess,
    connect_bots,
    wait_until,
)
from uno_arena.cli.main import cli
from uno_arena.records import identity
from uno_arena.records.match import load_match
from uno_arena.records.outage import patient_client
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, TournamentStatus, errors, load, states, text
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import codec, control_pb2, control_pb2_grpc
from uno_arena.workers import lifecycle
from uno_arena.workers.queue import job_id, match_queue
from uno_arena.workers.schedule import schedule


class SlowGreedyBot(GreedyBot):
    """Greedy, thinking 10 ms per decision, so that a match lasts a few seconds."""

    def decide(self, observation: Observation) -> Action:
        time.sleep(0.01)
        return super().decide(observation)


def recorded_ids(client: redis.Redis, prefix: str, tournament_id: str) -> list[str]:
    return [text(i) for i in client.lrange(Keys(prefix, tournament_id).results, 0, -1)]


def playing(server: RunningServer, tournament_id: str) -> str | None:
    """The id of a match of the tournament that the server is playing now, if any."""
    try:
        running = tuple(server.arena.running)  # the server's thread may change it meanwhile
    except RuntimeError:
        return None
    return next((m for m in running if m.startswith(f"{tournament_id}-m")), None)


def playing_bots(address: str, token: str) -> int:
    """How many of the server's bots are in a match now (its control API)."""
    with grpc.insecure_channel(address) as channel:
        reply = control_pb2_grpc.ControlServiceStub(channel).ListBots(
            control_pb2.ListBotsRequest(), metadata=[("authorization", f"Bearer {token}")], timeout=10
        )
    return sum(1 for bot in reply.bots if bot.active_matches)


def finished(client: redis.Redis, prefix: str, tournament_id: str) -> bool:
    return load(client, prefix, tournament_id).status is TournamentStatus.FINISHED


def test_a_busy_worker_outlives_a_redis_crash_and_records_the_match_once(
    match_server: RunningServer, workers: list[WorkerProcess], bots: list[BackgroundBot], tmp_path: Path
) -> None:
    connect_bots(match_server, {"slow1": SlowGreedyBot(), "slow2": SlowGreedyBot(), "slow3": SlowGreedyBot()},
                 bots)  # fmt: skip
    crashing = RedisServer(tmp_path / "redis").start()
    client, prefix = crashing.client(), "crash"
    try:
        for name in ("slow1", "slow2", "slow3"):
            identity.register_bot(client, prefix, name)
        spec = spec_from_dict({"name": "crash", "bots": ["slow1", "slow2", "slow3"], "target": 100,
                               "server": match_server.address, "retries": {"attempts": 1}})  # fmt: skip
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        lifecycle.start(client, prefix, tournament_id)
        metrics = f"127.0.0.1:{free_port()}"
        worker = WorkerProcess(prefix, match_server.control_token, tmp_path / "worker.log",
                               redis_url=crashing.url, options=["--metrics", metrics])  # fmt: skip
        workers.append(worker.start())
        seen: list[str] = []

        def started() -> bool:
            match = playing(match_server, tournament_id)
            seen.extend([match] if match else [])
            return bool(seen)

        wait_until(started, 60, "a match to start on the server")
        match_id = seen[0]

        crashing.kill()  # under the busy worker; the match plays on, on the server
        wait_until(lambda: match_id in match_server.arena.finished, 60, "the match to end on the server")
        tried = "recording the result: Redis unreachable"  # the job's log line as it waits for Redis
        wait_until(lambda: tried in worker.output() or not worker.alive, 30, "the job to try to record")
        crashing.start()  # from its append-only file, on the same port

        assert worker.alive, worker.output()
        wait_until(lambda: finished(client, prefix, tournament_id), 120, "the tournament to finish")
        recorded = recorded_ids(client, prefix, tournament_id)
        assert sorted(recorded) == sorted(Keys(prefix, tournament_id).match_id(i) for i in range(3))
        assert recorded.count(match_id) == 1
        assert set(states(client, prefix, tournament_id).values()) == {MatchState.DONE}
        assert worker.alive and "quitting" not in worker.output()
        # its metrics: the three matches played, and the wait for Redis to record one of them
        url = f"http://{metrics}/metrics"
        wait_until(lambda: scrape(url).value("uno_arena_worker_matches_played_total") == 3, 30, "its count")
        assert scrape(url).value("uno_arena_worker_redis_wait_seconds_total") > 0
    finally:
        client.close()
        crashing.stop()


# How a test's own Redis is made to refuse writes, and made to take them again (issue 30).
REFUSALS = {
    # full: a memory limit below what it holds, nothing evicted ("OOM command not allowed ...")
    "out of memory": ({"maxmemory-policy": "noeviction", "maxmemory": "{full}"}, {"maxmemory": "0"}),
    # no replica answers, and writes need one ("NOREPLICAS Not enough good replicas to write.")
    "no replicas": ({"min-replicas-to-write": "1"}, {"min-replicas-to-write": "0"}),
}
REFUSED_FOR_S = 3.0  # the fault's least length, by the test's clock: writes refused at least this long


def refuse_writes(client: redis.Redis, how: str) -> None:
    used = int(client.info("memory")["used_memory"])
    for name, value in REFUSALS[how][0].items():  # 1 MB, as in issue 30, or less if it holds less
        client.config_set(name, value.format(full=min(1 << 20, used // 2)))
    with pytest.raises(redis.ResponseError) as refused:
        client.set("refusal-probe", "x")
    error = refused.value
    assert isinstance(error, redis.exceptions.OutOfMemoryError) or str(error).startswith("NOREPLICAS"), error


def take_writes(client: redis.Redis, how: str) -> None:
    for name, value in REFUSALS[how][1].items():
        client.config_set(name, value)
    client.delete("refusal-probe")


@pytest.mark.parametrize("how", list(REFUSALS))
def test_workers_ride_out_a_redis_refusing_writes_and_record_every_match_once(
    how: str, match_server: RunningServer, workers: list[WorkerProcess], bots: list[BackgroundBot],
    tmp_path: Path,
) -> None:  # fmt: skip
    connect_bots(
        match_server, {"slow1": SlowGreedyBot(), "slow2": SlowGreedyBot(), "slow3": SlowGreedyBot()}, bots
    )
    refusing = RedisServer(tmp_path / "redis").start()
    client, prefix = refusing.client(), "refusing"
    try:
        for name in ("slow1", "slow2", "slow3"):
            identity.register_bot(client, prefix, name)
        spec = spec_from_dict({"name": "refused", "bots": ["slow1", "slow2", "slow3"], "target": 100,
                               "server": match_server.address, "retries": {"attempts": 1}})  # fmt: skip
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        lifecycle.start(client, prefix, tournament_id)
        for n in range(2):
            log = tmp_path / f"worker{n}.log"
            workers.append(WorkerProcess(prefix, match_server.control_token, log, redis_url=refusing.url))
            workers[-1].start()
        seen: list[str] = []

        def started() -> bool:
            match = playing(match_server, tournament_id)
            seen.extend([match] if match else [])
            return bool(seen)

        wait_until(started, 60, "a match to start on the server")
        match_id = seen[0]

        refuse_writes(client, how)  # under the busy workers; the match plays on, on the server
        refused_at = time.monotonic()
        wait_until(lambda: match_id in match_server.arena.finished, 60, "the match to end on the server")
        tried = "recording the result: Redis refuses writes"  # the job's log line as it waits
        wait_until(lambda: any(tried in w.output() or not w.alive for w in workers), 30,
                   "the job to try to record")  # fmt: skip

        def refused_long_enough() -> bool:  # or a worker died of it (on issue 30's main, at once)
            return time.monotonic() - refused_at >= REFUSED_FOR_S or not all(w.alive for w in workers)

        wait_until(refused_long_enough, REFUSED_FOR_S + 1, f"writes refused for {REFUSED_FOR_S:g} s")
        take_writes(client, how)

        assert all(w.alive for w in workers), "\n".join(w.output() for w in workers)
        wait_until(lambda: finished(client, prefix, tournament_id), 120, "the tournament to finish")
        recorded = recorded_ids(client, prefix, tournament_id)
        assert sorted(recorded) == sorted(Keys(prefix, tournament_id).match_id(i) for i in range(3))
        assert set(states(client, prefix, tournament_id).values()) == {MatchState.DONE}
        assert errors(client, prefix, tournament_id) == {}
        for worker in workers:
            assert worker.alive and "quitting" not in worker.output(), worker.output()
    finally:
        client.close()
        refusing.stop()


@pytest.mark.parametrize("how", list(REFUSALS))
def test_the_workers_client_waits_out_refused_writes_and_applies_each_once(
    how: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """What RQ does through the worker's client (`patient_client`) while Redis refuses writes: a command,
    a Lua script, RQ queueing a job (a transaction), RQ filing a job's status (issue 30: `job.retry` ->
    `set_status` raised and the worker quit), and a transaction on WATCHed keys, which RQ starts over on
    `WatchError`: each waits, and is applied once when Redis takes writes again."""
    refusing = RedisServer(tmp_path / "redis").start()
    client = refusing.client()
    try:
        filed = Job.create(print, connection=client, id="filed")
        filed.save()
        starts: list[int] = []

        def watched(patient: redis.Redis) -> None:  # as RQ's `handle_job_success` does
            while True:
                starts.append(1)
                with patient.pipeline() as pipe:
                    try:
                        pipe.watch("watched")
                        value = int(pipe.get("watched") or 0)
                        pipe.multi()
                        pipe.set("watched", value + 1)
                        pipe.execute()
                        return
                    except redis.WatchError:
                        continue

        operations: dict[str, Callable[[redis.Redis], object]] = {
            "command": lambda patient: patient.incr("counted"),
            "script": lambda patient: patient.eval("return redis.call('INCR', KEYS[1])", 1, "scripted"),
            "queueing": lambda patient: Queue("refused", connection=patient).enqueue(print, job_id="queued"),
            "filing": lambda patient: Job.fetch("filed", connection=patient).set_status(JobStatus.FAILED),
            "watched": watched,
        }
        refuse_writes(client, how)
        refused_at = time.monotonic()
        caplog.set_level(logging.WARNING, logger="uno_arena.records.outage")
        done: dict[str, object] = {}
        threads = []
        for name, operation in operations.items():
            patient = patient_client(client, f"op {name}")

            def run(operation: Callable[[redis.Redis], object] = operation, name: str = name,
                    patient: redis.Redis = patient) -> None:  # fmt: skip
                try:
                    done[name] = operation(patient)
                except BaseException as error:  # surfaced below
                    done[name] = error

            threads.append(threading.Thread(target=run, name=f"op {name}", daemon=True))
            threads[-1].start()

        def waiting(name: str) -> bool:
            return any(r.getMessage().startswith(f"op {name}: Redis refuses writes") for r in caplog.records)

        wait_until(lambda: all(waiting(name) for name in operations), 30, "every operation to wait")
        wait_until(lambda: time.monotonic() - refused_at >= REFUSED_FOR_S, REFUSED_FOR_S + 1,
                   f"writes refused for {REFUSED_FOR_S:g} s")  # fmt: skip
        assert done == {}, done  # nothing went through, nothing raised
        take_writes(client, how)
        for thread in threads:
            thread.join(30)
        assert not any(isinstance(result, BaseException) for result in done.values()), done
        assert set(done) == set(operations)
        assert client.get("counted") == b"1" and client.get("scripted") == b"1"
        assert client.get("watched") == b"1"
        assert 2 <= len(starts) <= 12, f"the WATCHed transaction started {len(starts)} times"  # paced
        assert Queue("refused", connection=client).job_ids == ["queued"]
        assert Job.fetch("filed", connection=client).get_status() == JobStatus.FAILED
    finally:
        client.close()
        refusing.stop()


def test_a_retry_is_picked_up_within_seconds_when_the_worker_that_ran_it_is_killed(
    match_server: RunningServer, workers: list[WorkerProcess], bots: list[BackgroundBot], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    connect_bots(match_server, {"here": GreedyBot()}, bots)
    late_token = match_server.register("late")
    spec = spec_from_dict({
        "name": "late", "bots": ["here", "late"], "target": 50, "server": match_server.address,
        "deadlines": {"wait_for_bots_ms": 200}, "retries": {"attempts": 2, "backoff_s": [8]},
    })  # fmt: skip
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    first = WorkerProcess(prefix, match_server.control_token, tmp_path / "first.log").start()
    workers.append(first)  # alone, so the one that runs the match (and, before, RQ's scheduler)
    lifecycle.start(client, prefix, tournament_id)
    wait_until(lambda: "will retry" in errors(client, prefix, tournament_id).get(0, ""), 60,
               "the first attempt to fail")  # fmt: skip
    registry = ScheduledJobRegistry(queue=match_queue(client, prefix))  # type: ignore[no-untyped-call]
    job = job_id(prefix, tournament_id, 0)  # RQ files the retry just after the job says "will retry"
    wait_until(
        lambda: client.zscore(registry.key, job) is not None, 10, "the retry in RQ's scheduled registry"
    )
    due = client.zscore(registry.key, job)
    assert due is not None
    status = CliRunner().invoke(cli, ["tournament", "status", tournament_id, "--redis-url", REDIS_URL,
                                      "--key-prefix", prefix])  # fmt: skip
    told = float(client.hget(Keys(prefix, tournament_id).retries, 0) or 0)
    assert f"1 (1 waiting for a retry, the next at {time.strftime('%H:%M:%S', time.localtime(told))})" in (
        status.output
    ), status.output
    assert abs(told - due) < 1.5 and "nothing running" in status.output

    bots.append(BackgroundBot(GreedyBot(), match_server.address, "late", late_token))
    bots[-1].wait_connected()
    second = WorkerProcess(prefix, match_server.control_token, tmp_path / "second.log").start()
    workers.append(second)

    def registered() -> bool:
        pids = {w.pid for w in Worker.all(queue=match_queue(client, prefix))}
        return second.process is not None and second.process.pid in pids

    wait_until(registered, 30, "the second worker to be registered")
    ready = time.time()
    first.kill()

    def replayed() -> bool:  # the retry took the lease: a second play of the match
        return int(client.hget(Keys(prefix, tournament_id).attempts, 0) or 0) >= 2

    wait_until(replayed, max(due - time.time(), 0) + 30, "the retry to be played")
    picked_up = time.time()
    assert picked_up - max(due, ready) < 3.5, f"the retry started {picked_up - due:.1f} s after it was due"
    wait_until(lambda: finished(client, prefix, tournament_id), 60, "the retry to finish")
    assert recorded_ids(client, prefix, tournament_id) == [Keys(prefix, tournament_id).match_id(0)]


def test_a_match_id_the_server_knows_as_another_match_is_not_recorded(
    match_server: RunningServer, workers: list[WorkerProcess], bots: list[BackgroundBot], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    connect_bots(match_server, {"a": GreedyBot(), "b": GreedyBot(), "c": GreedyBot()}, bots)
    spec = spec_from_dict({"name": "taken", "bots": ["a", "b", "c"], "target": 100, "seed": 3,
                           "server": match_server.address, "retries": {"attempts": 1}})  # fmt: skip
    scheduled = schedule(spec.bots, spec.seats, spec.cycles, spec.seed, spec.rules)[0]
    taken = Keys(prefix, "taken").match_id(0)
    # Someone plays the tournament's first match id first, with the seats swapped and to 50.
    with grpc.insecure_channel(match_server.address) as channel:
        request = control_pb2.PlayMatchRequest(
            match_id=taken, bots=list(reversed(scheduled.bots)), seed=1,
            rules=codec.rules(dataclasses.replace(spec.rules, target_score=50)),
        )  # fmt: skip
        metadata = [("authorization", f"Bearer {match_server.control_token}")]
        stream = control_pb2_grpc.ControlServiceStub(channel).PlayMatch(request, metadata=metadata)
        assert [p for p in stream if p.WhichOneof("kind") == "finished"]

    assert lifecycle.create_checked(client, prefix, spec, "taken") == "taken"
    lifecycle.start(client, prefix, "taken")
    workers.append(WorkerProcess(prefix, match_server.control_token, tmp_path / "worker.log").start())
    settled = {MatchState.DONE, MatchState.FAILED}
    wait_until(lambda: set(states(client, prefix, "taken").values()) <= settled, 60, "every match to settle")

    match = load_match(client, prefix, taken)
    assert match is None or list(match.finished.result.bots) == list(scheduled.bots)  # never the other one
    if match is None:  # refused: failed with the reason, the others recorded
        assert states(client, prefix, "taken")[0] is MatchState.FAILED
        assert f"match id {taken} on the server is a different match" in errors(client, prefix, "taken")[0]
        assert sorted(recorded_ids(client, prefix, "taken")) == [
            Keys(prefix, "taken").match_id(i) for i in (1, 2)
        ]
        watch = subprocess.run(
            [sys.executable, "-m", "uno_arena.cli", "tournament", "watch", "taken", "--redis-url", REDIS_URL,
             "--key-prefix", prefix], capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert watch.returncode == 1, watch.stdout + watch.stderr
        assert "only failed matches are left" in watch.stdout


def test_a_server_crash_mid_match_costs_no_retry(
    redis_prefix: tuple[redis.Redis, str],
    workers: list[WorkerProcess],
    bots: list[BackgroundBot],
    tmp_path: Path,
) -> None:
    client, prefix = redis_prefix
    server = ServerProcess(prefix, tmp_path / "server.log").start()
    try:
        for name in ("slow1", "slow2"):
            token = identity.register_bot(client, prefix, name)
            bots.append(BackgroundBot(SlowGreedyBot(), server.address, name, token))
            bots[-1].wait_connected()
        spec = spec_from_dict({"name": "restart", "bots": ["slow1", "slow2"], "target": 300,
                               "server": server.address, "retries": {"attempts": 1}})  # fmt: skip
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        lifecycle.start(client, prefix, tournament_id)
        token = identity.create_control_token(client, prefix)
        metrics = f"127.0.0.1:{free_port()}"
        worker = WorkerProcess(prefix, token, tmp_path / "worker.log",
                               options=["--server-wait", "60", "--metrics", metrics])  # fmt: skip
        workers.append(worker.start())
        wait_until(lambda: playing_bots(server.address, token) == 2, 60, "the match to start on the server")

        server.kill()  # mid-match: the worker's stream breaks, the bots lose their connection
        wait_until(lambda: "waiting up to" in worker.output() or states(client, prefix, tournament_id)[0]
                   is not MatchState.RUNNING, 30, "the job to notice")  # fmt: skip
        server.start()  # on the same port; it knows nothing of the match

        settled = {MatchState.DONE, MatchState.FAILED}
        wait_until(lambda: states(client, prefix, tournament_id)[0] in settled, 120, "the match to be played")
        assert errors(client, prefix, tournament_id) == {}, worker.output()
        assert recorded_ids(client, prefix, tournament_id) == [Keys(prefix, tournament_id).match_id(0)]
        assert client.hget(Keys(prefix, tournament_id).attempts, 0) == b"1"  # the same attempt, waited out
        # its metrics: played once, never retried, and the wait for the server counted
        url = f"http://{metrics}/metrics"
        wait_until(lambda: scrape(url).value("uno_arena_worker_matches_played_total") == 1, 30, "its count")
        assert scrape(url).value("uno_arena_worker_matches_retried_total") == 0
        assert scrape(url).value("uno_arena_worker_server_wait_seconds_total") > 0
    finally:
        server.stop()
