"""The read-only web view: standings, head to head, tournament progress and rules, recent matches, replays.

A small Flask app over the same Redis the workers write; pages refresh themselves. `uno-arena web
--listen HOST:PORT` serves it on waitress (`WebServer`): a bounded pool of threads runs the app, and
connections are read by one event loop, so clients that send slowly, or never finish their headers,
hold a connection (up to `connection_limit`, closed after `channel_timeout_s`) but never a thread.

An unknown or malformed tournament or match id is a 404; while Redis does not answer, pages are a
503 saying so that reloads itself, and the JSON API a 503 with a JSON error.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from flask import Flask, Response, abort, jsonify, render_template, request
from redis.backoff import NoBackoff
from redis.retry import Retry
from waitress import wasyncore
from waitress.server import create_server
from waitress.trigger import trigger
from werkzeug.exceptions import HTTPException

from uno_arena.leaderboard import board
from uno_arena.records import ruleset
from uno_arena.records.match import MatchRecord, RecordedMatch, load_match, match_records
from uno_arena.records.replay import ReplayFileError, export, lines, read_replay_file, replay_path_in
from uno_arena.records.tournament import (
    MatchState,
    TournamentError,
    exists,
    is_match_id,
    list_ids,
    load,
    progress,
)
from uno_arena.rules import RulesConfig

RECENT = 20
REDIS_TIMEOUT_S = 5  # a Redis that does not answer within it makes a 503 page, not a request that hangs
log = logging.getLogger(__name__)


def redis_client(url: str) -> redis.Redis:
    """The web view's client: it fails fast (one immediate retry, for a connection a restarted Redis
    dropped), so while Redis is down each page says so at once, and it reconnects by itself."""
    return redis.Redis.from_url(url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S,
                                retry=Retry(NoBackoff(), 1))  # fmt: skip


def redis_address(client: redis.Redis) -> str:
    """Where the client's Redis is, for messages (never its password)."""
    where = client.connection_pool.connection_kwargs
    if "path" in where:
        return f"unix://{where['path']}?db={where.get('db', 0)}"
    return f"redis://{where.get('host', 'localhost')}:{where.get('port', 6379)}/{where.get('db', 0)}"


def create_app(client: redis.Redis, prefix: str, refresh: int = 5, replays: Path | None = None) -> Flask:
    """`replays`: a folder of replay files (`uno-arena bot play --replay`, `match play`), served at
    /match/<id> when Redis holds no match of that id."""
    app = Flask(__name__)  # templates from uno_arena/leaderboard/templates/
    where = redis_address(client)

    @app.get("/")
    def overview() -> str:
        return _page(client, prefix, None, refresh)

    @app.get("/tournament/<tournament_id>")
    def tournament(tournament_id: str) -> str:
        if not exists(client, prefix, tournament_id):
            abort(404, f"no tournament {tournament_id!r}")
        return _page(client, prefix, tournament_id, refresh)

    @app.get("/match/<match_id>.json")
    def match_json(match_id: str) -> Response:
        return jsonify(export(_match(client, prefix, match_id, replays)))

    @app.get("/match/<match_id>")
    def match(match_id: str) -> str:
        text = "\n".join(lines(_match(client, prefix, match_id, replays)))
        return render_template("replay.html", match_id=match_id, text=text)

    @app.get("/api/leaderboard/<scope>")
    def api(scope: str) -> Response:
        if scope != board.ALL and not exists(client, prefix, scope):
            abort(404, f"no tournament {scope!r}")
        values = board.current(client, prefix, None if scope == board.ALL else scope).to_dict()
        rules = _rules(client, prefix, scope) if scope != board.ALL else None
        if rules is not None:  # one tournament: the rules every match of it was played under
            values["rules"] = ruleset.as_dict(rules)
        return jsonify(values)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> HTTPException | tuple[Response, int]:
        if _wants_json():  # the API's errors, and a .json document's, are JSON too
            return jsonify(error=error.description), error.code or 500
        return error

    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    def redis_down(error: redis.RedisError) -> tuple[Response | str, int, dict[str, str]]:
        log.warning("%s %s: Redis at %s is not answering: %s", request.method, request.path, where, error)
        message = f"the leaderboard's Redis at {where} is not answering"
        retry = {"Retry-After": str(refresh)}
        if _wants_json():
            return jsonify(error=message, retry_after_s=refresh), 503, retry
        page = render_template("unavailable.html", message=message, refresh=refresh,
                               updated=time.strftime("%H:%M:%S"))  # fmt: skip
        return page, 503, retry

    return app


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.path.endswith(".json")


def _match(client: redis.Redis, prefix: str, match_id: str, replays: Path | None) -> RecordedMatch:
    found = load_match(client, prefix, match_id) if is_match_id(match_id) else None
    path = replay_path_in(replays, match_id) if found is None and replays is not None else None
    if path is not None:
        try:
            found = read_replay_file(path)
        except ReplayFileError as error:
            log.warning("%s", error)
            abort(404, f"the replay file of {match_id!r} is not readable")
    if found is None:
        abort(404, f"no recorded match {match_id!r}")
    return found


