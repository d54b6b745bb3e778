"""Metrics and health (docs/operations.md, "Metrics and health"): a real tournament on a real `uno-arena
server --metrics` process, a real `uno-arena worker --metrics` process, SDK bots, a faulty raw bot and the
web view, each /metrics read before and after; the web view's /healthz and `uno-arena worker health` on a
Redis of the test's own that stops and comes back."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import re
import signal
import time
import urllib.error
import urllib.request
from dataclasses import fields
from pathlib import Path

import redis
from click.testing import CliRunner
from prometheus_client import CollectorRegistry, generate_latest
from rq import Queue
from rq.worker import Worker

from tests.conftest import RunningServer, free_port
from tests.endpoints import Scrape, answers, parsed, scrape, status_of
from tests.sdk.runner import BackgroundBot
from tests.server.botclient import Policy, TestBot, eager
from tests.web.browser import serving
from tests.workers.harness import (
    REDIS_URL,
    RedisServer,
    ServerProcess,
    WorkerProcess,
    connect_bots,
    descendants,
    wait_until,
)
from tests.workers.test_tournament import SlowGreedyBot, finished
from uno_arena.cli.main import cli
from uno_arena.records import identity
from uno_arena.records.live import LiveFeed
from uno_arena.records.match import Faults, load_match, match_records
from uno_arena.records.spec import spec_from_dict
from uno_arena.records.tournament import Keys, MatchState, states
from uno_arena.rules import DRAW, KEEP, action_from_id, apply, legal_actions, must_ask, new_match
from uno_arena.sdk.examples.greedy_bot import GreedyBot
from uno_arena.sdk.examples.random_bot import RandomBot
from uno_arena.server.metrics import ServerMetrics
from uno_arena.v1 import bot_pb2, codec, control_pb2
from uno_arena.web.app import create_app
from uno_arena.web.app import redis_client as web_redis_client
from uno_arena.web.metrics import WebMetrics
from uno_arena.workers import lifecycle
from uno_arena.workers.jobs import MATCH_JOB, REFRESH_JOB, play_match
from uno_arena.workers.metrics import WorkerMetrics
from uno_arena.workers.queue import queue_name


def faulty(silent: frozenset[int] = frozenset({3, 12, 25}),
           wrong: frozenset[int] = frozenset({5, 8, 15, 20})) -> Policy:  # fmt: skip
    """A raw bot that plays at random, but stays silent on its `silent` decisions (counted from 1 over
    all its matches: timeouts) and answers its `wrong` ones with an action that is not legal now
    (illegal) or no action at all (invalid), taking turns; a few faults, so its matches stay short."""
    asked = itertools.count(1)
    mistakes = itertools.count()
    play = eager(random.Random(7))

    def choose(request: bot_pb2.DecisionRequest) -> int | None:
        number = next(asked)
        if number in silent:
            return None
        if number in wrong:
            legal = {action.id for action in request.legal_actions}
            return (KEEP.id if KEEP.id not in legal else DRAW.id) if next(mistakes) % 2 else 10**6
        return play(request)

    return choose


def asked_decisions(finished: control_pb2.FinishedMatch) -> int:
    """The decisions the server asked in a recorded match: its actions replayed, counting those it asks
    for (`must_ask`; no bot said ask_single, no seat forfeited)."""
    match = new_match(
        codec.rules_from(finished.rules, len(finished.result.bots)), random.Random(finished.seed)
    )
    asked = 0
    for action_id in finished.actions:
        asked += must_ask(match, legal_actions(match))
        apply(match, action_from_id(action_id))
    return asked


def test_a_tournament_moves_each_metric_by_what_the_records_say(
    redis_prefix: tuple[redis.Redis, str], tmp_path: Path
) -> None:
    client, prefix = redis_prefix
    token = identity.create_control_token(client, prefix)
    server_metrics, worker_metrics = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    server = ServerProcess(prefix, tmp_path / "server.log", redis_url=REDIS_URL,
                           options=["--metrics", server_metrics]).start()  # fmt: skip
    worker = WorkerProcess(prefix, token, tmp_path / "worker.log", options=["--metrics", worker_metrics])
    bots: list[BackgroundBot] = []
    raw: list[TestBot] = []
    try:
        server_url, worker_url = f"http://{server_metrics}/metrics", f"http://{worker_metrics}/metrics"
        wait_until(lambda: answers(server_url), 30, "the server's /metrics")
        server_before = scrape(server_url)
        assert {"process_resident_memory_bytes", "uno_arena_server_decisions_total"} <= server_before.names()

        for name, bot in {"greedy": GreedyBot(), "rand": RandomBot(5)}.items():
            bots.append(BackgroundBot(bot, server.address, name, identity.register_bot(client, prefix, name),
                                      max_matches=4))  # fmt: skip
        raw.append(TestBot(server.address, "faulty", identity.register_bot(client, prefix, "faulty"),
                           policy=faulty(), max_matches=4))  # fmt: skip
        identity.register_bot(client, prefix, "ghost")  # registered, never connected: its matches fail
        for bot in bots:
            bot.wait_connected()
        raw[0].wait_for(raw[0].welcomed)
        intruder = TestBot(server.address, "intruder", "not-its-token")  # a refused Hello
        raw.append(intruder)
        intruder.wait_for(lambda: intruder.ended)
        connected = scrape(server_url)
        assert connected.value("uno_arena_server_bots_connected") == 3
        assert connected.value("uno_arena_server_hellos_refused_total", reason="token_refused") == (
            server_before.value("uno_arena_server_hellos_refused_total", reason="token_refused") + 1
        )

        app = create_app(web_redis_client(REDIS_URL), prefix)
        with serving(app) as web:
            web_before = scrape(f"{web}/metrics")
            worker.start()
            wait_until(lambda: answers(worker_url), 30, "the worker's /metrics")
            worker_before = scrape(worker_url)

            spec = spec_from_dict({
                "name": "metered", "bots": ["faulty", "greedy", "rand", "ghost"], "target": 60, "seed": 3,
                "server": server.address, "retries": {"attempts": 2, "backoff_s": [0]},
                "deadlines": {"decision_ms": 500, "max_strikes": 1000, "wait_for_bots_ms": 300},
            })  # fmt: skip
            tournament_id = lifecycle.create_checked(client, prefix, spec)
            assert lifecycle.start(client, prefix, tournament_id) == 6

            def over() -> bool:
                ended = {MatchState.DONE, MatchState.FAILED}
                return set(states(client, prefix, tournament_id).values()) <= ended

            wait_until(over, 180, "every match to be recorded or failed")
            records = match_records(client, prefix, tournament_id)
            failed = [i for i, s in states(client, prefix, tournament_id).items() if s is MatchState.FAILED]
            attempts = sum(int(n) for n in client.hvals(Keys(prefix, tournament_id).attempts))
            assert len(records) == 3 and len(failed) == 3  # ghost's three, each tried twice
            assert all("ghost" not in r.bots for r in records) and not any(r.forfeited for r in records)

            # the worker: each job counted once its horse exited, then the leaderboard's refresh of each match
            def worker_done() -> Scrape | None:
                now = scrape(worker_url)
                runs = now.value("uno_arena_worker_job_duration_seconds_count", job_kind="match")
                refreshes = now.value("uno_arena_worker_job_duration_seconds_count", job_kind="leaderboard")
                return now if (runs, refreshes) == (attempts, len(records)) else None

            wait_until(lambda: worker_done() is not None, 60, "the worker to count every job")
            worker_after = worker_done()
            assert worker_after is not None
            page, missing = f"{web}/tournament/{tournament_id}", f"{web}/no/such/page"
            assert status_of(page)[0] == 200 and status_of(missing)[0] == 404
            code, body = status_of(f"{web}/healthz")
            assert code == 200 and json.loads(body) == {"status": "ok", "redis": "answers"}

            def web_counted() -> Scrape | None:  # a request is counted as its response ends, after its body
                now = scrape(f"{web}/metrics")
                healthz = now.value("uno_arena_web_requests_total", route="/healthz", status="200")
                return now if healthz == web_before.value("uno_arena_web_requests_total", route="/healthz",
                                                          status="200") + 1 else None  # fmt: skip

            wait_until(lambda: web_counted() is not None, 10, "the web view to count the requests")
            web_after = web_counted()
            assert web_after is not None
        server_after = scrape(server_url)

        def server_moved(name: str, **labels: str) -> float:
            return server_after.value(name, **labels) - server_before.value(name, **labels)

        def worker_moved(name: str, **labels: str) -> float:
            return worker_after.value(name, **labels) - worker_before.value(name, **labels)

        def web_moved(name: str, **labels: str) -> float:
            return web_after.value(name, **labels) - web_before.value(name, **labels)

        # the server: matches, the decisions the records hold, each fault the records hold, by kind
        loaded = [load_match(client, prefix, r.match_id) for r in records]
        decisions = sum(asked_decisions(match.finished) for match in loaded if match is not None)
        recorded = {kind.name: sum(getattr(seat, kind.name) for r in records for seat in r.faults)
                    for kind in fields(Faults)}  # fmt: skip
        # the faulty bot's 3 silences time out; on a loaded machine an answer of another bot may too
        assert recorded["timeout"] >= 3 and recorded["illegal"] == recorded["invalid"] == 2, recorded
        assert server_moved("uno_arena_server_matches_finished_total", end="target_reached") == len(records)
        assert server_moved("uno_arena_server_decisions_total") == decisions
        for kind, count in recorded.items():
            assert server_moved("uno_arena_server_faults_total", kind=kind) == count, kind
        # every decision asked was answered but the timed out ones: one round trip observed for each
        answered = server_moved("uno_arena_server_decision_round_trip_seconds_count")
        assert answered == decisions - recorded["timeout"]
        assert 0 < server_moved("uno_arena_server_decision_round_trip_seconds_sum") < answered * 0.2
        assert server_after.value("uno_arena_server_matches_running") == 0
        assert server_moved("uno_arena_server_outbox_cutoffs_total") == 0

        # the worker: matches played (recorded), failed for good, retried; each job's duration; no waits
        assert worker_moved("uno_arena_worker_matches_played_total") == len(records)
        assert worker_moved("uno_arena_worker_matches_failed_total") == len(failed)
        assert (
            worker_moved("uno_arena_worker_matches_retried_total")
            == attempts - len(records) - len(failed)
            == 3
        )
        assert worker_moved("uno_arena_worker_job_duration_seconds_count", job_kind="match") == attempts
        assert worker_moved("uno_arena_worker_job_duration_seconds_sum", job_kind="match") > 0
        assert worker_moved("uno_arena_worker_redis_wait_seconds_total") == 0
        assert worker_moved("uno_arena_worker_server_wait_seconds_total") == 0
        assert "process_cpu_seconds_total" in worker_after.names()

        # the web view: requests by route and status (the scrape before counted too)
        route = "/tournament/<tournament_id>"
        assert web_moved("uno_arena_web_requests_total", route=route, status="200") == 1
        assert web_moved("uno_arena_web_request_duration_seconds_count", route=route) == 1
        assert web_moved("uno_arena_web_requests_total", route="unmatched", status="404") == 1
        assert web_moved("uno_arena_web_requests_total", route="/healthz", status="200") == 1
        assert web_moved("uno_arena_web_requests_total", route="/metrics", status="200") >= 1
        assert web_after.value("uno_arena_web_live_streams_open") == 0
    finally:
        for bot in bots:
            bot.stop()
        for each in raw:
            each.close()
        worker.stop()
        server.stop()


def test_a_work_horse_killed_mid_match_is_counted_by_the_worker_process(
    match_server: RunningServer, tmp_path: Path
) -> None:
    """A horse that dies reports nothing: RQ handles its failure in the worker process, which counts the
    attempt as retried there; the retry plays the match (attached to it on the server) and counts it."""
    client, prefix = match_server.redis, match_server.prefix
    bots = connect_bots(match_server, {"slow1": SlowGreedyBot(), "slow2": SlowGreedyBot()})
    address = f"127.0.0.1:{free_port()}"
    worker = WorkerProcess(prefix, match_server.control_token, tmp_path / "worker.log",
                           options=["--metrics", address])  # fmt: skip
    try:
        worker.start()
        url = f"http://{address}/metrics"
        wait_until(lambda: answers(url), 30, "the worker's /metrics")
        spec = spec_from_dict({"name": "killed", "bots": ["slow1", "slow2"], "target": 300, "seed": 1,
                               "server": match_server.address,
                               "retries": {"attempts": 3, "backoff_s": [0]}})  # fmt: skip
        tournament_id = lifecycle.create_checked(client, prefix, spec)
        lifecycle.start(client, prefix, tournament_id)
        wait_until(lambda: bool(tuple(match_server.arena.running)), 60, "the match to start on the server")
        assert worker.process is not None
        horses = descendants(worker.process.pid)
        assert horses, "no work horse"
        for pid in horses:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

        wait_until(lambda: finished(match_server, tournament_id), 120, "the match to be recorded")
        wait_until(lambda: scrape(url).value("uno_arena_worker_matches_played_total") == 1, 30, "it counted")
        counted = scrape(url)
        assert counted.value("uno_arena_worker_matches_retried_total") == 1  # counted in the worker process
        assert counted.value("uno_arena_worker_matches_failed_total") == 0
        assert counted.value("uno_arena_worker_job_duration_seconds_count", job_kind="match") >= 2
        assert worker.alive, worker.output()
    finally:
        worker.stop()
        for bot in bots:
            bot.stop()


def test_play_match_is_the_job_the_worker_counts_as_a_match() -> None:
    assert f"{play_match.__module__}.{play_match.__qualname__}" == MATCH_JOB


def test_the_web_view_counts_its_live_streams_open(redis_prefix: tuple[redis.Redis, str]) -> None:
    client, prefix = redis_prefix
    feed = LiveFeed(client, Keys(prefix, "feed"), 0, ["a", "b"])
    feed.start()  # a running match's feed, as a worker writes it
    with serving(create_app(client, prefix)) as web:
        assert scrape(f"{web}/metrics").value("uno_arena_web_live_streams_open") == 0
        stream = urllib.request.urlopen(f"{web}/match/feed-m00000/events", timeout=10)
        try:
            assert stream.readline() == b"retry: 1000\n"  # the stream is open
            assert scrape(f"{web}/metrics").value("uno_arena_web_live_streams_open") == 1
        finally:
            stream.close()
        # the server notices the client left at its next write (within the stream's 1 s wait on Redis)
        wait_until(lambda: scrape(f"{web}/metrics").value("uno_arena_web_live_streams_open") == 0, 10,
                   "the closed stream to be given back")  # fmt: skip


def probe(redis_url: str, prefix: str, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["worker", "health", "--redis-url", redis_url, "--key-prefix", prefix,
                                      *options])  # fmt: skip
    return result.exit_code, result.output


def test_healthz_and_the_workers_probe_follow_redis_down_and_back(tmp_path: Path) -> None:
    """A Redis of the test's own (never the shared one) is killed and started again from its append-only
    file: the web view's /healthz and `uno-arena worker health` say so, and recover without a restart:
    the worker heartbeats again (a heartbeat newer than the restart, not the one the file restored).
    Then the worker is killed, and the probe turns unhealthy once its last heartbeat is older than
    `--max-age`."""
    own = RedisServer(tmp_path / "redis").start()
    prefix = "probed"
    worker = WorkerProcess(prefix, "a-control-token", tmp_path / "worker.log", redis_url=own.url,
                           options=["--name", "probed-worker"])  # fmt: skip
    try:
        worker.start()
        assert probe(own.url, prefix, "--name", "nobody")[0] == 1  # before it registers, and a wrong name
        wait_until(lambda: probe(own.url, prefix)[0] == 0, 30, "the worker's heartbeat")
        code, said = probe(own.url, prefix, "--name", "probed-worker")
        assert code == 0 and said.startswith("probed-worker: healthy: heartbeat "), said
        code, said = probe(own.url, prefix, "--name", "nobody")
        assert code == 1 and "nobody: unhealthy: no such worker in Redis" in said, said
        code, said = probe(own.url, prefix, "--max-age", "0.000001")
        assert code == 1 and "older than 1e-06 s" in said, said
        assert probe(own.url, "elsewhere")[0] == 1  # no worker on that prefix's queue

        with serving(create_app(web_redis_client(own.url), prefix)) as web:
            code, body = status_of(f"{web}/healthz")
            assert (code, json.loads(body)) == (200, {"status": "ok", "redis": "answers"})

            own.kill()
            code, body = status_of(f"{web}/healthz")
            assert code == 503, body
            answer = json.loads(body)
            reason = answer["reason"]
            assert answer["status"] == "unavailable" and f"127.0.0.1:{own.port}" in reason, answer
            assert "does not answer" in reason and "Connection refused" in reason, answer
            code, said = probe(own.url, prefix)
            assert code == 3 and "unhealthy: Redis at" in said and "does not answer" in said, said

            own.start()  # from its append-only file, on the same port: the worker's heartbeat is there
            back = time.time()
            wait_until(lambda: status_of(f"{web}/healthz")[0] == 200, 30, "/healthz to be healthy again")
            code, said = probe(own.url, prefix, "--name", "probed-worker")
            assert code == 0 and "healthy" in said, said  # the heartbeat the file restored
        # A job on its queue (a leaderboard refresh of no tournament: it writes nothing) makes the worker
        # heartbeat as it takes it: a heartbeat since Redis came back is the worker alive again.
        restarted = own.client()
        queue = Queue(queue_name(prefix), connection=restarted)
        queue.enqueue(REFRESH_JOB, prefix, "none", 1.0, result_ttl=0)
        restarted.close()

        def heartbeat_since_back() -> bool:
            since = f"{time.time() - back:.3f}"
            return probe(own.url, prefix, "--name", "probed-worker", "--max-age", since)[0] == 0

        wait_until(heartbeat_since_back, 30, "a heartbeat of the worker since Redis came back")
        assert worker.alive, worker.output()

        worker.kill()  # SIGKILL: its hash stays in Redis (for up to two minutes) without a heartbeat
        wait_until(lambda: probe(own.url, prefix, "--name", "probed-worker", "--max-age", "1")[0] == 1, 30,
                   "the probe to call the killed worker unhealthy")  # fmt: skip
        code, said = probe(own.url, prefix, "--name", "probed-worker", "--max-age", "1")
        assert code == 1 and "probed-worker: unhealthy: heartbeat" in said and "older than 1 s" in said, said
    finally:
        worker.stop()
        own.stop()


def test_the_workers_probe_counts_no_worker_gone_from_redis(redis_prefix: tuple[redis.Redis, str],
                                                            tmp_path: Path) -> None:  # fmt: skip
    """A worker killed stays on its queue's list of workers after RQ dropped its hash, until some worker's
    maintenance cleans the list (up to ten minutes): the probe of the queue names it apart and judges the
    live workers alone."""
    client, prefix = redis_prefix
    worker = WorkerProcess(prefix, "a-control-token", tmp_path / "worker.log",
                           options=["--name", f"{prefix}-alive"])  # fmt: skip
    try:
        worker.start()
        # idle: past its first loop's maintenance, which cleans the queue's list (the next, in 10 minutes)
        wait_until(lambda: "(idle)" in probe(REDIS_URL, prefix)[1], 30, "the worker to wait for jobs")
        dead = f"{prefix}-killed"  # what a killed worker leaves: its name listed, its hash expired
        client.sadd(f"rq:workers:{queue_name(prefix)}", f"{Worker.redis_worker_namespace_prefix}{dead}")
        code, said = probe(REDIS_URL, prefix)
        assert code == 0, said
        assert f"{prefix}-alive: healthy: heartbeat " in said, said
        assert f"{dead}: gone: still listed on the queue" in said and "not counted" in said, said
        worker.kill()
        client.delete(f"{Worker.redis_worker_namespace_prefix}{prefix}-alive")  # as RQ's expiry does, later
        code, said = probe(REDIS_URL, prefix)  # every listed worker gone: none is registered
        assert code == 1 and f"unhealthy: no worker is registered on queue {queue_name(prefix)}" in said, said
    finally:
        worker.stop()


def test_every_labelled_series_the_docs_name_exists_from_the_start() -> None:
    """Each label value the docs' metric tables list (`kind`: `timeout`, ...) is a series of a fresh
    component's registry, at 0, so that `rate()` sees the first event."""
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = operations[operations.index("## Metrics and health") :]
    exposed: dict[str, Scrape] = {}  # each metric's name -> a scrape of its component, fresh
    for metrics in (ServerMetrics(), WorkerMetrics(), WebMetrics()):
        fresh = parsed(generate_latest(metrics.registry).decode())
        exposed.update(dict.fromkeys(exposed_names(metrics.registry), fresh))
    listed = 0
    rows = re.findall(r"^\| `(uno_arena_\w+)` \| (\w+) \| ([^|]*) \|", section, re.MULTILINE)
    for name, kind, labels in rows:
        for label, values in re.findall(r"`(\w+)`: ((?:`[^`]+`(?:, )?)+)", labels):
            for value in re.findall(r"`([^`]+)`", values):
                series = f"{name}_count" if kind == "histogram" else name
                assert exposed[name].has(series, **{label: value}), (
                    f"{series}{{{label}={value!r}}}: not exposed"
                )
                listed += 1
    assert listed >= 5 + 7 + 4 + 3  # the fault kinds, the refusal reasons, the match ends, the jobs


