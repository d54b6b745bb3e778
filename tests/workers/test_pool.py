"""A tournament on a pool of match servers: real `uno-arena server` processes in one pool, real workers, SDK
bots that are given one address and reach every server. Both servers host matches; one killed
mid-tournament loses and doubles nothing. And `uno-arena server --processes 2` starts and stops cleanly."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.sdk.runner import BackgroundBot
from tests.workers.harness import REDIS_URL, ServerProcess, WorkerProcess, wait_until
from uno_arena.records import identity, pool
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, TournamentStatus, load, states, text
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.workers import lifecycle

POOL = "cup"
IN_POOL = ["--pool", POOL]


class SlowGreedyBot(GreedyBot):
    """Greedy, thinking 5 ms per decision, so that a match lasts long enough to be killed mid-way."""

    def decide(self, observation: Observation) -> Action:
        time.sleep(0.005)
        return super().decide(observation)


@pytest.fixture
def bots() -> Iterator[list[BackgroundBot]]:
    running: list[BackgroundBot] = []
    yield running
    for bot in running:
        bot.stop()


@pytest.fixture
def servers() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.stop()


def hosted(log: Path) -> int:
    """Matches a server's log says it finished."""
    return log.read_text(errors="replace").count(" finished: MATCH_END_")


def test_a_tournament_on_a_pool_of_two_servers_survives_losing_one(
    redis_prefix: tuple[redis.Redis, str],
    servers: list[ServerProcess],
    workers: list[WorkerProcess],
    bots: list[BackgroundBot],
    tmp_path: Path,
) -> None:
    client, prefix = redis_prefix
    first, second = (ServerProcess(prefix, tmp_path / f"server{i}.log", options=IN_POOL) for i in (1, 2))
    servers += [first.start(), second.start()]
    keys = pool.PoolKeys(prefix, POOL)
    wait_until(lambda: len(pool.servers(client, keys)) == 2, 30, "both servers in the pool")
    names = ["ann", "bob", "cy", "dee"]
    for name in names:  # each bot is given the first server's address only, and finds the second
        token = identity.register_bot(client, prefix, name)
        bots.append(BackgroundBot(SlowGreedyBot(), first.address, name, token, pool=True, max_matches=2))
    for bot in bots:
        bot.wait_connected(2)
    spec = spec_from_dict({"name": "pooled", "bots": names, "cycles": 2, "target": 150, "pool": POOL,
                           "deadlines": {"disconnect_grace_ms": 3000}})  # fmt: skip
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    control_token = identity.create_control_token(client, prefix)
    for number in range(2):
        workers.append(WorkerProcess(prefix, control_token, tmp_path / f"worker{number}.log").start())
    lifecycle.start(client, prefix, tournament_id)
    matches = load(client, prefix, tournament_id).matches

    def second_is_busy() -> bool:  # it finished a match and is playing another: kill it now
        entry = {e.address: e for e in pool.servers(client, keys)}.get(second.address)
        return hosted(second.log) >= 1 and entry is not None and entry.running >= 1

    wait_until(second_is_busy, 90, "the second server to host matches")
    second.kill()  # mid-match: its matches are placed again on the first, played again, recorded once
    lost_at = time.monotonic()

    wait_until(lambda: load(client, prefix, tournament_id).status is TournamentStatus.FINISHED, 180,
               "the tournament to finish on the server left")  # fmt: skip
    keys_of = Keys(prefix, tournament_id)
    recorded = [text(i) for i in client.lrange(keys_of.results, 0, -1)]
    assert sorted(recorded) == [keys_of.match_id(i) for i in range(matches)]  # every match, once
    assert set(states(client, prefix, tournament_id).values()) == {MatchState.DONE}
    assert hosted(first.log) >= 1 and hosted(second.log) >= 1  # both hosted matches
    placed = {text(v) for v in client.hgetall(keys_of.placed).values()}
    assert placed <= {first.address, second.address}
    after = [w.output() for w in workers]
    assert any("placing it again" in output for output in after), after  # the lost match moved
    assert all(w.alive for w in workers) and time.monotonic() - lost_at < 180


