"""The platform's pages: the index of tournaments (paged), one tournament, one bot, and their JSON.

Each page is made of parts (progress, standings, ...), each rendered by its own template into a
`<section>` that carries a digest of its HTML. While what a page shows can still change (its tournament,
a tournament on it, or one its bot plays in is created or running, or a match of it is running; for the
index, whose standings are over all tournaments, any tournament at all), the page carries `data-poll`,
its own address: static/pages.js fetches the page again every `refresh` seconds and replaces only the
parts whose digest changed, and stops once the page it fetched no longer polls. A page of a finished
tournament never polls at all.

The JSON (`/api/...`) is data only, never HTML: what the pages show, as values, for scripts. A
tournament's JSON pages through every match of it (`?offset=&limit=&state=`, `next` giving the next
page's address), at most `MATCHES_MAX` a page.

Sizes a client controls are bounded: a page number past the last page is a 404, a bot name is at most
63 characters (a registered name's shape), and every list is capped (PAGE_SIZE tournaments, RECENT
matches, charts.MAX_POINTS points, MATCHES_MAX matches a page of a tournament's JSON).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import redis
from flask import Blueprint, Response, abort, jsonify, render_template, request, url_for
from markupsafe import Markup

from uno_arena.leaderboard import board, history
from uno_arena.leaderboard.ratings import Rating, initial, order_key
from uno_arena.records import live, ruleset
from uno_arena.records.identity import NAME, bot_key
from uno_arena.records.match import MAX_PAGE, MatchRecord, match_records, tournament_matches
from uno_arena.records.tournament import (
    Keys,
    MatchState,
    Progress,
    TournamentError,
    TournamentStatus,
    exists,
    list_ids,
    load,
    progress,
    text,
)
from uno_arena.rules import RulesConfig
from uno_arena.web import charts
from uno_arena.web.context import RECENT, context

log = logging.getLogger(__name__)
T = TypeVar("T")
blueprint = Blueprint("pages", __name__)

PAGE_SIZE = 20  # tournaments per page of the index, newest first
MATCHES_DEFAULT = 100  # matches per page of a tournament's JSON, unless `limit` says
MATCHES_MAX = MAX_PAGE  # ... and at most
_LIVE_STATUSES = frozenset({TournamentStatus.CREATED, TournamentStatus.RUNNING})


@dataclass(frozen=True, slots=True)
class Part:
    """A part of a page: its HTML and a digest of it, which the page's script compares."""

    html: Markup
    digest: str


def _part(template: str, **values: Any) -> Part:
    html = render_template(template, **values)
    return Part(Markup(html), hashlib.sha1(html.encode()).hexdigest()[:16])


@dataclass(frozen=True, slots=True)
class View:
    """What a page shows: its parts (HTML) for the page, its values for the JSON."""

    title: str
    parts: dict[str, Part]  # empty for the JSON, which never holds HTML
    live: bool  # whether it can still change: its page polls while it is
    poll: str  # the page's own address, which its script fetches again while it is live
    data: dict[str, Any]  # the JSON's values
    data_url: str = ""  # the address of the page's JSON, which the page links (rel="alternate")

    def json(self) -> Response:
        return jsonify({**self.data, "live": self.live})

    def page(self, template: str, **values: Any) -> str:
        web = context()
        return render_template(template, view=self, parts=self.parts, refresh=web.refresh,
                               updated=time.strftime("%H:%M:%S"), **values)  # fmt: skip


# --- the index -------------------------------------------------------------------------------------


@blueprint.get("/")
def overview() -> str:
    return _index_view(_page_number(), html=True).page("index.html")


@blueprint.get("/api/tournaments")
def overview_json() -> Response:
    return _index_view(_page_number(), html=False).json()


def _page_number() -> int:
    raw = request.args.get("page", "1")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 6 and int(raw) >= 1):
        abort(400, f"page: expected a page number from 1, got {raw[:20]!r}")
    return int(raw)