ROOT = Path(__file__).resolve().parent.parent


def exposed_names(registry: CollectorRegistry | None = None) -> dict[str, str]:
    """Every uno_arena metric of the three components (or of one `registry`), by the name a scrape shows
    (a counter's with `_total`) -> its type."""
    every = (ServerMetrics(), WorkerMetrics(), WebMetrics())
    registries = [registry] if registry is not None else [metrics.registry for metrics in every]
    names = {}
    for each in registries:
        for family in each.collect():
            if family.name.startswith("uno_arena_"):
                names[family.name + ("_total" if family.type == "counter" else "")] = family.type
    return names


def named_in(text: str) -> set[str]:
    """The metric names a text uses, a histogram's series (`_bucket`, `_sum`, `_count`) by the histogram's."""
    found = set(re.findall(r"\buno_arena_[a-z_]+[a-z]", text))
    return {re.sub(r"_(bucket|sum|count)$", "", name) for name in found}


def test_the_docs_list_every_metric_and_the_dashboard_uses_real_ones() -> None:
    names = exposed_names()
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = operations[operations.index("## Metrics and health") :]
    for name, kind in names.items():
        assert f"| `{name}` | {kind} |" in section, f"docs/operations.md does not list {name} ({kind})"
    assert named_in(section) <= set(names), named_in(section) - set(names)

    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text(encoding="utf-8"))
    assert dashboard["title"] == "uno-arena" and dashboard["uid"]
    expressions = [t["expr"] for p in dashboard["panels"] if p["type"] != "row" for t in p["targets"]]
    used = set().union(*(named_in(expr) for expr in expressions))
    assert used <= set(names), used - set(names)
    assert {
        n for n in names if n.startswith(("uno_arena_server", "uno_arena_worker", "uno_arena_web"))
    } == used
    assert all(p["datasource"] == {"type": "prometheus", "uid": "${datasource}"} for p in dashboard["panels"]
               if p["type"] != "row")  # fmt: skip
    assert "docs/grafana-dashboard.json" in section
