"""A match's page: its replay (from Redis, or a replay file), and its JSON."""

from __future__ import annotations

import logging
from pathlib import Path

import redis
from flask import Blueprint, Response, abort, jsonify, render_template

from uno_arena.leaderboard.context import context
from uno_arena.records.match import RecordedMatch, load_match
from uno_arena.records.replay import ReplayFileError, export, lines, read_replay_file, replay_path_in
from uno_arena.records.tournament import is_match_id

log = logging.getLogger(__name__)
blueprint = Blueprint("viewer", __name__)


@blueprint.get("/match/<match_id>.json")
def match_json(match_id: str) -> Response:
    web = context()
    return jsonify(export(_match(web.client, web.prefix, match_id, web.replays)))


@blueprint.get("/match/<match_id>")
def match(match_id: str) -> str:
    web = context()
    text = "\n".join(lines(_match(web.client, web.prefix, match_id, web.replays)))
    return render_template("replay.html", match_id=match_id, text=text)


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