def _page(client: redis.Redis, prefix: str, tournament_id: str | None, refresh: int) -> str:
    ids = list_ids(client, prefix)
    records = match_records(client, prefix, tournament_id)
    table = board.current(client, prefix, tournament_id, records)
    rules = _rules(client, prefix, tournament_id) if tournament_id else None
    return render_template(
        "page.html",
        title=f"tournament {tournament_id}" if tournament_id else "all tournaments",
        rules=ruleset.summary(rules) if rules is not None else None,
        refresh=refresh,
        table=table if table.standings else None,
        bots=table.bots,
        tournaments=[row for t in ids if (row := _progress_row(client, prefix, t)) is not None],
        recent=[_recent_row(r) for r in reversed(records[-RECENT:])],
        updated=time.strftime("%H:%M:%S"),
    )


def _rules(client: redis.Redis, prefix: str, tournament_id: str) -> RulesConfig | None:
    """The tournament's rules; None if it was deleted meanwhile or its record is unreadable."""
    try:
        return load(client, prefix, tournament_id).spec.rules
    except TournamentError:
        return None
    except (ValueError, KeyError, TypeError) as error:
        log.warning("tournament %s: unreadable record (%r); its rules are not shown", tournament_id, error)
        return None


def _progress_row(client: redis.Redis, prefix: str, tournament_id: str) -> dict[str, Any] | None:
    """The tournament's row; None if it was deleted meanwhile, and a row saying so if its record is
    unreadable (one bad record must not take the whole page down)."""
    try:
        state = progress(client, prefix, tournament_id)
    except TournamentError:
        return None
    except (ValueError, KeyError, TypeError) as error:
        log.warning("tournament %s: unreadable record (%r); shown as such", tournament_id, error)
        return {"id": tournament_id, "status": "unreadable (see the web view's log)", "done": 0,
                "matches": 0, "eta": "-", "running": 0, "queued": 0, "failed": 0, "rules": "-"}  # fmt: skip
    t = state.tournament
    eta = f"{state.eta_s / 60:.1f} min" if state.eta_s is not None else "-"
    return {"id": t.id, "status": str(t.status), "done": t.done, "matches": t.matches, "eta": eta,
            "running": t.states[MatchState.RUNNING], "queued": t.states[MatchState.QUEUED],
            "failed": t.states[MatchState.FAILED], "rules": ruleset.summary(t.spec.rules)}  # fmt: skip


def _recent_row(record: MatchRecord) -> dict[str, Any]:
    winners = ", ".join(record.bots[w] for w in record.winners) or "-"
    return {"match_id": record.match_id, "bots": record.bots, "winner": winners,
            "totals": record.totals, "reason": record.reason_name}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """How much the web view's server takes on; `uno-arena web` has a flag for each (docs/leaderboard.md)."""

    threads: int = 8  # requests run at once; more wait, read and buffered, in the event loop
    connection_limit: int = 1000  # open connections; past it new ones wait in the listen backlog
    channel_timeout_s: int = 30  # an idle connection (a request never finished, too) is closed after it


class WebServer:
    """The app on waitress at HOST:PORT (port 0: any free port): `serve` runs until `stop` or Ctrl-C."""

    def __init__(self, app: Flask, host: str, port: int, limits: ServerLimits = ServerLimits()) -> None:
        self.limits = limits
        self._sockets: dict[int, Any] = {}  # waitress's socket map: the listeners and every connection
        self._server = create_server(
            app,
            map=self._sockets,
            host=host,
            port=port,
            threads=limits.threads,
            connection_limit=limits.connection_limit,
            channel_timeout=limits.channel_timeout_s,
            cleanup_interval=max(1, min(30, limits.channel_timeout_s // 2)),  # how often idle ones are closed
            asyncore_use_poll=True,  # select() cannot watch a descriptor above 1023
            ident="uno-arena",
        )
        # runs `stop`'s closing in the event loop's own thread (the stubs type its map as str-keyed)
        self._wake = trigger(self._sockets)  # type: ignore[arg-type]

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """(host, port) of each socket listened on: one per address family the host resolves to."""
        listening = getattr(self._server, "effective_listen", None)
        if listening is not None:
            return [(str(host), int(port)) for host, port in listening]
        return [(str(self._server.effective_host), int(self._server.effective_port))]  # type: ignore[union-attr]

    @property
    def urls(self) -> list[str]:
        return [f"http://[{h}]:{p}/" if ":" in h else f"http://{h}:{p}/" for h, p in self.addresses]

    def serve(self) -> None:
        """Serve until `stop` (from another thread) or Ctrl-C; then every connection is closed."""
        try:
            self._server.run()  # returns once no socket is left open, or on Ctrl-C
        finally:
            self._server.task_dispatcher.shutdown()
            wasyncore.close_all(self._sockets)

    def stop(self) -> None:
        """Close the listeners and every connection; `serve` then returns."""
        self._wake.pull_trigger(lambda *_: wasyncore.close_all(self._sockets))
