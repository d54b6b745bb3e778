"""The read-only web view: its app and its server.

A Flask app over the same Redis the workers write. Its pages live in blueprints, one noun each:
`pages` (the tournaments and the JSON API of the standings), `viewer` (a match: replay and live view),
`live` (a running match's public events as they happen), `health` (`/healthz`) and `metrics` (`/metrics`,
Prometheus'); `create_app` wires them to one `WebContext`.
`uno-arena web --listen HOST:PORT` serves it on waitress (`WebServer`): a bounded pool of threads runs
the app, and connections are read by one event loop, so clients that send slowly, or never finish
their headers, hold a connection (up to `connection_limit`, closed after `channel_timeout_s`) but
never a thread.

Without Redis (`uno-arena web --replays DIR` and no Redis URL: `create_app(None, ...)`) it serves the
replay files alone: an index of them at `/` (`replay_index`) and the viewer of each; then this module and
every one that app imports need Flask and waitress only, never redis, rq or openskill (a test holds
them so), so the base install plus `pip install flask waitress` shows local replays.

An unknown or malformed tournament or match id is a 404; an error is a page of the site (error.html: the
message and a link back to the index), or JSON for the JSON API and .json documents. A path with a
trailing slash that names nothing is redirected (308) to the path without it; `/favicon.ico` to the
site's icon, static/favicon.svg, which every page links. While Redis does not answer, pages are a 503
saying so that reloads itself, and the JSON API a 503 with a JSON error.

Behind a reverse proxy the site can live under a path (`url_prefix`, e.g. `/uno`: `uno-arena web
--url-prefix /uno`): every page, file, JSON document and event stream is then served under it, and every
link, redirect and URL in a page, its JSON or its scripts is built by `url_for`, so it stays under it too.
A proxy that strips the prefix instead says it in `X-Forwarded-Prefix`, which is believed only when
`trust_proxy` is set (werkzeug's ProxyFix): a client that reaches the app directly could otherwise send
one and have every link of its page point elsewhere. The same setting believes the client address the
proxy adds to `X-Forwarded-For` (its last entry), which the live streams' per-client limit counts by.

Every request is logged once its response is over (`access`: logger `uno_arena.web.access`, INFO), with
its route, status and the ids its path names, as fields for `--log-format json`, and counted in the
metrics by route and status.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, jsonify, redirect, render_template, request, url_for
from waitress import wasyncore
from waitress.server import create_server
from waitress.trigger import trigger
from werkzeug.exceptions import BadRequest, HTTPException, NotFound
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.utils import redirect as plain_redirect
from werkzeug.wrappers import Response as BaseResponse

from uno_arena.records.replay import MAX_REPLAY_BYTES
from uno_arena.web import health, live, names, replay_index, viewer
from uno_arena.web.access import AccessLog
from uno_arena.web.context import WebContext
from uno_arena.web.limits import ServerLimits

if TYPE_CHECKING:  # annotations only: the replay files alone are served without a Redis client
    import redis
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    from uno_arena.web.metrics import WebMetrics

REDIS_TIMEOUT_S = 5  # a Redis that does not answer within it makes a 503 page, not a request that hangs
log = logging.getLogger(__name__)


def redis_client(url: str) -> redis.Redis:
    """The web view's client: it fails fast (one immediate retry, for a connection a restarted Redis
    dropped), so while Redis is down each page says so at once, and it reconnects by itself. A URL that
    cannot work is a `RedisUrlError` (`uno_arena.records.connection`, which every component's client
    goes through: TLS, ACL users, passwords never shown)."""
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    from uno_arena.records.connection import client

    return client(url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S,
                  retry=Retry(NoBackoff(), 1))  # fmt: skip


def redis_address(client: redis.Redis) -> str:
    """Where the client's Redis is, for messages (never its password)."""
    from uno_arena.records.connection import address

    return address(client)


_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")  # a path segment that needs no escaping anywhere


