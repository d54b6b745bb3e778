"""The web view's request log: one INFO line per request, on logger `uno_arena.web.access`.

`GET /tournament/cup1 200 (3 ms)`, with fields for `--log-format json`: method, path, route (the app's
rule that answered, e.g. `/tournament/<tournament_id>`: a dashboard groups by it; none for a path no
rule serves), status, duration_ms, client (the peer's address; behind a trusted proxy, `--trust-proxy`,
the client it names in X-Forwarded-For), and the tournament, match or bot id the path names. A line is
written when the response is over, so a live event stream's line comes when the stream ends, its
duration the stream's. The plain format shows the lines with `uno-arena -v web`; `--log-format json`
has them by default.

Outermost WSGI middleware, so it also logs what is answered before Flask (a path outside the site's
prefix, a refused X-Forwarded-Prefix). The path is the client's and is cut to `PATH_LOGGED` characters.

It also counts each request in the web view's metrics (`web.metrics`: by route and status, with its
duration), when it has them, whether or not INFO is logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from werkzeug.wsgi import ClosingIterator

if TYPE_CHECKING:
    from _typeshed import OptExcInfo
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    from uno_arena.web.metrics import WebMetrics

log = logging.getLogger(__name__)

PATH_LOGGED: Final = 512  # characters of a path in a line: the rest is "..." (a client chooses it)
# A route's argument -> the log field of the id it names
ID_ARGUMENTS: Final = {"tournament_id": "tournament_id", "match_id": "match_id", "name": "bot"}


class AccessLog:
    """WSGI middleware: logs each request once its response is over (nothing while INFO is off), and
    counts it in `metrics` (if given)."""

    def __init__(self, app: WSGIApplication, metrics: WebMetrics | None = None) -> None:
        self.app = app
        self.metrics = metrics

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        logged = log.isEnabledFor(logging.INFO)
        if not logged and self.metrics is None:
            return self.app(environ, start_response)
        started = time.monotonic()
        path = environ.get("PATH_INFO", "") or "/"  # before the app moves a prefix to SCRIPT_NAME
        line: dict[str, Any] = {
            "method": environ.get("REQUEST_METHOD", ""),
            "path": path if len(path) <= PATH_LOGGED else path[:PATH_LOGGED] + "...",
        }

        def starting(status: str, headers: list[tuple[str, str]], exc_info: OptExcInfo | None = None) -> Any:
            """Flask's request is still there when its response starts (not once the body is sent)."""
            code = status.partition(" ")[0]
            line["status"] = int(code) if code.isdigit() else code
            request = environ.get("werkzeug.request")
            rule = getattr(request, "url_rule", None)
            if rule is not None:
                line["route"] = rule.rule
                for argument, value in (getattr(request, "view_args", None) or {}).items():
                    if argument in ID_ARGUMENTS:
                        line[ID_ARGUMENTS[argument]] = str(value)
            return start_response(status, headers, exc_info)

        def ended() -> None:
            seconds = time.monotonic() - started
            if self.metrics is not None:
                self.metrics.request_ended(line.get("route"), line.get("status", "-"), seconds)
            if not logged:
                return
            line["client"] = environ.get("REMOTE_ADDR")  # by now a trusted proxy's client (ProxyFix)
            line["duration_ms"] = round(seconds * 1000, 1)
            log.info("%s %s %s (%.0f ms)", line["method"], line["path"], line.get("status", "-"),
                     line["duration_ms"], extra=line)  # fmt: skip

        try:
            body = self.app(environ, starting)
        except BaseException:
            line.setdefault("status", 500)
            ended()
            raise
        return ClosingIterator(body, ended)
