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

log = logging.getLogger(__name__)

PATH_LOGGED: Final = 512  # characters of a path in a line: the rest is "..." (a client chooses it)
# A route's argument -> the log field of the id it names
ID_ARGUMENTS: Final = {"tournament_id": "tournament_id", "match_id": "match_id", "name": "bot"}


class AccessLog:
    """WSGI middleware: logs each request once its response is over (nothing while INFO is off)."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if not log.isEnabledFor(logging.INFO):
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
            line["client"] = environ.get("REMOTE_ADDR")  # by now a trusted proxy's client (ProxyFix)
            line["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
            log.info("%s %s %s (%.0f ms)", line["method"], line["path"], line.get("status", "-"),
                     line["duration_ms"], extra=line)  # fmt: skip

        try:
            body = self.app(environ, starting)
        except BaseException:
            line.setdefault("status", 500)
            ended()
            raise
        return ClosingIterator(body, ended)
