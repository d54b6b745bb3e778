"""Which Redis errors are an outage to wait out (`outage.unavailable`): the replies as redis-py words them,
from Redis 6.2 (the embedded one) and 7 (Debian's), for a command, a pipeline and a Lua script."""

from __future__ import annotations

import pytest
import redis
from redis.exceptions import OutOfMemoryError, ReadOnlyError

from uno_arena.records.outage import LONGEST_PAUSE_S, pause_after, refuses_writes, unavailable

OOM = "command not allowed when used memory > 'maxmemory'."
NOREPLICAS = "NOREPLICAS Not enough good replicas to write."
SCRIPT_6 = "Error running script (call to f_bd6f30): @user_script:1: @user_script: 1:"  # Redis 6.2's words
REFUSED = [
    OutOfMemoryError(OOM),  # a command (redis-py cuts the code off and names the class)
    OutOfMemoryError(f"Command # 1 (SET a 1) of pipeline caused error: {OOM}"),
    OutOfMemoryError(f"{OOM} script: bd6f30, on @user_script:1."),  # a script, Redis 7
    redis.ResponseError(f"{SCRIPT_6} -OOM {OOM}"),
    redis.ResponseError(NOREPLICAS),
    redis.ResponseError(f"Command # 2 (HSET k f v) of pipeline caused error: {NOREPLICAS}"),
    redis.ResponseError(f"{NOREPLICAS} script: bd6f30, on @user_script:1."),
    redis.ResponseError(f"{SCRIPT_6} -{NOREPLICAS}"),
    redis.ResponseError("MISCONF Redis is configured to save RDB snapshots, but it's currently unable ..."),
    ReadOnlyError("You can't write against a read only replica."),
]
NOT_REFUSED = [
    redis.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
    redis.ResponseError("ERR unknown command 'FOO'"),
    redis.ResponseError("Command # 1 (SET OOM x) of pipeline caused error: WRONGTYPE Operation against"),
    redis.ResponseError("ERR Error running script: @user_script:1: user_script:1: OOM is a word here"),
    redis.exceptions.NoScriptError("No matching script."),
    redis.WatchError("Watched variable changed."),
]


@pytest.mark.parametrize("error", REFUSED, ids=str)
def test_a_refused_write_is_an_outage(error: redis.RedisError) -> None:
    assert refuses_writes(error) and unavailable(error)


@pytest.mark.parametrize("error", NOT_REFUSED, ids=str)
def test_an_error_of_the_command_is_not(error: redis.RedisError) -> None:
    assert not refuses_writes(error) and not unavailable(error)


def test_redis_away_is_an_outage_and_no_refusal() -> None:
    for error in (redis.ConnectionError("refused"), redis.TimeoutError("timed out"),
                  redis.exceptions.BusyLoadingError("loading")):  # fmt: skip
        assert unavailable(error) and not refuses_writes(error)


def test_the_pause_doubles_to_its_longest_and_stays_there_however_long_the_outage() -> None:
    assert [pause_after(n) for n in range(1, 7)] == [0.1, 0.2, 0.4, 0.8, 1.6, LONGEST_PAUSE_S]
    assert pause_after(10**6) == LONGEST_PAUSE_S  # redis-py's ExponentialBackoff overflows here
