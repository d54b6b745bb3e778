"""The protocol's names as the match viewer shows them, from the bindings: one source for the page's script.

A match's JSON (`/match/ID.json`, `records.replay.export`) and a running match's events (`live`) spell
each enum value by its full name, as protobuf's JSON does (`COLOUR_RED`, `FAULT_KIND_BOT_ERROR`). The
viewer's script (static/viewer.js) knows none of them: every match page carries `viewer_names()` in its
settings, and the script looks each value up there. Plain names come from the bindings
(`uno_arena.v1.names`), so a value added to the .proto is named on the page without touching the script
(tests/web/test_names.py holds the table to the bindings). What is written here is for people only: a
label is the plain name in words, and a rank's symbol is what its card face shows.
"""

from __future__ import annotations

from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import json_names

# Each enum the viewer reads from a match's JSON, under the key the script looks it up by.
ENUMS: dict[str, type[int]] = {
    "colour": pb.Colour,  # cards, named colours
    "rank": pb.Rank,  # cards
    "shuffle_reason": pb.ShuffleReason,  # shuffled
    "hand_end": pb.HandEnd,  # hand_ended
    "match_end": pb.MatchEnd,  # match_ended, the result
    "fault_kind": pb.FaultKind,  # faults
}
# A card face's symbol, by the rank's plain name; a number shows itself.
SYMBOLS = {"skip": "⊘", "reverse": "⇄", "draw_two": "+2", "wild": "W", "wild_draw_four": "+4"}


def label(plain: str) -> str:
    """A plain name in words: `draw_two` -> `draw two`, `bot_error` -> `bot error`."""
    return plain.replace("_", " ")


def viewer_names() -> dict[str, dict[str, str]]:
    """For each of `ENUMS`: full value name -> label; and `symbol`: full rank name -> its card face."""
    table = {key: {full: label(plain) for full, plain in json_names(enum).items()}
             for key, enum in ENUMS.items()}  # fmt: skip
    table["symbol"] = {full: SYMBOLS.get(plain, plain) for full, plain in json_names(pb.Rank).items()}
    return table