def normal_url_prefix(raw: str) -> str:
    """The URL path the site is served under, normalised: "" for none ("" or "/"), else "/a/b" (a trailing
    slash dropped). ValueError, saying why, for anything else: it must start with "/", and its segments
    be plain (letters, digits, `.`, `_`, `~`, `-`; no `//`, `.` or `..`), so every link built on it is
    a path of this site."""
    if raw in ("", "/"):
        return ""
    if not raw.startswith("/"):
        raise ValueError(f"expected a path starting with '/', like /uno; got {raw[:80]!r}")
    segments = raw[1:].removesuffix("/").split("/")
    for segment in segments:
        if not _SEGMENT.fullmatch(segment) or segment in (".", ".."):
            shown = "an empty segment (//)" if not segment else repr(segment[:80])
            raise ValueError(f"{raw[:80]!r} has {shown}: each part between slashes must be letters, digits,"
                             " '.', '_', '~' or '-' (and not '.' or '..')")  # fmt: skip
    return "/" + "/".join(segments)


class UnderPrefix:
    """WSGI middleware: serves the app under `prefix` (moved from PATH_INFO to SCRIPT_NAME, which
    `url_for` puts in front of every URL it builds); a path outside it is a 404, the prefix itself
    redirected to the index under it. A SCRIPT_NAME set before (a trusted proxy's X-Forwarded-Prefix)
    stays in front, once checked like `normal_url_prefix`."""

    def __init__(self, app: WSGIApplication, prefix: str) -> None:
        self.app = app
        self.prefix = prefix

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        try:
            root = normal_url_prefix(environ.get("SCRIPT_NAME", ""))
        except ValueError as error:
            log.warning("refused a request's SCRIPT_NAME (X-Forwarded-Prefix?): %s", error)
            return BadRequest("X-Forwarded-Prefix: not a plain URL path")(environ, start_response)
        path = environ.get("PATH_INFO", "") or "/"
        if self.prefix:
            if path == self.prefix:
                query = environ.get("QUERY_STRING", "")
                target = f"{root}{self.prefix}/" + (f"?{query}" if query else "")
                return plain_redirect(target, 308)(environ, start_response)
            if not path.startswith(self.prefix + "/"):
                where = f"{root}{self.prefix}/"
                return NotFound(f"this server serves the leaderboard under {where}")(environ, start_response)
            path = path[len(self.prefix) :]
        environ["SCRIPT_NAME"] = root + self.prefix
        environ["PATH_INFO"] = path
        return self.app(environ, start_response)


