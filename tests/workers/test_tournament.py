"""Tournaments end to end: real Redis, real `uno-arena worker` processes, a real server, SDK bots."""

from __future__ import annotations

import json
import random
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner

from tests.conftest import RunningServer
from tests.sdk.runner import BackgroundBot
from tests.workers.harness import REDIS_URL, WorkerProcess, connect_bots, wait_until
from uno_arena.cli.main import cli
from uno_arena.leaderboard import board
from uno_arena.records.match import load_match, match_records, record
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, TournamentStatus, errors, load, states
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.v1 import codec, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import lifecycle
from uno_arena.workers.queue import match_queue


class SlowGreedyBot(GreedyBot):
    """Greedy, thinking 4 ms per decision, so that a match lasts long enough to be killed mid-way."""

    def decide(self, observation: Observation) -> Action:
        time.sleep(0.004)
        return super().decide(observation)


@pytest.fixture
def workers(match_server: RunningServer, tmp_path: Path) -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.stop()


def start_worker(server: RunningServer, started: list[WorkerProcess], tmp_path: Path) -> WorkerProcess:
    worker = WorkerProcess(
        server.prefix, server.control_token, tmp_path / f"worker{len(started)}.log"
    ).start()
    started.append(worker)
    return worker


def invoke(server: RunningServer, *args: str) -> str:
    result = CliRunner().invoke(cli, [*args[:2], "--redis-url", REDIS_URL, "--key-prefix", server.prefix,
                                      *args[2:]])  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def finished(server: RunningServer, tournament_id: str) -> bool:
    return load(server.redis, server.prefix, tournament_id).status is TournamentStatus.FINISHED


def assert_recorded_once(client: redis.Redis, prefix: str, tournament_id: str) -> None:
    tournament = load(client, prefix, tournament_id)
    keys = Keys(prefix, tournament_id)
    recorded = [i.decode() for i in client.lrange(keys.results, 0, -1)]
    assert sorted(recorded) == [keys.match_id(i) for i in range(tournament.matches)]  # each once, none lost
    assert tournament.done == tournament.matches
    assert set(states(client, prefix, tournament_id).values()) == {MatchState.DONE}


def test_small_tournament_from_spec_to_results(match_server: RunningServer, workers: list[WorkerProcess],
                                               tmp_path: Path) -> None:  # fmt: skip
    bots = connect_bots(match_server, {"rand": RandomBot(1), "greedy": GreedyBot(), "greedy2": GreedyBot()})
    spec = tmp_path / "cup.toml"
    spec.write_text(f'name = "cup"\nbots = ["rand", "greedy", "greedy2"]\ntarget = 100\nseed = 4\n'
                    f'server = "{match_server.address}"\n[deadlines]\nwait_for_bots_ms = 5000\n')  # fmt: skip
    output = invoke(match_server, "tournament", "create", str(spec), "--cycles", "2", "--id", "cup1")
    assert "6 matches" in output
    invoke(match_server, "tournament", "start", "cup1")
    start_worker(match_server, workers, tmp_path)
    wait_until(lambda: finished(match_server, "cup1"), 120, "the tournament to finish")
    assert_recorded_once(match_server.redis, match_server.prefix, "cup1")

    for summary in match_records(match_server.redis, match_server.prefix, "cup1"):
        assert max(summary.totals) >= 100 and summary.reason_name == "target_reached"
        assert "greedy" in summary.bots or "greedy2" in summary.bots
    assert "done" in invoke(match_server, "tournament", "status", "cup1")
    assert "greedy" in invoke(match_server, "tournament", "watch", "cup1")  # returns once finished

    text = invoke(match_server, "replay", "cup1-m00000")
    assert "hand 1" in text and "target_reached" in text
    exported = json.loads(invoke(match_server, "replay", "cup1-m00000", "--json"))
    match = load_match(match_server.redis, match_server.prefix, "cup1-m00000")
    assert match is not None and len(exported["events"]) == match.finished.event_count > 0

    def board_matches() -> int:  # each job refreshes the table just after recording its match
        stored = board.load(match_server.redis, match_server.prefix, "cup1")
        return stored.matches if stored else 0

    wait_until(lambda: board_matches() == 6, 30, "the stored leaderboard to count every match")
    table = json.loads(invoke(match_server, "leaderboard", "cup1", "--json"))
    assert [row["bot"] for row in table["standings"]][-1] == "rand"  # the weaker bot ranks last
    assert table["head_to_head"]["greedy"]["rand"]["tables"] == 2
    assert "rand" in invoke(match_server, "leaderboard", "cup1")
    assert invoke(match_server, "leaderboard", "--csv").startswith("rank,bot,ordinal,mu,sigma,matches")

    keys = Keys(match_server.prefix, "cup1")  # recording the same match again changes nothing
    log = control_pb2.EventLogChunk(events=match.events).SerializeToString()
    assert not record(match_server.redis, keys, 0, match.finished, log)
    assert_recorded_once(match_server.redis, match_server.prefix, "cup1")
    for bot in bots:
        bot.stop()


