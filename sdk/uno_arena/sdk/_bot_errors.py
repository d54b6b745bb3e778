"""A failure of the bot's own code, said in one line: what the SDK logs and reports as a BotError.

One line, because a bot that fails on 5% of its decisions would otherwise fill its log with
tracebacks and observation dumps; the full traceback stays at DEBUG level.
"""

from __future__ import annotations

import sys
import sysconfig
import traceback
from pathlib import Path
from types import FrameType

from uno_arena.rules import Action

DETAIL_CHARS = 512  # BotError.detail: the server cuts longer ones (bot.proto)
MESSAGE_CHARS = 200  # an exception's message within the line
RETURNED_CHARS = 80  # the repr of a wrong return value within the line

# Installed code (the standard library, site-packages): never "where the bot failed" while the
# bot's own code is on the stack.
_INSTALLED = tuple(
    {str(Path(sysconfig.get_paths()[k]).resolve()) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
)
_EXAMPLES = "uno_arena.sdk.examples"  # bot code that ships inside the platform


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())  # one line
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _platform(frame: FrameType) -> bool:
    module = str(frame.f_globals.get("__name__", ""))
    return module.startswith("uno_arena.") and not module.startswith(_EXAMPLES)


def _installed(frame: FrameType) -> bool:
    module = str(frame.f_globals.get("__name__", ""))
    if module.partition(".")[0] in sys.stdlib_module_names:
        return True
    filename = frame.f_code.co_filename
    if filename.startswith("<"):  # exec'd code (the standard library's frozen modules are named above)
        return False
    return str(Path(filename).resolve()).startswith(_INSTALLED)


def where(error: BaseException) -> str:
    """`my_bot.py:42 in decide`: the innermost frame of the bot's own code (neither the SDK's nor
    installed libraries'), else the innermost frame outside the platform, else the innermost one.
    A syntax error happened in no frame: its own file and line."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{Path(error.filename).name}:{error.lineno}"
    frames = list(traceback.walk_tb(error.__traceback__))
    if not frames:
        return "unknown place"
    innermost_first = frames[::-1]
    frame, line = next(
        (f for f in innermost_first if not _platform(f[0]) and not _installed(f[0])),
        next((f for f in innermost_first if not _platform(f[0])), innermost_first[0]),
    )
    return f"{Path(frame.f_code.co_filename).name}:{line} in {frame.f_code.co_name}"


def raised(error: BaseException) -> str:
    """`ZeroDivisionError: division by zero (my_bot.py:42 in decide)`."""
    # A SyntaxError's str() repeats its place: "... (my_bot.py, line 3)"
    message = _cut(error.msg if isinstance(error, SyntaxError) else str(error), MESSAGE_CHARS)
    said = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return _cut(f"{said} ({where(error)})", DETAIL_CHARS)


def returned(value: object) -> str:
    """`decide() returned None, not an Action`: an answer that is not one of the legal actions."""
    if isinstance(value, Action):
        said = f"{value} (id {value.id}), not one of the legal actions"
    else:
        said = f"{_cut(repr(value), RETURNED_CHARS)}, not an Action"
    return _cut(f"decide() returned {said}", DETAIL_CHARS)