def create_app(client: redis.Redis | None, prefix: str, refresh: int = 5, replays: Path | None = None,
               url_prefix: str = "", trust_proxy: bool = False,
               max_replay_bytes: int = MAX_REPLAY_BYTES) -> Flask:  # fmt: skip
    """`replays`: a folder of replay files (`uno-arena bot play --replay`, `match play`), served at
    /match/<id> when Redis holds no match of that id. Without a client (None), the replay files alone:
    their index and their viewer, and nothing that reads Redis is imported. `url_prefix`: the path the
    site is served under (`normal_url_prefix` checks it; "": the root). `trust_proxy`: believe one
    proxy's X-Forwarded-Prefix (the path it strips before passing the request on) and build links under
    it. `max_replay_bytes`: a larger replay file is refused with a 413, never read."""
    if client is None and replays is None:
        raise ValueError("the web view needs a Redis client, or a folder of replay files to serve alone")
    url_path = normal_url_prefix(url_prefix)
    app = Flask(__name__)  # templates from uno_arena/web/templates/, files from static/
    where = redis_address(client) if client is not None else ""
    app.extensions["uno_arena"] = WebContext(client, prefix, refresh, replays, where, max_replay_bytes)
    app.jinja_env.globals["replays_only"] = client is None  # the pages link to nothing Redis serves
    app.jinja_env.globals["home_endpoint"] = "replay_index.index" if client is None else "pages.overview"
    app.add_template_filter(names.label, "label")  # a protocol value's plain name in the viewer's words
    metrics: WebMetrics | None = None
    app.register_blueprint(health.blueprint)  # /healthz
    if client is None:
        app.register_blueprint(replay_index.blueprint)
        app.register_blueprint(viewer.blueprint)
    else:
        from uno_arena.web import metrics as web_metrics  # /metrics: prometheus-client, of the platform
        from uno_arena.web import pages  # the tournaments' pages: Redis, RQ's records, OpenSkill

        for blueprint in (pages.blueprint, viewer.blueprint, live.blueprint):
            app.register_blueprint(blueprint)
        metrics = web_metrics.install(app)
        _answer_redis_errors(app, where, refresh)
    app.wsgi_app = UnderPrefix(app.wsgi_app, url_path)  # type: ignore[method-assign]
    if trust_proxy:  # outermost: its SCRIPT_NAME goes in front of the prefix; its client address counts
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1, x_prefix=1)  # type: ignore[method-assign]
    # a line per request and its count in the metrics, outermost
    app.wsgi_app = AccessLog(app.wsgi_app, metrics)  # type: ignore[method-assign]

    @app.get("/favicon.ico")
    def favicon() -> BaseResponse:
        """Browsers and feed readers ask for it whatever the page links: the site's SVG icon."""
        return redirect(url_for("static", filename="favicon.svg"), 308)

    @app.before_request
    def without_trailing_slash() -> BaseResponse | None:
        """`/tournament/ID/` is `/tournament/ID`: a trailing slash is redirected away when the path
        names nothing as it is (`/` itself and the routes that end in one are left alone)."""
        path = request.path
        if not isinstance(request.routing_exception, NotFound) or not path.endswith("/") or path == "/":
            return None
        query = request.query_string.decode("latin-1")
        # one leading slash: "//host/" must not become a redirect to another site; under the site's prefix
        target = request.script_root + "/" + path.strip("/")
        return redirect(target + (f"?{query}" if query else ""), 308)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[Response | str, int, Any]:
        code = error.code or 500
        headers = error.get_headers()  # e.g. a 405's Allow
        if _wants_json():  # the API's errors, and a .json document's, are JSON too
            return jsonify(error=error.description), code, {}
        kept = [(name, value) for name, value in headers if name.lower() != "content-type"]
        page = render_template("error.html", code=code, name=error.name, message=error.description)
        return page, code, kept

    return app


def _answer_redis_errors(app: Flask, where: str, refresh: int) -> None:
    """While Redis does not answer: a 503 page that reloads itself, or a JSON error for the API."""
    import redis

    from uno_arena.records.connection import explain

    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    def redis_down(error: redis.RedisError) -> tuple[Response | str, int, dict[str, str]]:
        log.warning("%s %s: Redis at %s is not answering: %s", request.method, request.path, where,
                    explain(error, where))  # fmt: skip
        message = f"the leaderboard's Redis at {where} is not answering"
        retry = {"Retry-After": str(refresh)}
        if _wants_json():
            return jsonify(error=message, retry_after_s=refresh), 503, retry
        page = render_template("unavailable.html", message=message, refresh=refresh,
                               updated=time.strftime("%H:%M:%S"))  # fmt: skip
        return page, 503, retry


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.path.endswith(".json")


class WebServer:
    """The app on waitress at HOST:PORT (port 0: any free port): `serve` runs until `stop` or Ctrl-C."""

    def __init__(self, app: Flask, host: str, port: int, limits: ServerLimits | None = None) -> None:
        self.limits = limits = limits or ServerLimits()
        live.limit_streams(app, limits.threads, limits.live_streams_per_client)  # threads left for the pages
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
            # X-Forwarded-For reaches the app, which believes it only when it trusts its proxy
            # (`create_app(trust_proxy=True)`: ProxyFix); waitress 3 would drop it before
            clear_untrusted_proxy_headers=False,
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
