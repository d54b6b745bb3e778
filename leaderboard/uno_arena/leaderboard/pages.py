"""The tournaments' pages: the overview, one tournament, and the JSON API of the standings."""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from flask import Blueprint, Response, abort, jsonify, render_template

from uno_arena.leaderboard import board
from uno_arena.leaderboard.context import RECENT, context
from uno_arena.records import ruleset
from uno_arena.records.match import MatchRecord, match_records
from uno_arena.records.tournament import MatchState, TournamentError, exists, list_ids, load, progress
from uno_arena.rules import RulesConfig

log = logging.getLogger(__name__)
blueprint = Blueprint("pages", __name__)


@blueprint.get("/")
def overview() -> str:
    web = context()
    return _page(web.client, web.prefix, None, web.refresh)


@blueprint.get("/tournament/<tournament_id>")
def tournament(tournament_id: str) -> str:
    web = context()
    if not exists(web.client, web.prefix, tournament_id):
        abort(404, f"no tournament {tournament_id!r}")
    return _page(web.client, web.prefix, tournament_id, web.refresh)


@blueprint.get("/api/leaderboard/<scope>")
def api(scope: str) -> Response:
    client, prefix = context().client, context().prefix
    if scope != board.ALL and not exists(client, prefix, scope):
        abort(404, f"no tournament {scope!r}")
    values = board.current(client, prefix, None if scope == board.ALL else scope).to_dict()
    rules = _rules(client, prefix, scope) if scope != board.ALL else None
    if rules is not None:  # one tournament: the rules every match of it was played under
        values["rules"] = ruleset.as_dict(rules)
    return jsonify(values)


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
