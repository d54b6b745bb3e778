"""Golden playthroughs: every pinned case, replayed now, matches its file line for line.

The files pin the v1 action numbering and the rules' random stream (see
`tests/rules/golden/generate.py`). A failure names the case and its first
differing line; if the change is intended, regenerate and review the diff.
"""

from __future__ import annotations

import base64
import json
import typing
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import text_format

from tests.rules.golden import generate
from uno_arena.rules import ACTIONS, ActionKind, Event, Phase, RulesConfig
from uno_arena.rules.event import HandEnd, MatchEnd, ShuffleReason
from uno_arena.v1 import bot_pb2

GOLDEN = Path(generate.__file__).resolve().parent
REGENERATE = "python tests/rules/golden/generate.py"
SHOWN = 160  # characters of a differing line shown either side of the first difference


def _first_difference(stored: Any, now: Any, where: str = "") -> str:
    """Where two decoded JSON values first differ, and how (requests decoded to protobuf text)."""
    if isinstance(stored, dict) and isinstance(now, dict):
        for key in [*stored, *(k for k in now if k not in stored)]:
            if key not in stored or key not in now:
                return f"{where}.{key}: only {'now' if key in now else 'in the file'}"
            if stored[key] != now[key]:
                if key == "request":
                    return f"{where}.request: {_request_difference(stored[key], now[key])}"
                return _first_difference(stored[key], now[key], f"{where}.{key}")
    if isinstance(stored, list) and isinstance(now, list) and len(stored) == len(now):
        for index, (old, new) in enumerate(zip(stored, now, strict=True)):
            if old != new:
                return _first_difference(old, new, f"{where}[{index}]")
    return f"{where or 'line'}: file has {json.dumps(stored)[:SHOWN]}, now {json.dumps(now)[:SHOWN]}"


def _request_difference(stored: str, now: str) -> str:
    old, new = (
        text_format.MessageToString(bot_pb2.ServerMessage.FromString(base64.b64decode(r))).splitlines()
        for r in (stored, now)
    )
    for number, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if a != b:
            return f"decoded line {number}: file has {a.strip()!r}, now {b.strip()!r}"
    return f"decoded, the file has {len(old)} lines, now {len(new)} (or only the encoding differs)"


def _describe(name: str, number: int, stored: str, now: str) -> str:
    try:
        detail = _first_difference(json.loads(stored), json.loads(now))
    except json.JSONDecodeError:
        detail = f"file has {stored[: 2 * SHOWN]!r}, now {now[: 2 * SHOWN]!r}"  # actions.txt: short lines
    return f"golden {name}: line {number} differs: {detail}"


def _assert_same(name: str, lines: list[str]) -> None:
    path = GOLDEN / name
    hint = (
        f"\nIf the change is intended (the action numbering, the rules' random stream, events, "
        f"observations or request bytes), run `{REGENERATE}` and review the diff."
    )
    if not path.exists():
        pytest.fail(f"golden {name}: no such file in {GOLDEN}.{hint}")
    stored = path.read_text(encoding="utf-8").splitlines()
    for number, (old, new) in enumerate(zip(stored, lines, strict=False), 1):
        if old != new:
            pytest.fail(_describe(name, number, old, new) + hint)
    if len(stored) != len(lines):
        longer = "the file" if len(stored) > len(lines) else "the replay"
        extra = (stored if len(stored) > len(lines) else lines)[min(len(stored), len(lines))]
        pytest.fail(
            f"golden {name}: the file has {len(stored)} lines, the replay {len(lines)}; "
            f"line {min(len(stored), len(lines)) + 1} is only in {longer}: {extra[: 2 * SHOWN]}{hint}"
        )


@pytest.mark.parametrize("case", generate.CASES, ids=[c.name for c in generate.CASES])
def test_case_replays_as_recorded(case: generate.Case) -> None:
    _assert_same(case.file, generate.transcript(case))


def test_action_numbering_is_pinned() -> None:
    _assert_same(generate.ACTIONS_FILE, generate.action_lines())


def test_no_stray_golden_files() -> None:
    expected = {c.file for c in generate.CASES} | {generate.ACTIONS_FILE}
    stored = {p.name for p in GOLDEN.iterdir() if p.suffix in {".jsonl", ".txt"}}
    assert stored == expected, f"golden files without a case (or cases without a file); run {REGENERATE}"


def _stored(case: generate.Case) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (GOLDEN / case.file).read_text(encoding="utf-8").splitlines()]


def test_cases_cover_every_option_phase_action_and_event() -> None:
    """So that the files pin everything: a case list that lost coverage fails here, not silently."""
    configs = [c.config for c in generate.CASES]
    assert {2, 3, 4, 10} <= {c.players for c in configs}
    default = RulesConfig()
    for option in fields(RulesConfig):
        if option.name == "players":
            continue
        values = {getattr(c, option.name) for c in configs} - {getattr(default, option.name)}
        assert values, f"no golden case sets {option.name} to a non-default value"

    seen: set[str] = set()
    for case in generate.CASES:
        for record in _stored(case):
            if "event" in record:
                seen.add(record["event"])
                seen.update(f"{record['event']}:{record.get(k)}" for k in ("reason",) if k in record)
            if "observations" in record:
                seen.add(f"phase:{record['observations'][record['seat']]['phase']}")
                action = ACTIONS[record["id"]]
                seen.add(f"action:{action.kind.value}" + (":uno" if action.uno else ""))
    servers = (MatchEnd.FORFEIT, MatchEnd.ABORTED)  # the match server's reasons, never the core's
    wanted = {kind.__name__ for kind in typing.get_args(Event)}
    wanted |= {f"phase:{p.value}" for p in Phase if p is not Phase.OVER}
    wanted |= {f"action:{k.value}" for k in ActionKind} | {"action:play:uno"}
    wanted |= {f"HandEnded:{r.value}" for r in HandEnd}
    wanted |= {f"MatchEnded:{r.value}" for r in MatchEnd if r not in servers}
    # RESHUFFLE is declared but never logged: a reshuffle of the discards is its own `Reshuffled` event
    wanted |= {f"Shuffled:{r.value}" for r in ShuffleReason if r is not ShuffleReason.RESHUFFLE}
    assert not wanted - seen, f"not in any golden case: {sorted(wanted - seen)}"
