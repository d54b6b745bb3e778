"""One model: each game concept is defined once, in the rules core, and every other package uses that
definition (issue 27). Read from the source, so a second `class Card` anywhere fails here."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from uno_arena.rules.event import EVENT_CLASSES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rules", "proto", "sdk", "server", "records", "workers", "leaderboard", "web", "cli")

CONCEPTS = {
    "Card", "Colour", "Rank", "Kind", "Action", "ActionKind", "LegalActions", "Observation", "Phase",
    "EventKind", "DrawReason", "ShuffleReason", "HandEnd", "MatchEnd", "MatchResult", "RulesConfig",
    *(cls.__name__ for cls in EVENT_CLASSES.values()),
}  # fmt: skip


def defined_classes() -> dict[str, list[str]]:
    """Class name -> the modules (paths) that define a class of that name, in every package."""
    found: dict[str, list[str]] = defaultdict(list)
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.ClassDef):
                    found[node.name].append(str(path.relative_to(ROOT)))
    return found


def test_each_game_concept_is_defined_once_in_the_rules_core() -> None:
    classes = defined_classes()
    assert len(CONCEPTS) > 30
    for name in sorted(CONCEPTS):
        assert len(classes[name]) == 1, f"{name} is defined in {classes[name] or 'no module'}"
        assert classes[name][0].startswith("rules/uno_arena/rules/"), f"{name} is defined in {classes[name]}"
