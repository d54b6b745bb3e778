"""Text a bot (or a file from anywhere) supplied, made safe to show: the one escaping function that every
layer that outputs such text uses (the server's log lines, the CLI's terminal, the web view).

A bot's `BotError.detail`, its `Hello.client`, a bot name or match id read from a replay file may hold
control characters: ESC and BEL sequences retitle, clear or rewrite an organiser's terminal, a newline
forges a log line, a bidirectional override reorders what is read. `printable` writes every character
that is not printable as its Python escape (`\\x1b`, `\\n`, `\\u202e`), so the text shows what was sent
and does nothing. Printable text, the usual case, comes back as it is (one C-speed check), and escaped
text is printable, so escaping twice changes nothing: a layer may escape what another already did.
"""

from __future__ import annotations

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(character: str) -> str:
    if character.isprintable():
        return character
    short = _SHORT.get(character)
    if short is not None:
        return short
    code = ord(character)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str) -> str:
    """`text` with every non-printable character (controls, line breaks, format characters such as
    bidirectional overrides, unassigned code points) written as its escape; a space stays a space."""
    if text.isprintable():
        return text
    return "".join([_escaped(c) for c in text])
