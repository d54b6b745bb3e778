"""A raising bot's faults reach the leaderboard's fault column: a real tournament (server, `uno-arena
worker` process, Redis, SDK bots), then the stored table, `uno-arena leaderboard` and the web view."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import RunningServer
from tests.server.test_bot_errors import Flaky
from tests.workers.harness import WorkerProcess, connect_bots, wait_until
from tests.workers.test_tournament import finished, invoke, start_worker
from uno_arena.leaderboard import board
from uno_arena.records.match import match_records
from uno_arena.records.spec import spec_from_dict
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.web.app import create_app
from uno_arena.workers import lifecycle


def test_a_raising_bots_errors_reach_the_leaderboards_fault_column(
    match_server: RunningServer, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    flaky = Flaky(every=4)
    bots = connect_bots(match_server, {"flaky": flaky, "greedy": GreedyBot(), "rand": RandomBot(3)})
    spec = spec_from_dict({"name": "faulty", "bots": ["flaky", "greedy", "rand"], "target": 150, "seed": 2,
                           "server": match_server.address})  # fmt: skip
    tournament_id = lifecycle.create_checked(client, prefix, spec)
    assert lifecycle.start(client, prefix, tournament_id) == 3
    start_worker(match_server, workers, tmp_path)
    wait_until(lambda: finished(match_server, tournament_id), 120, "the tournament to finish")

    # the records: each error the SDK reported is a recorded bot_error of flaky's seat, nobody else's
    recorded = {"flaky": 0, "greedy": 0, "rand": 0}
    for match in match_records(client, prefix, tournament_id):
        for seat, bot in enumerate(match.bots):
            recorded[bot] += match.faults[seat].bot_error
        assert not match.forfeited  # no strikes by default
    assert recorded == {"flaky": flaky.failed, "greedy": 0, "rand": 0} and flaky.failed > 0
    errors = flaky.failed

    # the stored table, as each job leaves it
    def stored() -> board.Table | None:
        table = board.load(client, prefix, tournament_id)
        return table if table is not None and table.matches == 3 else None

    wait_until(lambda: stored() is not None, 30, "the stored leaderboard to count every match")
    table = stored()
    assert table is not None
    assert {row.bot: row.bot_errors for row in table.standings} == recorded

    # `uno-arena leaderboard`: the faults column (timeouts/illegal/disconnects/bot errors/forfeits)
    text = invoke(match_server, "leaderboard", tournament_id)
    assert "faults: timeouts/illegal/disconnects/bot errors/forfeits" in " ".join(text.split())  # caption
    for bot, count in recorded.items():
        row = next(line for line in text.splitlines() if f" {bot} " in line)
        assert re.search(rf"\b\d+/\d+/\d+/{count}/0\b", row), row
    shown = json.loads(invoke(match_server, "leaderboard", tournament_id, "--json"))
    assert {row["bot"]: row["bot_errors"] for row in shown["standings"]} == recorded
    csv_rows = invoke(match_server, "leaderboard", tournament_id, "--csv").splitlines()
    assert csv_rows[0].split(",")[-1] == "bot_errors"

    # the web view: its JSON API and the standings table of the page
    web = create_app(client, prefix).test_client()
    api = web.get(f"/api/leaderboard/{tournament_id}").get_json()
    assert {row["bot"]: row["bot_errors"] for row in api["standings"]} == recorded
    page = web.get(f"/tournament/{tournament_id}").get_data(as_text=True)
    assert "faults t/i/d/e/f" in page  # timeouts/illegal/disconnects/bot errors/forfeits
    standings = page[page.index('<table id="standings">') :]
    flaky_row = standings[standings.index('href="/bot/flaky">flaky</a>') :].split("</tr>")[0]
    assert re.search(rf'<td class="name faults">\d+/\d+/\d+/{errors}/0</td>', flaky_row), flaky_row
    for bot in bots:
        bot.stop()