def test_a_match_that_failed_where_it_was_placed_is_placed_anew_on_its_retry(
    redis_prefix: tuple[redis.Redis, str],
    servers: list[ServerProcess],
    workers: list[WorkerProcess],
    bots: list[BackgroundBot],
    tmp_path: Path,
) -> None:
    """Each bot is connected to one server only (as a bot that does not follow the pool): the match waits
    where it was placed for the bot that is not there and fails; by its retry both bots are connected
    to the other server, and the retry goes there (not back where it failed) and is recorded."""
    client, prefix = redis_prefix
    first, second = (ServerProcess(prefix, tmp_path / f"server{i}.log", options=IN_POOL) for i in (1, 2))
    servers += [first.start(), second.start()]
    keys = pool.PoolKeys(prefix, POOL)
    wait_until(lambda: len(pool.servers(client, keys)) == 2, 30, "both servers in the pool")
    tokens = {name: identity.register_bot(client, prefix, name) for name in ("xan", "yve")}
    for name, server in (("xan", first), ("yve", second)):
        bots.append(BackgroundBot(GreedyBot(), server.address, name, tokens[name]))
        bots[-1].wait_connected()
    spec = spec_from_dict({"name": "apart", "bots": ["xan", "yve"], "target": 50, "pool": POOL,
                           "deadlines": {"wait_for_bots_ms": 300},
                           "retries": {"attempts": 2, "backoff_s": [3]}})  # fmt: skip
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    workers.append(
        WorkerProcess(prefix, identity.create_control_token(client, prefix), tmp_path / "w.log").start()
    )
    lifecycle.start(client, prefix, tournament_id)
    placed_key = Keys(prefix, tournament_id).placed
    wait_until(lambda: client.hget(placed_key, "0") is not None, 30, "the match to be placed")
    failed_on = text(client.hget(placed_key, "0") or b"")
    failed, other = (first, second) if failed_on == first.address else (second, first)
    wait_until(lambda: client.hget(placed_key, "0") is None, 30, "the failed placement to be forgotten")
    for name in ("xan", "yve"):  # both on the other server now (each keeps its first connection too)
        bots.append(BackgroundBot(GreedyBot(), other.address, name, tokens[name]))
        bots[-1].wait_connected()
    wait_until(lambda: load(client, prefix, tournament_id).status is TournamentStatus.FINISHED, 60,
               "the retry to be played and recorded")  # fmt: skip
    assert states(client, prefix, tournament_id) == {0: MatchState.DONE}
    assert client.hget(Keys(prefix, tournament_id).attempts, 0) == b"2"
    assert hosted(other.log) == 1 and hosted(failed.log) == 0  # where it failed, nothing was played


def free_port_pair() -> int:
    """A port P with P and P + 1 both free now."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        with socket.socket() as first, socket.socket() as second:
            try:
                first.bind(("127.0.0.1", port))
                second.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise AssertionError("no two free ports in a row")


def test_processes_2_serves_on_two_ports_in_the_pool_and_stops_cleanly(
    redis_prefix: tuple[redis.Redis, str], tmp_path: Path
) -> None:
    client, prefix = redis_prefix
    keys = pool.PoolKeys(prefix, "here")
    port = free_port_pair()
    log = tmp_path / "servers.log"
    command = [sys.executable, "-m", "uno_arena.cli", "server", "--processes", "2", "--listen",
               f"127.0.0.1:{port}", "--pool", "here", "--redis-url", REDIS_URL,
               "--key-prefix", prefix]  # fmt: skip
    with log.open("wb") as out:
        parent = subprocess.Popen(command, stdout=out, stderr=out)
    try:
        wanted = [f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"]
        wait_until(lambda: [e.address for e in pool.servers(client, keys)] == wanted, 30, "two servers")
        pids = {e.pid for e in pool.servers(client, keys)}
        assert len(pids) == 2 and parent.pid not in pids
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(30) == 0, log.read_text()
        assert pool.servers(client, keys) == []  # both left the pool as they stopped
        for pid in pids:
            assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        assert log.read_text().count("match server stopped") == 2
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_processes_that_cannot_all_start_stop_all_and_fail(
    redis_prefix: tuple[redis.Redis, str], tmp_path: Path
) -> None:
    _, prefix = redis_prefix
    port = free_port_pair()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port + 1))
        taken.listen()
        command = [sys.executable, "-m", "uno_arena.cli", "server", "--processes", "2", "--listen",
                   f"127.0.0.1:{port}", "--redis-url", REDIS_URL, "--key-prefix", prefix]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert f"cannot listen on 127.0.0.1:{port + 1}: address already in use" in done.stderr
    assert "stopping the others" in done.stderr and "match server stopped" in done.stderr
