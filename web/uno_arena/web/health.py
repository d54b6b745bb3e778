"""`GET /healthz`: whether the web view can serve its pages, for a load balancer or a supervisor.

200 with `{"status": "ok", "redis": "answers"}` when Redis answers a PING (within the web view's Redis
timeout, 5 s); 503 with `{"status": "unavailable", "reason": "..."}` saying what fails when it does not.
A web view of replay files alone (no Redis) is always ok: `{"status": "ok", "redis": "not used"}`.
Never cached. Nothing here imports redis: the replay files alone are served without it.
"""

from __future__ import annotations

import logging

from flask import Blueprint, Response, jsonify

from uno_arena.web.context import context

log = logging.getLogger(__name__)
blueprint = Blueprint("health", __name__)
NO_STORE = {"Cache-Control": "no-store"}


@blueprint.get("/healthz")
def healthz() -> tuple[Response, int, dict[str, str]]:
    web = context()
    if web.client is None:
        return jsonify(status="ok", redis="not used"), 200, NO_STORE
    import redis

    from uno_arena.records.connection import explain

    try:
        web.client.ping()
    except redis.RedisError as error:
        reason = f"Redis at {web.where} does not answer: {explain(error, web.where)}"
        log.warning("/healthz: %s", reason)
        return jsonify(status="unavailable", reason=reason), 503, NO_STORE
    return jsonify(status="ok", redis="answers"), 200, NO_STORE