def _index_view(page: int, html: bool) -> View:
    web = context()
    ids = list_ids(web.store, web.prefix)[::-1]  # newest first
    pages = max(1, -(-len(ids) // PAGE_SIZE))
    if page > pages:
        abort(404, f"no page {page} (there are {pages})")
    shown = ids[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    rows = [row for t in shown if (row := _progress_row(web.store, web.prefix, t)) is not None]
    parts = {}
    if html:
        table = board.current(web.store, web.prefix, None)
        parts = {
            "tournaments": _part("_tournaments.html", rows=rows, page=page, pages=pages, total=len(ids)),
            "standings": _part("_standings.html", table=table if table.standings else None),
        }
    # its standings are over every tournament: it can change while any of them can, listed here or not
    live = any(row["live"] for row in rows) or _any_live(web.store, web.prefix, ids)
    data = {"page": page, "pages": pages, "total": len(ids), "tournaments": rows}
    return View("all tournaments", parts, live, url_for("pages.overview", page=page), data,
                url_for("pages.overview_json", page=page))  # fmt: skip


# --- one tournament --------------------------------------------------------------------------------


@blueprint.get("/tournament/<tournament_id>")
def tournament(tournament_id: str) -> str:
    return _tournament_view(tournament_id).page("tournament.html", tournament_id=tournament_id)


@blueprint.get("/api/tournament/<tournament_id>")
def tournament_json(tournament_id: str) -> Response:
    """The tournament as data: its spec, progress, running matches, leaderboard, recent matches, and a
    page of its matches by index (`?offset=0&limit=100&state=done`; `matches.next`: the next page)."""
    web = context()
    client, prefix = web.store, web.prefix
    state = _progress_of(tournament_id)
    offset, limit, only = _match_page()
    t = state.tournament
    records = match_records(client, prefix, tournament_id)
    table = board.current(client, prefix, tournament_id, records)
    matches, total = tournament_matches(client, prefix, tournament_id, offset, limit, only)
    after = offset + len(matches)
    more: dict[str, Any] = {"offset": after, "limit": limit, **({"state": only.value} if only else {})}
    following = (
        url_for("pages.tournament_json", tournament_id=tournament_id, **more) if after < total else None
    )
    return jsonify({
        "tournament": tournament_id, "name": t.spec.name, "status": str(t.status), "live": _live(state),
        "rules": ruleset.summary(t.spec.rules), "spec": t.spec.to_dict(), "progress": state.to_dict(),
        "running": [m.to_dict() for m in live.running(client, prefix, tournament_id)],
        "leaderboard": table.to_dict(),
        "recent": [_recent_data(r) for r in newest(records, lambda r: r)],
        "matches": {"offset": offset, "limit": limit, "state": only.value if only else None, "total": total,
                    "next": following, "items": [m.to_dict() for m in matches]},
    })  # fmt: skip


def _match_page() -> tuple[int, int, MatchState | None]:
    """`offset`, `limit` and `state` of a tournament's JSON: a 400 saying what is wrong with any."""
    offset = _count("offset", "0", 0, 10**9)
    limit = _count("limit", str(MATCHES_DEFAULT), 1, MATCHES_MAX)
    raw = request.args.get("state")
    if raw is not None and raw not in {s.value for s in MatchState}:
        abort(400, f"state: expected one of {', '.join(s.value for s in MatchState)}, got {raw[:20]!r}")
    return offset, limit, MatchState(raw) if raw is not None else None


def _count(name: str, default: str, low: int, high: int) -> int:
    raw = request.args.get(name, default)
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10 and low <= int(raw) <= high):
        abort(400, f"{name}: expected a whole number from {low} to {high}, got {raw[:20]!r}")
    return int(raw)


def _progress_of(tournament_id: str) -> Progress:
    """The tournament's progress: a 404 for none, a 500 (and a line in the log) for an unreadable one."""
    web = context()
    client, prefix = web.store, web.prefix
    if not exists(client, prefix, tournament_id):
        abort(404, f"no tournament {tournament_id!r}")
    try:
        return progress(client, prefix, tournament_id)
    except TournamentError:
        abort(404, f"no tournament {tournament_id!r}")
    except (ValueError, KeyError, TypeError) as error:
        log.warning("tournament %s: unreadable record (%r)", tournament_id, error,
                    extra={"tournament_id": tournament_id})  # fmt: skip
        abort(500, f"the record of tournament {tournament_id!r} is unreadable (see the web view's log)")


def _live(state: Progress) -> bool:
    """Whether the tournament's page can still change: created or running, or a match still running."""
    t = state.tournament
    return t.status in _LIVE_STATUSES or t.states[MatchState.RUNNING] > 0


def _tournament_view(tournament_id: str) -> View:
    web = context()
    client, prefix = web.store, web.prefix
    state = _progress_of(tournament_id)
    records = match_records(client, prefix, tournament_id)
    table = board.current(client, prefix, tournament_id, records)
    running = _running(client, prefix, tournament_id)
    recent = [_recent_row(r) for r in newest(records, lambda r: r)]
    spec = state.tournament.spec
    parts = {
        "spec": _part("_spec.html", spec=spec, rules=ruleset.summary(spec.rules), t=state.tournament),
        "progress": _part("_progress.html", p=_progress_values(state)),
        "running": _part("_running.html", running=running),
        "standings": _part("_standings.html", table=table if table.standings else None),
        "head-to-head": _part("_head_to_head.html", table=table if table.standings else None),
        "recent": _part("_recent.html", recent=recent),
    }
    poll = url_for("pages.tournament", tournament_id=tournament_id)
    data_url = url_for("pages.tournament_json", tournament_id=tournament_id)
    return View(f"tournament {tournament_id}", parts, _live(state), poll, {}, data_url)


def _running(client: redis.Redis, prefix: str, tournament_id: str) -> list[dict[str, Any]]:
    """The tournament's matches being played now with a live feed to follow (`records.live`, written by
    the workers): match id, bots by seat, index, and when it started."""
    return [{**match.to_dict(), "since": time.strftime("%H:%M:%S", time.localtime(match.started))}
            for match in live.running(client, prefix, tournament_id)]  # fmt: skip


def _progress_values(state: Progress) -> dict[str, Any]:
    t = state.tournament
    return {"status": str(t.status), "done": t.done, "matches": t.matches,
            "running": t.states[MatchState.RUNNING], "queued": t.states[MatchState.QUEUED],
            "failed": t.states[MatchState.FAILED], "cancelled": t.states[MatchState.CANCELLED],
            "eta": f"{state.eta_s / 60:.1f} min" if state.eta_s is not None else "-",
            "retry_waits": len(state.retries), "created": _when(t.created), "started": _when(t.started),
            "finished": _when(t.finished)}  # fmt: skip


def _when(unix: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(unix)) if unix else "-"


# --- one bot ---------------------------------------------------------------------------------------


@blueprint.get("/bot/<name>")
def bot(name: str) -> str:
    return _bot_view(name, html=True).page("bot.html", bot=name)


@blueprint.get("/api/bot/<name>")
def bot_json(name: str) -> Response:
    return _bot_view(name, html=False).json()


def _bot_view(name: str, html: bool) -> View:
    web = context()
    client, prefix = web.store, web.prefix
    if not NAME.fullmatch(name):  # also bounds its length: 63 characters
        abort(404, f"no bot {name[:80]!r}")
    records = match_records(client, prefix, None)
    played = history.played_by(records, name)
    if not played and not client.exists(bot_key(prefix, name)):
        abort(404, f"no bot {name!r}")
    points = history.rating_history(records, name)
    drawn = points[-charts.MAX_POINTS :]
    before = points[-len(drawn) - 1] if len(drawn) < len(points) else None  # the last point left out
    start = Rating(before.mu, before.sigma) if before is not None else initial()
    chart = charts.rating_chart(drawn, start, len(points) - len(drawn) + 1) if points else None
    table = board.current(client, prefix, None, records)
    row = next((r for r in table.standings if r.bot == name), None)
    opponents = history.opponents(played)
    faults = history.faults_by_kind(played)
    recent = [_played_row(m) for m in newest(played, lambda m: m.record)]
    tournaments = sorted({m.record.tournament for m in played})
    parts = {}
    if html:
        parts = {
            "summary": _part(
                "_bot_summary.html", row=row, last=points[-1] if points else None, tournaments=tournaments
            ),
            "rating": _part("_rating.html", chart=chart, drawn=len(drawn), total=len(points)),
            "opponents": _part("_opponents.html", opponents=opponents),
            "faults": _part("_faults.html", faults=faults, matches=len(played)),
            "matches": _part("_bot_matches.html", recent=recent),
        }
    data = {"bot": name, "standing": asdict(row) if row is not None else None, "tournaments": tournaments,
            "rating": [{"match_id": p.match_id, "mu": p.mu, "sigma": p.sigma,
                                     "ordinal": p.ordinal} for p in points[-charts.MAX_POINTS :]],
            "opponents": [{"opponent": o.opponent, "tables": o.tables, "score": o.score, "low": o.low,
                           "high": o.high} for o in opponents],
            "faults": faults, "recent": recent}  # fmt: skip
    live = _plays_in_a_live_tournament(client, prefix, name)
    return View(f"bot {name}", parts, live, url_for("pages.bot", name=name), data,
                url_for("pages.bot_json", name=name))  # fmt: skip


def newest(items: Iterable[T], record_of: Callable[[T], MatchRecord]) -> list[T]:
    """The `RECENT` items whose matches finished last, newest first: by finish time, not by match id
    (ids sort by tournament id, so the matches of a tournament named later would always come first)."""

    def when(item: T) -> tuple[float, str]:
        record = record_of(item)
        return (record.finished_at, order_key(record.match_id))

    return heapq.nlargest(RECENT, items, key=when)


def _any_live(client: redis.Redis, prefix: str, ids: list[str]) -> bool:
    """Whether any of the tournaments can still change the standings: created or running, or a match
    of it still running (a cancelled tournament's match being played out is recorded when it ends)."""
    with client.pipeline(transaction=False) as pipe:
        for tournament_id in ids:
            pipe.hget(Keys(prefix, tournament_id).tournament, "status")
        statuses = pipe.execute()
    if any(status is not None and text(status) in _LIVE_STATUSES for status in statuses):
        return True
    cancelled = [t for t, status in zip(ids, statuses, strict=True)
                 if status is not None and text(status) == TournamentStatus.CANCELLED]  # fmt: skip
    with client.pipeline(transaction=False) as pipe:
        for tournament_id in cancelled:
            pipe.hvals(Keys(prefix, tournament_id).state)
        found = pipe.execute() if cancelled else []
    return any(text(state) == MatchState.RUNNING for states in found for state in states)


def _plays_in_a_live_tournament(client: redis.Redis, prefix: str, name: str) -> bool:
    """Whether a created or running tournament lists the bot: its page may still change."""
    ids = list_ids(client, prefix)
    with client.pipeline(transaction=False) as pipe:
        for tournament_id in ids:
            pipe.hmget(Keys(prefix, tournament_id).tournament, "status", "spec")
        found = pipe.execute()
    for status, spec in found:
        if status is not None and spec is not None and text(status) in _LIVE_STATUSES:
            try:
                if name in json.loads(spec).get("bots", ()):
                    return True
            except (ValueError, AttributeError):
                continue  # an unreadable spec: the tournament's own page says so
    return False


def _played_row(match: history.PlayedMatch) -> dict[str, Any]:
    record = match.record
    others = [b for seat, b in enumerate(record.bots) if seat != match.seat]
    return {"match_id": record.match_id, "tournament": record.tournament, "place": match.place,
            "seats": len(record.bots), "won": match.won, "forfeited": match.forfeited, "opponents": others,
            "total": record.totals[match.seat], "totals": record.totals, "bots": record.bots,
            "reason": record.reason_name, "finished": _when(record.finished_at)}  # fmt: skip


# --- the standings as JSON ---------------------------------------------------------------------------


@blueprint.get("/api/leaderboard/<scope>")
def api(scope: str) -> Response:
    client, prefix = context().store, context().prefix
    if scope != board.ALL and not exists(client, prefix, scope):
        abort(404, f"no tournament {scope!r}")
    values = board.current(client, prefix, None if scope == board.ALL else scope).to_dict()
    rules = _rules(client, prefix, scope) if scope != board.ALL else None
    if rules is not None:  # one tournament: the rules every match of it was played under
        values["rules"] = ruleset.as_dict(rules)
    return jsonify(values)


def _rules(client: redis.Redis, prefix: str, tournament_id: str) -> RulesConfig | None:
    """The tournament's rules; None if it was deleted meanwhile or its record is unreadable."""
    try:
        return load(client, prefix, tournament_id).spec.rules
    except TournamentError:
        return None
    except (ValueError, KeyError, TypeError) as error:
        log.warning("tournament %s: unreadable record (%r); its rules are not shown", tournament_id, error,
                    extra={"tournament_id": tournament_id})  # fmt: skip
        return None


def _progress_row(client: redis.Redis, prefix: str, tournament_id: str) -> dict[str, Any] | None:
    """The tournament's row; None if it was deleted meanwhile, and a row saying so if its record is
    unreadable (one bad record must not take the whole page down)."""
    try:
        state = progress(client, prefix, tournament_id)
    except TournamentError:
        return None
    except (ValueError, KeyError, TypeError) as error:
        log.warning("tournament %s: unreadable record (%r); shown as such", tournament_id, error,
                    extra={"tournament_id": tournament_id})  # fmt: skip
        return {"id": tournament_id, "name": "-", "status": "unreadable (see the web view's log)", "done": 0,
                "matches": 0, "eta": "-", "running": 0, "queued": 0, "failed": 0, "rules": "-", "bots": 0,
                "seats": "-", "created": "-", "live": False}  # fmt: skip
    t = state.tournament
    return {"id": t.id, "name": t.spec.name, "status": str(t.status), "done": t.done, "matches": t.matches,
            "eta": _progress_values(state)["eta"], "running": t.states[MatchState.RUNNING],
            "queued": t.states[MatchState.QUEUED], "failed": t.states[MatchState.FAILED],
            "rules": ruleset.summary(t.spec.rules), "bots": len(t.spec.bots), "seats": t.spec.seats,
            "created": _when(t.created),
            "live": t.status in _LIVE_STATUSES or t.states[MatchState.RUNNING] > 0}  # fmt: skip


def _recent_data(record: MatchRecord) -> dict[str, Any]:
    """A recent match in a tournament's JSON: `finished_at` in unix seconds (null: not known)."""
    return {"match_id": record.match_id, "bots": list(record.bots),
            "winners": [record.bots[w] for w in record.winners], "totals": list(record.totals),
            "reason": record.reason_name, "finished_at": record.finished_at or None,
            "forfeited": [record.bots[s] for s in record.forfeited if s < len(record.bots)]}  # fmt: skip


def _recent_row(record: MatchRecord) -> dict[str, Any]:
    winners = [record.bots[w] for w in record.winners]
    return {"match_id": record.match_id, "bots": record.bots, "winners": winners,
            "totals": record.totals, "reason": record.reason_name, "finished": _when(record.finished_at),
            "forfeited": [record.bots[s] for s in record.forfeited if s < len(record.bots)]}  # fmt: skip
