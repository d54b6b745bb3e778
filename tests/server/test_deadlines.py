"""Per-match limits in PlayMatch: an unset field takes the server's default, a set one is used as given."""

from __future__ import annotations

import concurrent.futures
import threading

import grpc
import pytest

from tests.conftest import RunningServer
from tests.server.botclient import TestBot, play_match
from uno_arena.records.spec import Deadlines
from uno_arena.server.settings import ServerSettings
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb


def test_the_server_and_tournaments_share_one_set_of_defaults() -> None:
    defaults, server = Deadlines(), ServerSettings()
    assert (server.decision_timeout_ms, server.max_strikes, server.disconnect_grace_ms,
            server.wait_for_bots_ms) == (defaults.decision_ms, defaults.max_strikes,
                                         defaults.disconnect_grace_ms, defaults.wait_for_bots_ms)  # fmt: skip


@pytest.mark.settings(disconnect_grace_ms=600_000)
def test_a_grace_of_zero_means_no_grace(match_server: RunningServer) -> None:
    """The server's default grace is 10 minutes here: a match that ends at once honoured the request's 0."""
    good = TestBot(match_server.address, "good", match_server.register("good"))
    hang_up = threading.Event()

    def leave(request: bot_pb2.DecisionRequest) -> None:
        hang_up.set()  # never answers: the test hangs up instead

    leaver = TestBot(match_server.address, "leaver", match_server.register("leaver"), policy=leave)
    for bot in (good, leaver):
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(match_id="no-grace", bots=["good", "leaver"], seed=5,
                                           rules=pb.RulesConfig(target_score=150), decision_timeout_ms=60_000,
                                           disconnect_grace_ms=0)  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(play_match, match_server.address, match_server.control_token, request)
        assert hang_up.wait(30)
        leaver.close()
        finished = future.result(60)[-1].finished
    assert finished.result.reason == pb.MATCH_END_FORFEIT and list(finished.result.forfeited) == [1]
    # the decision it hung up on, then the next one, due while it was gone: the forfeit
    assert [(f.kind, f.forfeited) for f in finished.faults] == [
        (pb.FAULT_KIND_DISCONNECTED, False),
        (pb.FAULT_KIND_DISCONNECTED, True),
    ]
    assert "nor back within the 0 s grace period" in finished.faults[1].detail
    good.close()


@pytest.mark.parametrize("field", ["decision_timeout_ms", "max_strikes"])
def test_a_zero_limit_that_cannot_work_is_refused(match_server: RunningServer, field: str) -> None:
    request = control_pb2.PlayMatchRequest(match_id=f"zero-{field}", bots=["a", "b"], **{field: 0})  # type: ignore[arg-type]
    with pytest.raises(grpc.RpcError) as error:
        play_match(match_server.address, match_server.control_token, request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT and field in str(error.value.details())
