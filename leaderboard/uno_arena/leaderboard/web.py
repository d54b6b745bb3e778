"""The read-only web view: standings, head to head, tournament progress, recent matches and replays.

A small Flask app over the same Redis the workers write; pages refresh
themselves. `uno-arena web --listen HOST:PORT` serves it.
"""

from __future__ import annotations

import time
from typing import Any

import redis
from flask import Flask, Response, abort, jsonify, render_template

from uno_arena.leaderboard import board
from uno_arena.records.match import MatchRecord, RecordedMatch, load_match, match_records
from uno_arena.records.replay import export, lines
from uno_arena.records.tournament import MatchState, list_ids, progress

RECENT = 20


def create_app(client: redis.Redis, prefix: str, refresh: int = 5) -> Flask:
    app = Flask(__name__)  # templates from uno_arena/leaderboard/templates/

    @app.get("/")
    def overview() -> str:
        return _page(client, prefix, None, refresh)

    @app.get("/tournament/<tournament_id>")
    def tournament(tournament_id: str) -> str:
        if tournament_id not in list_ids(client, prefix):
            abort(404, f"no tournament {tournament_id}")
        return _page(client, prefix, tournament_id, refresh)

    @app.get("/match/<match_id>.json")
    def match_json(match_id: str) -> Response:
        return jsonify(export(_match(client, prefix, match_id)))

    @app.get("/match/<match_id>")
    def match(match_id: str) -> str:
        text = "\n".join(lines(_match(client, prefix, match_id)))
        return render_template("replay.html", match_id=match_id, text=text)

    @app.get("/api/leaderboard/<scope>")
    def api(scope: str) -> Response:
        return jsonify(board.current(client, prefix, None if scope == board.ALL else scope).to_dict())

    return app


def _match(client: redis.Redis, prefix: str, match_id: str) -> RecordedMatch:
    found = load_match(client, prefix, match_id)
    if found is None:
        abort(404, f"no recorded match {match_id}")
    return found


def _page(client: redis.Redis, prefix: str, tournament_id: str | None, refresh: int) -> str:
    ids = list_ids(client, prefix)
    records = match_records(client, prefix, tournament_id)
    table = board.current(client, prefix, tournament_id, records)
    return render_template(
        "page.html",
        title=f"tournament {tournament_id}" if tournament_id else "all tournaments",
        refresh=refresh,
        table=table if table.standings else None,
        bots=table.bots,
        tournaments=[_progress_row(client, prefix, t) for t in ids],
        recent=[_recent_row(r) for r in reversed(records[-RECENT:])],
        updated=time.strftime("%H:%M:%S"),
    )


def _progress_row(client: redis.Redis, prefix: str, tournament_id: str) -> dict[str, Any]:
    state = progress(client, prefix, tournament_id)
    t = state.tournament
    eta = f"{state.eta_s / 60:.1f} min" if state.eta_s is not None else "-"
    return {"id": t.id, "status": str(t.status), "done": t.done, "matches": t.matches, "eta": eta,
            "running": t.states[MatchState.RUNNING], "queued": t.states[MatchState.QUEUED],
            "failed": t.states[MatchState.FAILED]}  # fmt: skip


def _recent_row(record: MatchRecord) -> dict[str, Any]:
    winners = ", ".join(record.bots[w] for w in record.winners) or "-"
    return {"match_id": record.match_id, "bots": record.bots, "winner": winners,
            "totals": record.totals, "reason": record.reason_name}  # fmt: skip
