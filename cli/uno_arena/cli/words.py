"""Counted nouns in the CLI's messages: `1 match`, `2 matches`, never `1 matches`."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`count` and `noun`, made plural unless the count is one (`nouns` when English is irregular)."""
    if count == 1:
        return f"{count} {noun}"
    if nouns is None:
        nouns = f"{noun}es" if noun.endswith(("s", "x", "z", "ch", "sh")) else f"{noun}s"
    return f"{count} {nouns}"
