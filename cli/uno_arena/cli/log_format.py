"""`--log-format json` (env UNO_ARENA_LOG_FORMAT) of the long-running commands: `server`, `worker`, `web`.

The plain format (`TIME LEVEL LOGGER: MESSAGE`, set up by the command group) stays the default. In JSON
every line a command writes is one JSON object (docs/operations.md, "Logs"): the log records, the line
that says where it serves (printed to stdout in the plain format) and a fatal error, so a log shipper
(Loki's promtail, journald, Vector) parses every line and can label lines by component and match.

Why the standard library and not python-json-logger: the object is a fixed, documented set of fields
(only the ids and request fields we name, never whatever a library's `extra` carries), the formatter is
a dozen lines, and the organiser's install gains no dependency. `json.dumps` with `ensure_ascii` writes
every character outside printable ASCII as a `\\uXXXX` escape (controls, U+2028, bidi overrides), and
DEL is escaped too, so a bot's name, a Hello's `client` or a path a browser asked for cannot break a
line or drive a terminal.
"""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Callable
from typing import Any, Final, TypeVar

import click

LOG_FORMAT_VARIABLE: Final = "UNO_ARENA_LOG_FORMAT"
LOG_FORMATS: Final = ("plain", "json")
# The ids a log call knows (passed with `extra=`), then a web request's fields; each only when set.
CONTEXT_FIELDS: Final = ("tournament_id", "match_id", "bot", "seat")
REQUEST_FIELDS: Final = ("method", "path", "route", "status", "duration_ms", "client")
CLI_LOGGER: Final = "uno_arena.cli"

F = TypeVar("F", bound=Callable[..., Any])
_json_component: str | None = None  # set once the JSON format is in use


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (RFC 3339, UTC), level, component, logger, message, the ids and
    request fields the record carries, and the exception's traceback when there is one."""

    def __init__(self, component: str) -> None:
        super().__init__()
        self.component = component

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": rfc3339(record.created),
            "level": record.levelname,
            "component": self.component,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = record.__dict__
        for name in (*CONTEXT_FIELDS, *REQUEST_FIELDS):
            value = fields.get(name)
            if value is not None:
                line[name] = value
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:  # not "NoneType: None"
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # ensure_ascii escapes every non-ASCII character and json every control but DEL: escape it too
        return json.dumps(line, ensure_ascii=True, default=str).replace("\x7f", "\\u007f")


def rfc3339(created: float) -> str:
    """`2025-05-04T12:34:56.789Z`: the record's time in UTC, to the millisecond."""
    when = datetime.datetime.fromtimestamp(created, datetime.UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def use_json(component: str) -> None:
    """Write every log record of this process as JSON (on the command group's stderr handler), and the
    platform's INFO records too: a shipped log is filtered where it is read, not where it is written."""
    global _json_component
    root = logging.getLogger()
    handlers = [handler for handler in root.handlers if type(handler) is logging.StreamHandler]
    if not handlers:
        handlers = [logging.StreamHandler()]
        root.addHandler(handlers[0])
    for handler in handlers:
        handler.setFormatter(JsonFormatter(component))
    platform = logging.getLogger("uno_arena")
    platform.setLevel(min(platform.getEffectiveLevel(), logging.INFO))
    _json_component = component


def in_json() -> bool:
    return _json_component is not None


def say(text: str, err: bool = False) -> None:
    """A line for whoever runs the command (where it serves): printed in the plain format, an INFO
    record in JSON, so that every line of the output is JSON."""
    if in_json():
        logging.getLogger(CLI_LOGGER).info("%s", text)
    else:
        click.echo(text, err=err)


def log_format_option(component: str) -> Callable[[F], F]:
    """`--log-format plain|json` (env UNO_ARENA_LOG_FORMAT) for the command of `component` (`server`,
    `worker`, `web`: the `component` field). Read before the other options, so that even their errors
    past parsing (Redis not answering) are JSON."""

    def choose(context: click.Context, _parameter: click.Parameter, chosen: str) -> None:
        if chosen == "json" and not context.resilient_parsing:
            use_json(component)

    return click.option(
        "--log-format",
        type=click.Choice(LOG_FORMATS, case_sensitive=False),
        default="plain",
        show_default=True,
        envvar=LOG_FORMAT_VARIABLE,
        is_eager=True,
        expose_value=False,
        callback=choose,
        help=f"plain: lines for people; json: one JSON object a line, for a log shipper (env "
        f"{LOG_FORMAT_VARIABLE}; docs/operations.md).",
    )
