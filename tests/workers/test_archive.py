"""`tournament export`, `delete` and `import` on real tournaments: a real match server, SDK bots, real
`uno-arena worker` processes and real `uno-arena web` processes, over HTTP.

A finished tournament is exported, deleted (nothing of it left: no key, no RQ job) and imported into
another Redis database: its leaderboard, head to head, every replay and every page of the web view are
what they were. A tournament being played is refused by `delete` (and `export`) unless forced; forced,
its running match's work horse is stopped (counted as stopped, not failed) and nothing of it is left
behind. Deleting a tournament leaves those whose ids look like its own or its matches' untouched.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from rq import Worker

from tests.conftest import RunningServer, free_port
from tests.endpoints import scrape, status_of
from tests.sdk.runner import BackgroundBot
from tests.web.test_web_serving import WebProcess
from tests.workers.harness import REDIS_URL, WorkerProcess, connect_bots, wait_until
from uno_arena.cli.main import cli
from uno_arena.leaderboard import board
from uno_arena.records.match import match_records
from uno_arena.records.owned import tournament_keys
from uno_arena.records.tournament import MatchState, TournamentStatus, load, states
from uno_arena.sdk import Action, Observation
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.workers.queue import job_id, match_queue, tournament_jobs

BOTS = ("greedy", "rand", "steady")


class PonderingGreedyBot(GreedyBot):
    """Greedy, thinking 25 ms per decision: a match to 500 lasts well over the seconds a test needs to
    delete its tournament while it is played."""

    def decide(self, observation: Observation) -> Action:
        time.sleep(0.025)
        return super().decide(observation)


@pytest.fixture
def webs() -> Iterator[list[WebProcess]]:
    started: list[WebProcess] = []
    yield started
    for web in started:
        web.stop()


def run(prefix: str, *args: str, url: str = REDIS_URL) -> Any:
    """The CLI in-process (`CliRunner`): its result, whatever the exit status."""
    return CliRunner().invoke(cli, [*args[:2], "--redis-url", url, "--key-prefix", prefix, *args[2:]])


def ok(prefix: str, *args: str, url: str = REDIS_URL) -> str:
    result = run(prefix, *args, url=url)
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def play(server: RunningServer, workers: list[WorkerProcess], tmp_path: Path, tournament_id: str,
         target: int, worker_options: Sequence[str] = ()) -> None:  # fmt: skip
    """Create and start a tournament of the three bots to `target`, and start a worker (with these
    options) unless one runs already."""
    spec = tmp_path / f"{tournament_id}.toml"
    bots = json.dumps(list(BOTS))
    spec.write_text(f'name = "{tournament_id}"\nbots = {bots}\ntarget = {target}\nseed = 3\n'
                    f'server = "{server.address}"\n[deadlines]\nwait_for_bots_ms = 5000\n')  # fmt: skip
    ok(server.prefix, "tournament", "create", str(spec), "--id", tournament_id)
    ok(server.prefix, "tournament", "start", tournament_id)
    if not workers:
        worker = WorkerProcess(server.prefix, server.control_token, tmp_path / "worker.log",
                               options=worker_options)  # fmt: skip
        workers.append(worker.start())


def prefix_keys_naming(client: redis.Redis, prefix: str, tournament_id: str) -> list[str]:
    """Every key under the prefix whose name holds the tournament's id."""
    named = [k.decode() for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
    return [k for k in named if re.search(rf":{re.escape(tournament_id)}(?:[:-]|$)", k)]


def rq_traces(client: redis.Redis, prefix: str, tournament_id: str) -> list[str]:
    """RQ's keys naming a job of the tournament, and its entries in RQ's lists, sets and sorted sets."""
    stem = job_id(prefix, tournament_id, 0).removesuffix("0")
    found = []
    for raw in client.scan_iter(match="rq:*", count=1000):
        key = raw.decode()
        if stem in key:
            found.append(key)
            continue
        kind = client.type(raw).decode()
        members: list[Any] = []
        if kind == "list":
            members = client.lrange(raw, 0, -1)
        elif kind == "set":
            members = list(client.smembers(raw))
        elif kind == "zset":
            members = client.zrange(raw, 0, -1)
        found += [f"{key} holds {m.decode()}" for m in members if stem in m.decode()]  # bytes: no decoding
    return found


def keys_naming(client: redis.Redis, prefix: str, tournament_id: str) -> list[str]:
    return prefix_keys_naming(client, prefix, tournament_id) + rq_traces(client, prefix, tournament_id)


def pages(url: str, tournament_id: str, match_ids: list[str]) -> dict[str, Any]:
    """Every page and JSON document of the web view about the tournament, as served: JSON parsed, with
    the one value that must differ (when a stored leaderboard was last updated) set aside."""
    paths = ["/", "/api/tournaments", f"/tournament/{tournament_id}", f"/api/tournament/{tournament_id}",
             f"/api/tournament/{tournament_id}?limit=2", f"/api/tournament/{tournament_id}?limit=2&offset=2",
             f"/api/tournament/{tournament_id}/running", f"/api/leaderboard/{tournament_id}",
             f"/api/leaderboard/{board.ALL}"]  # fmt: skip
    paths += [path for bot in BOTS for path in (f"/bot/{bot}", f"/api/bot/{bot}")]
    paths += [path for match_id in match_ids for path in (f"/match/{match_id}", f"/match/{match_id}.json")]
    served: dict[str, Any] = {}
    for path in paths:
        with urllib.request.urlopen(f"{url}{path}", timeout=30) as response:
            body = response.read().decode()
            if response.headers.get_content_type() == "application/json":
                served[path] = without_update_times(json.loads(body))
            else:
                served[path] = body
    return served


def without_update_times(value: Any) -> Any:
    """A stored leaderboard's `computed` is when it was last updated: an import updates the table over
    every tournament, so it differs (and only it)."""
    if isinstance(value, dict):
        return {k: without_update_times(v) for k, v in value.items() if k != "computed"}
    if isinstance(value, list):
        return [without_update_times(v) for v in value]
    return value


def test_a_finished_tournament_round_trips_through_export_delete_and_import(
    match_server: RunningServer, workers: list[WorkerProcess], bots: list[BackgroundBot],
    webs: list[WebProcess], other_database: tuple[redis.Redis, str], tmp_path: Path,
) -> None:  # fmt: skip
    client, prefix = match_server.redis, match_server.prefix
    connect_bots(match_server, {"greedy": GreedyBot(), "rand": RandomBot(2), "steady": GreedyBot()}, bots)
    play(match_server, workers, tmp_path, "cup", target=100)
    wait_until(lambda: load(client, prefix, "cup").status is TournamentStatus.FINISHED, 120, "the tournament")
    for scope in ("cup", board.ALL):  # each match job refreshes the tables just after recording
        wait_until(lambda s=scope: (board.load(client, prefix, s) or board.compute([])).matches == 3, 30,  # type: ignore[misc]
                   f"the stored {scope} leaderboard to count every match")  # fmt: skip
    match_ids = [r.match_id for r in match_records(client, prefix, "cup")]
    assert len(match_ids) == 3

    # owned.py knows every key the tournament has: each key under the prefix naming it is listed; and
    # every RQ job of it that RQ's keys show is found
    owned = {key.name for key in tournament_keys(client, prefix, "cup")}
    assert set(prefix_keys_naming(client, prefix, "cup")) - owned == set()
    stem = re.escape(job_id(prefix, "cup", 0).removesuffix("0"))

    def unfound() -> set[str] | None:  # a refresh job may end between the two reads: read both again then
        traces = " ".join(rq_traces(client, prefix, "cup"))
        seen = {m.group(0) for m in re.finditer(rf"{stem}\d+(?:__board)?", traces)}
        assert seen, "no RQ key names a job of the tournament"
        missed = seen - set(tournament_jobs(client, prefix, "cup", range(3)))
        return missed or None

    wait_until(lambda: unfound() is None, 10, "tournament_jobs to find every job RQ's keys show")

    web = WebProcess(prefix)
    webs.append(web)
    before = pages(web.url, "cup", match_ids)
    replays = {m: json.loads(ok(prefix, "replay", m, "--json")) for m in match_ids}
    table = without_update_times(json.loads(ok(prefix, "leaderboard", "cup", "--json")))
    assert table["head_to_head"]["greedy"]["rand"]["tables"] == 1 and len(table["standings"]) == 3

    archive = tmp_path / "cup.jsonl.gz"
    exported = json.loads(ok(prefix, "tournament", "export", "cup", str(archive), "--json"))
    assert exported == {"tournament": "cup", "file": str(archive), "bytes": archive.stat().st_size,
                        "keys": exported["keys"], "matches": 3, "snapshot": False}  # fmt: skip
    again = run(prefix, "tournament", "export", "cup", str(archive))
    assert again.exit_code == 1 and f"{archive} exists: --overwrite replaces it" in again.output

    deleted = ok(prefix, "tournament", "delete", "cup")
    said = r"deleted tournament cup: \d+ keys \(\d+ tournament keys, 3 match records, 7 leaderboard keys"
    assert re.search(said + r".*\), 3 RQ jobs", deleted), deleted
    assert "the leaderboard over every tournament was rebuilt without it" in deleted
    assert keys_naming(client, prefix, "cup") == []  # no key of it, no RQ job (nor an entry of one) left
    assert not match_queue(client, prefix).get_job_ids()
    assert json.loads(ok(prefix, "tournament", "list", "--json")) == []
    assert board.current(client, prefix, None).matches == 0  # the overall table forgot its matches
    assert status_of(f"{web.url}/tournament/cup")[0] == 404
    gone = run(prefix, "tournament", "delete", "cup")
    assert gone.exit_code == 1 and "no tournament 'cup'" in gone.output

    _, other_url = other_database
    imported = json.loads(ok(prefix, "tournament", "import", str(archive), "--json", url=other_url))
    assert (imported["tournament"], imported["matches"], imported["keys"]) == ("cup", 3, exported["keys"])
    assert imported["replaced"] is False and imported["exported_by"].startswith("uno-arena ")
    web_after = WebProcess(prefix, "--redis-url", other_url)
    webs.append(web_after)
    after = pages(web_after.url, "cup", match_ids)
    for path, page in before.items():
        assert after[path] == page, path
    for match_id, replay in replays.items():
        assert json.loads(ok(prefix, "replay", match_id, "--json", url=other_url)) == replay
    restored = json.loads(ok(prefix, "leaderboard", "cup", "--json", url=other_url))
    assert without_update_times(restored) == table

    twice = run(prefix, "tournament", "import", str(archive), url=other_url)
    assert twice.exit_code == 1 and "tournament 'cup' already exists" in twice.output
    assert "--replace deletes it first" in twice.output
    replaced = ok(prefix, "tournament", "import", str(archive), "--replace", url=other_url)
    assert "deleted the tournament here first" in replaced and "imported cup" in replaced
    assert pages(web_after.url, "cup", match_ids) == after


def test_delete_refuses_a_tournament_being_played_and_force_stops_it(
    match_server: RunningServer, workers: list[WorkerProcess], bots: list[BackgroundBot], tmp_path: Path
) -> None:
    client, prefix = match_server.redis, match_server.prefix
    connect_bots(match_server, {name: PonderingGreedyBot() for name in BOTS}, bots)
    address = f"127.0.0.1:{free_port()}"
    play(match_server, workers, tmp_path, "long", target=500, worker_options=["--metrics", address])
    wait_until(lambda: MatchState.RUNNING in states(client, prefix, "long").values(), 60, "a match to run")

    refused = run(prefix, "tournament", "delete", "long")
    assert refused.exit_code == 1
    assert "tournament 'long' is being played: it is running" in refused.output
    assert "or delete it with --force" in refused.output
    assert load(client, prefix, "long").status is TournamentStatus.RUNNING  # nothing was touched
    snapshot = run(prefix, "tournament", "export", "long", str(tmp_path / "long.jsonl.gz"))
    assert snapshot.exit_code == 1 and "is being played" in snapshot.output and "--force" in snapshot.output

    forced = json.loads(ok(prefix, "tournament", "delete", "long", "--force", "--json"))
    assert forced["tournament"] == "long" and forced["listed"] is True and forced["unstopped"] == []
    assert forced["stopped"] and set(forced["stopped"]) <= set(forced["jobs"])  # its running match's job
    assert forced["counts"]["tournament"] >= 4 and all(k.startswith(f"{prefix}:") for k in forced["keys"])

    def idle() -> bool:  # the worker is done with the stopped job: nothing more of it can be written
        found = Worker.all(queue=match_queue(client, prefix))
        return bool(found) and all(w.get_state() == "idle" for w in found)

    wait_until(idle, 30, "the worker to be idle again")
    assert keys_naming(client, prefix, "long") == []
    assert json.loads(ok(prefix, "tournament", "list", "--json")) == []
    assert workers[0].alive  # a stopped job costs its work horse, never the worker
    # the worker counts the stopped job as stopped: no failure for an operator to be alerted to
    counted = scrape(f"http://{address}/metrics")
    assert counted.value("uno_arena_worker_matches_stopped_total") == len(forced["stopped"]) == 1
    assert counted.value("uno_arena_worker_matches_failed_total") == 0
    assert counted.value("uno_arena_worker_matches_retried_total") == 0
    # the match server plays the stopped match on (nothing will record it): end it (the fixtures stop the
    # bots and the worker)
    assert match_server.call_soon(match_server.arena.drain(0)).result(30) == 1


def test_deleting_a_tournament_leaves_tournaments_of_like_ids_untouched(
    match_server: RunningServer, workers: list[WorkerProcess], bots: list[BackgroundBot], tmp_path: Path
) -> None:
    """`cup` beside `cup1` (its id a prefix of theirs) and `cup-m00000` (an id that is the name of `cup`'s
    first match): deleting `cup` leaves every key and RQ job of the other two as it was."""
    client, prefix = match_server.redis, match_server.prefix
    connect_bots(match_server, {"greedy": GreedyBot(), "rand": RandomBot(2), "steady": GreedyBot()}, bots)
    ids = ("cup", "cup1", "cup-m00000")
    for tournament_id in ids:
        play(match_server, workers, tmp_path, tournament_id, target=30)

    def settled() -> bool:  # every match recorded, every table stored, no job left to run
        tables = [board.load(client, prefix, scope) for scope in (*ids, board.ALL)]
        counted = [table.matches if table else 0 for table in tables]
        found = Worker.all(queue=match_queue(client, prefix))
        return (counted == [3, 3, 3, 9] and not match_queue(client, prefix).get_job_ids()
                and bool(found) and all(w.get_state() == "idle" for w in found))  # fmt: skip

    wait_until(settled, 120, "the three tournaments to be played and their leaderboards stored")
    siblings = ids[1:]
    mine = {key.name for key in tournament_keys(client, prefix, "cup")}
    shared = {f"{prefix}:tournaments", *board.scope_keys(prefix, board.ALL).state}

    def theirs() -> dict[str, Any]:
        """Every key under the prefix but `cup`'s and the shared ones, by its contents (DUMP); the RQ
        traces of the siblings' jobs, and their job hashes' contents."""
        under = [k.decode() for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
        found: dict[str, Any] = {name: client.dump(name) for name in under if name not in mine | shared}
        for sibling in siblings:
            found[f"rq traces of {sibling}"] = sorted(rq_traces(client, prefix, sibling))
            for job in tournament_jobs(client, prefix, sibling, range(3)):
                found[f"rq:job:{job}"] = client.dump(f"rq:job:{job}")
        return found

    before = theirs()
    assert all(before[f"rq traces of {sibling}"] for sibling in siblings)
    assert sum(name.startswith(f"{prefix}:match:cup-m00000-m") for name in before) == 3
    deleted = ok(prefix, "tournament", "delete", "cup")
    assert re.search(r"deleted tournament cup: \d+ keys \(.*3 match records.*\), 3 RQ jobs", deleted), deleted
    assert [name for name in sorted(mine) if client.exists(name)] == []
    assert rq_traces(client, prefix, "cup") == []
    assert theirs() == before
    assert [t["id"] for t in json.loads(ok(prefix, "tournament", "list", "--json"))] == list(siblings)
    assert board.current(client, prefix, None).matches == 6  # the overall table: the siblings' alone
