"""`--metrics HOST:PORT` of `uno-arena server` and `uno-arena worker`: their Prometheus metrics, served over
HTTP at /metrics by prometheus_client's own server on a thread of its own (docs/operations.md, "Metrics
and health"). The web view serves its /metrics itself, on its own address."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

F = TypeVar("F", bound=Callable[..., Any])
Address = tuple[str, int]


def parse_address(_context: click.Context | None, _parameter: click.Parameter | None,
                  value: str | None) -> Address | None:  # fmt: skip
    """`HOST:PORT` (`[::1]:9100` for IPv6; port 0: any free one) -> (host, port); a clear error else."""
    if value is None:
        return None
    host, _, port = value.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or int(port) > 65535:
        raise click.BadParameter(f"expected HOST:PORT, e.g. 127.0.0.1:9100, got {value!r}",
                                 param_hint="'--metrics'")  # fmt: skip
    return host, int(port)


def metrics_option(what: str) -> Callable[[F], F]:
    """`--metrics HOST:PORT`: the command gets `metrics` as (host, port), or None when not given."""
    return click.option(
        "--metrics",
        metavar="HOST:PORT",
        default=None,
        callback=parse_address,
        help=f"Serve {what} for Prometheus at http://HOST:PORT/metrics (port 0: any free port; "
        "docs/operations.md lists them). Off by default.",
    )


def serve_metrics(address: Address, registry: CollectorRegistry) -> str:
    """Serve `registry` at `address` (on a thread of its own); return its URL. A port that cannot be
    listened on ends the command with one line."""
    from prometheus_client import start_http_server

    host, port = address
    try:
        server, _ = start_http_server(port, host, registry=registry)
    except OSError as error:
        raise click.ClickException(
            f"--metrics: cannot listen on {host}:{port}: {error.strerror or error}"
        ) from None
    bound = server.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{bound}/metrics"