def test_a_tournament_under_every_house_rule(match_server: RunningServer, workers: list[WorkerProcess],
                                             tmp_path: Path) -> None:  # fmt: skip
    """RULINGS 25-28 from a spec's [rules] to the recorded matches: every match is played and recorded
    under them, and status, the leaderboard and the replays say so."""
    bots = connect_bots(match_server, {"rand": RandomBot(3), "greedy": GreedyBot(), "strong": StrongBot()})
    spec = tmp_path / "house.toml"
    spec.write_text(
        textwrap.dedent(f"""
        name = "house"
        bots = ["rand", "greedy", "strong"]
        seats = 3
        target = 100
        seed = 2
        server = "{match_server.address}"
        [rules]
        stacking = true
        jump_in = true
        seven_zero = true
        multi_play = true
        [deadlines]
        wait_for_bots_ms = 5000
        """)
    )
    said = "house rules: stacking, jump_in, seven_zero, multi_play"
    created = invoke(match_server, "tournament", "create", str(spec), "--id", "house1")
    assert said in created
    invoke(match_server, "tournament", "start", "house1")
    start_worker(match_server, workers, tmp_path)
    wait_until(lambda: finished(match_server, "house1"), 120, "the tournament to finish")
    client, prefix = match_server.redis, match_server.prefix
    assert_recorded_once(client, prefix, "house1")
    stored = load(client, prefix, "house1").spec.rules
    assert (stored.stacking, stored.jump_in, stored.seven_zero, stored.multi_play) == (True,) * 4
    kinds: set[str] = set()
    recorded = match_records(client, prefix, "house1")
    assert len(recorded) == load(client, prefix, "house1").matches >= 1
    for summary in recorded:
        match = load_match(client, prefix, summary.match_id)
        assert match is not None and summary.reason_name == "target_reached"
        assert codec.rules_from(match.finished.rules, 3) == stored  # each match was played under them
        kinds |= {str(e.WhichOneof("kind")) for e in match.events}
        assert not [f for f in match.finished.faults if f.kind == pb.FAULT_KIND_BOT_ERROR]
    assert {"swapped", "hands_passed", "received"} <= kinds
    assert said in invoke(match_server, "tournament", "status", "house1")
    assert said in invoke(match_server, "replay", "house1-m00000")
    table = json.loads(invoke(match_server, "leaderboard", "house1", "--json"))
    assert table["rules"]["house_rules"] == ["stacking", "jump_in", "seven_zero", "multi_play"]
    for bot in bots:
        bot.stop()


