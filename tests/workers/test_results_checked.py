"""A result is recorded only if it is the scheduled match: a server answering a match id with another
match (other seats, seed or target) fails the match with the reason. A stand-in control server on port 0
answers as a server whose cache holds another match under that id; the worker is a real process."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
import redis

from tests.workers.harness import WorkerProcess, wait_until
from uno_arena.records import identity
from uno_arena.records.match import load_match
from uno_arena.records.spec import TournamentSpec, spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, errors, states
from uno_arena.v1 import codec, control_pb2, control_pb2_grpc
from uno_arena.v1 import game_pb2 as pb
from uno_arena.workers import lifecycle

Answer = Callable[[control_pb2.PlayMatchRequest], Iterator[control_pb2.MatchProgress]]


class StandIn(control_pb2_grpc.ControlServiceServicer):  # type: ignore[misc]
    """Answers every PlayMatch with `answer(request)`; any token is accepted."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.calls = 0
        self.released = threading.Event()  # ends answers that hang

    def PlayMatch(self, request: control_pb2.PlayMatchRequest, context: grpc.ServicerContext) -> Iterator[
        control_pb2.MatchProgress
    ]:  # fmt: skip
        self.calls += 1
        yield from self.answer(request)


@pytest.fixture
def stand_in() -> Iterator[tuple[StandIn, str]]:
    servicer = StandIn(lambda request: iter(()))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    control_pb2_grpc.add_ControlServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, f"127.0.0.1:{port}"
    servicer.released.set()
    server.stop(grace=None)


def finished(bots: list[str], seed: int, rules: pb.RulesConfig) -> control_pb2.MatchProgress:
    result = pb.MatchResult(bots=bots, totals=[50, 0], winners=[0], reason=pb.MATCH_END_TARGET_REACHED)
    return control_pb2.MatchProgress(
        finished=control_pb2.FinishedMatch(result=result, seed=seed, rules=rules)
    )


def play(client: redis.Redis, prefix: str, address: str, log: Path, workers: list[WorkerProcess]) -> str:
    for bot in ("a", "b"):
        identity.register_bot(client, prefix, bot)
    spec = spec_from_dict({"name": "t", "bots": ["a", "b"], "target": 100, "server": address,
                           "retries": {"attempts": 1}})  # fmt: skip
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    lifecycle.start(client, prefix, tournament_id)
    workers.append(WorkerProcess(prefix, "any-token", log).start())
    wait_until(lambda: states(client, prefix, tournament_id)[0] in {MatchState.DONE, MatchState.FAILED}, 60,
               "the match to settle")  # fmt: skip
    return tournament_id


def _spec_rules(target: int) -> pb.RulesConfig:
    spec: TournamentSpec = spec_from_dict({"name": "t", "bots": ["a", "b"], "target": 100})
    return codec.rules(dataclasses.replace(spec.rules, target_score=target))


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (lambda r: iter([finished(list(reversed(r.bots)), r.seed, r.rules)]), "bots b,a (scheduled a,b)"),
        (lambda r: iter([finished(list(r.bots), r.seed + 1, r.rules)]), "seed"),
        (
            lambda r: iter([finished(list(r.bots), r.seed, _spec_rules(50))]),
            "rules.target_score 50 (scheduled 100)",
        ),
    ],
    ids=["seats", "seed", "target"],
)
def test_a_cached_result_of_another_match_is_refused(
    redis_prefix: tuple[redis.Redis, str], stand_in: tuple[StandIn, str], workers: list[WorkerProcess],
    tmp_path: Path, answer: Answer, reason: str,
) -> None:  # fmt: skip
    client, prefix = redis_prefix
    servicer, address = stand_in
    servicer.answer = answer
    tournament_id = play(client, prefix, address, tmp_path / "worker.log", workers)

    match_id = Keys(prefix, tournament_id).match_id(0)
    assert states(client, prefix, tournament_id)[0] is MatchState.FAILED
    error = errors(client, prefix, tournament_id)[0]
    assert error.startswith(f"match id {match_id} on the server is a different match: ") and reason in error
    assert load_match(client, prefix, match_id) is None


def test_another_match_is_refused_as_soon_as_it_is_announced(
    redis_prefix: tuple[redis.Redis, str], stand_in: tuple[StandIn, str], workers: list[WorkerProcess],
    tmp_path: Path,
) -> None:  # fmt: skip
    client, prefix = redis_prefix
    servicer, address = stand_in

    def other_match_running(request: control_pb2.PlayMatchRequest) -> Iterator[control_pb2.MatchProgress]:
        started = control_pb2.MatchStartedInfo(
            match_id=request.match_id, bots=["x", "y"], rules=request.rules
        )
        yield control_pb2.MatchProgress(started=started)
        servicer.released.wait(120)  # a long match: the worker must not wait for its end

    servicer.answer = other_match_running
    tournament_id = play(client, prefix, address, tmp_path / "worker.log", workers)
    assert "bots x,y (scheduled a,b)" in errors(client, prefix, tournament_id)[0]


def test_the_scheduled_match_is_recorded(
    redis_prefix: tuple[redis.Redis, str], stand_in: tuple[StandIn, str], workers: list[WorkerProcess],
    tmp_path: Path,
) -> None:  # fmt: skip
    client, prefix = redis_prefix
    servicer, address = stand_in
    servicer.answer = lambda r: iter([finished(list(r.bots), r.seed, r.rules)])
    tournament_id = play(client, prefix, address, tmp_path / "worker.log", workers)
    assert states(client, prefix, tournament_id)[0] is MatchState.DONE, errors(client, prefix, tournament_id)
