"""A bot stopped mid-match in a tournament: the recorded match shows its forfeit where it happened.

Real Redis, a real `uno-arena worker` process, a real server and SDK bots; read back through the CLI
(`tournament status --matches`, `replay`) as an organiser would.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import RunningServer
from tests.workers.harness import REDIS_URL, WorkerProcess, connect_bots, wait_until
from tests.workers.test_tournament import finished, invoke, start_worker
from uno_arena.cli.main import cli
from uno_arena.records.match import load_match
from uno_arena.records.replay import AUTOMATIC
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.v1 import game_pb2 as pb


class Paced(GreedyBot):
    """Greedy, 3 ms per decision: a match lasts long enough to stop a bot in its middle. Says when it has
    decided a few times."""

    def __init__(self) -> None:
        self.decisions = 0
        self.under_way = threading.Event()

    def decide(self, observation: Observation) -> Action:
        self.decisions += 1
        if self.decisions >= 5:
            self.under_way.set()
        time.sleep(0.003)  # paces the bot; nothing waits on it
        return super().decide(observation)


def test_a_bot_stopped_mid_match_shows_as_forfeited_with_its_moves_automatic(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    leaving = Paced()
    bots = connect_bots(match_server, {"stays1": Paced(), "stays2": Paced(), "leaves": leaving})
    spec = tmp_path / "stop.toml"
    spec.write_text(f'name = "stop"\nbots = ["stays1", "stays2", "leaves"]\nseats = 3\ntarget = 150\n'
                    f'seed = 3\nserver = "{match_server.address}"\n[deadlines]\nwait_for_bots_ms = 5000\n'
                    "disconnect_grace_ms = 200\n")  # fmt: skip
    invoke(match_server, "tournament", "create", str(spec), "--id", "stop1")
    invoke(match_server, "tournament", "start", "stop1")
    start_worker(match_server, workers, tmp_path)
    assert leaving.under_way.wait(60)
    bots[2].stop()  # mid-match: its seat forfeits, the other two finish the match
    wait_until(lambda: finished(match_server, "stop1"), 120, "the tournament to finish")

    match = load_match(match_server.redis, match_server.prefix, "stop1-m00000")
    assert match is not None
    seat = match.record.bots.index("leaves")
    assert match.record.forfeited == (seat,) and match.record.reason == pb.MATCH_END_TARGET_REACHED
    forfeit = match.finished.faults[-1]
    assert forfeit.kind == pb.FAULT_KIND_DISCONNECTED and forfeit.forfeited
    assert forfeit.HasField("action_index") and forfeit.action_index < len(match.finished.actions) - 10

    wide = {"COLUMNS": "200"}  # a row per line
    listed = CliRunner().invoke(cli, ["tournament", "status", "stop1", "--matches", "--redis-url", REDIS_URL,
                                      "--key-prefix", match_server.prefix], env=wide).output  # fmt: skip
    row = next(line for line in listed.splitlines() if "stop1-m00000" in line)
    assert "done" in row and "target_reached" in row and "leaves" in row
    assert re.search(r"leaves \d+ \(disconnected \d+\)", " ".join(listed.split()))
    assert "matches 1-1 of 1; one of them hand by hand: uno-arena replay stop1-m00000" in listed

    text = invoke(match_server, "replay", "stop1-m00000").splitlines()
    assert "  !! leaves forfeits: every later move of leaves is automatic" in text
    at = text.index("  !! leaves forfeits: every later move of leaves is automatic")
    assert text[at - 1].startswith(
        "  !! fault: leaves disconnected (not connected, nor back within the 0.2 s"
    )
    own = [line for line in text[at:] if line.startswith(("  leaves played", "  leaves kept"))]
    assert own and all(line.endswith(AUTOMATIC) for line in own)
    first_fault = next(i for i, line in enumerate(text) if line.startswith("  !! fault: "))
    assert not any(line.endswith(AUTOMATIC) for line in text[:first_fault])  # its own moves until then
    assert text[-3].startswith("target_reached: ")
    assert re.fullmatch(r"forfeited: leaves in hand \d+ \(disconnected, strike \d\); its later moves were "
                        r"automatic", text[-2])  # fmt: skip
    for bot in bots[:2]:
        bot.stop()