@pytest.mark.slow  # ~30 s of chaos; test_outages.py kills a worker mid-match in the default run
def test_killed_workers_lose_and_double_nothing(match_server: RunningServer, workers: list[WorkerProcess],
                                                tmp_path: Path) -> None:  # fmt: skip
    names = [f"bot{i}" for i in range(7)]
    bots = connect_bots(match_server, {n: SlowGreedyBot() for n in names})
    spec = spec_from_dict({"name": "chaos", "bots": names, "target": 300, "seed": 9,
                           "server": match_server.address})  # fmt: skip
    client, prefix = match_server.redis, match_server.prefix
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    assert lifecycle.start(client, prefix, tournament_id) == 21
    running = [start_worker(match_server, workers, tmp_path) for _ in range(2)]
    rng = random.Random(5)
    hit: set[int] = set()
    for _ in range(3):  # SIGKILL every worker at a random moment of a running match, and restart them
        wait_until(lambda: MatchState.RUNNING in states(client, prefix, tournament_id).values(), 60,
                   "a running match")  # fmt: skip
        time.sleep(rng.uniform(0, 0.5))  # the random moment, not synchronisation
        hit |= {i for i, s in states(client, prefix, tournament_id).items() if s is MatchState.RUNNING}
        for victim in running:
            victim.kill()
        running = [start_worker(match_server, workers, tmp_path) for _ in range(2)]
    wait_until(lambda: finished(match_server, tournament_id), 180, "the tournament to finish")
    assert_recorded_once(client, prefix, tournament_id)
    plays = {int(k): int(v) for k, v in client.hgetall(Keys(prefix, tournament_id).attempts).items()}
    assert hit and sum(plays.values()) > 21  # matches were picked up again after the kills
    for bot in bots:
        bot.stop()


def test_a_missing_bot_fails_with_a_reason_then_reruns(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    here = connect_bots(match_server, {"here": GreedyBot()})
    late_token = match_server.register("late")
    spec = spec_from_dict({
        "name": "late", "bots": ["here", "late"], "target": 50, "server": match_server.address,
        "deadlines": {"wait_for_bots_ms": 200}, "retries": {"attempts": 2, "backoff_s": [0]},
    })  # fmt: skip
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    lifecycle.start(client, prefix, tournament_id)
    start_worker(match_server, workers, tmp_path)
    wait_until(lambda: states(client, prefix, tournament_id)[0] is MatchState.FAILED, 60, "the match to fail")
    reason = errors(client, prefix, tournament_id)[0]
    assert "FAILED_PRECONDITION" in reason and "late" in reason, reason
    assert load(client, prefix, tournament_id).status is TournamentStatus.RUNNING

    late = BackgroundBot(GreedyBot(), match_server.address, "late", late_token)
    late.wait_connected()
    assert lifecycle.rerun_failed(client, prefix, tournament_id) == 1
    wait_until(lambda: finished(match_server, tournament_id), 60, "the rerun to finish")
    assert_recorded_once(client, prefix, tournament_id)
    assert errors(client, prefix, tournament_id) == {}
    for bot in [*here, late]:
        bot.stop()


def test_cancel_resume_and_never_queued_twice(match_server: RunningServer, workers: list[WorkerProcess],
                                              tmp_path: Path) -> None:  # fmt: skip
    client, prefix = match_server.redis, match_server.prefix
    bots = connect_bots(match_server, {"a": GreedyBot(), "b": GreedyBot(), "c": RandomBot(2)})
    spec = spec_from_dict(
        {"name": "paused", "bots": ["a", "b", "c"], "target": 50, "server": match_server.address}
    )
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    assert lifecycle.start(client, prefix, tournament_id) == 3
    assert lifecycle.resume(client, prefix, tournament_id) == 0  # all three are already queued
    assert len(match_queue(client, prefix)) == 3
    assert lifecycle.cancel(client, prefix, tournament_id) == 3
    assert set(states(client, prefix, tournament_id).values()) == {MatchState.CANCELLED}
    assert lifecycle.resume(client, prefix, tournament_id) == 3
    start_worker(match_server, workers, tmp_path)
    wait_until(lambda: finished(match_server, tournament_id), 60, "the tournament to finish")
    assert_recorded_once(client, prefix, tournament_id)
    for bot in bots:
        bot.stop()
