"""The web view's Prometheus metrics, at `GET /metrics` (under the site's `--url-prefix`, like every path;
docs/operations.md, "Metrics and health", lists each).

Requests are counted by the access log's middleware as each response ends (`access.AccessLog`), by
route (the app's rule that answered, e.g. `/tournament/<tournament_id>`, never the path a client chose:
a bounded set of series) and status; the live event streams open are read from the live view's limits
when scraped. One registry per app, so apps made side by side (the tests') count apart. Only a web view
with Redis has them (the platform install, which brings prometheus-client): one of replay files alone
has /healthz, not /metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from flask import Blueprint, Flask, Response, current_app, request
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.exposition import choose_encoder

EXTENSION: Final = "uno_arena.metrics"
UNMATCHED: Final = "unmatched"  # the route label of a request no rule of the app answered (a 404 ...)
# A page takes milliseconds; a live event stream is open up to 30 s (its duration is the stream's).
REQUEST_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
blueprint = Blueprint("metrics", __name__)


class WebMetrics:
    """The web view's metric objects, on `registry` (a new one unless given, with the process's CPU and
    memory: `process_*`)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        if registry is None:
            ProcessCollector(registry=self.registry)
        self.requests = Counter(
            "uno_arena_web_requests",
            "Requests answered, by route (the app's rule, e.g. /tournament/<tournament_id>; 'unmatched' "
            "for a path none serves) and HTTP status.",
            ["route", "status"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "uno_arena_web_request_duration_seconds",
            "Seconds from a request to the end of its response, by route (a live event stream's: the "
            "stream's, up to 30 s).",
            ["route"],
            buckets=REQUEST_BUCKETS,
            registry=self.registry,
        )
        self.live_streams = Gauge(
            "uno_arena_web_live_streams_open",
            "Live event streams (server-sent events of running matches) open now.",
            registry=self.registry,
        )

    def watch_live_streams(self, open_streams: Callable[[], int]) -> None:
        """Read the live streams open from `open_streams` when scraped."""
        self.live_streams.set_function(open_streams)

    def request_ended(self, route: str | None, status: int | str, seconds: float) -> None:
        route = route or UNMATCHED
        self.requests.labels(route=route, status=str(status)).inc()
        self.request_seconds.labels(route=route).observe(seconds)


def install(app: Flask) -> WebMetrics:
    """Give `app` its metrics and its `/metrics` route; the caller hands them to the access log."""
    from uno_arena.web import live  # the live view's limits, read when scraped

    metrics = WebMetrics()
    app.extensions[EXTENSION] = metrics
    metrics.watch_live_streams(lambda: live.open_streams(app))
    app.register_blueprint(blueprint)
    return metrics


@blueprint.get("/metrics")
def exposition() -> Response:
    """The metrics in the format the scraper asks for (its Accept header: Prometheus' text format, or
    OpenMetrics), as prometheus_client's own server answers."""
    metrics: WebMetrics = current_app.extensions[EXTENSION]
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    return Response(encode(metrics.registry), 200, {"Cache-Control": "no-store"}, content_type=content_type)
