"""The match viewer's names come from one source: the bindings, through `uno_arena.web.names`, sent in every
match page's settings. Checked against the descriptors: every value of every enum the viewer reads, nothing
extra; and the page's scripts and templates hold no copy of them. (tests/web/test_viewer.py drives the
viewer in a browser with them.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import redis
from flask import Flask
from google.protobuf.descriptor import Descriptor, EnumDescriptor

from tests.records.test_replay import forfeited_match
from uno_arena.records.replay import write_replay_file
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.web import names, viewer
from uno_arena.web.app import create_app

WEB = Path(names.__file__).parent
SCRIPTS = sorted((WEB / "static").glob("*.js"))
TEMPLATES = sorted((WEB / "templates").glob("*.html"))


def enums_under(message: Descriptor, seen: set[str] | None = None) -> set[str]:
    """The full names of the enums of `message`'s fields, and of the messages in them, all the way down."""
    seen = set() if seen is None else seen
    found = set()
    for field in message.fields:
        if field.enum_type is not None:
            found.add(field.enum_type.full_name)
        if field.message_type is not None and field.message_type.full_name not in seen:
            seen.add(field.message_type.full_name)
            found |= enums_under(field.message_type, seen)
    return found


def words(enum: EnumDescriptor) -> dict[str, str]:
    """Each value but the zero one, as the JSON spells it -> its plain name in words, from the descriptor."""
    prefix = enum.values_by_number[0].name.removesuffix("UNSPECIFIED")
    return {v.name: v.name.removeprefix(prefix).lower().replace("_", " ") for v in enum.values if v.number}


def test_the_names_cover_every_enum_the_viewer_reads_and_every_value_of_each() -> None:
    table = names.viewer_names()
    assert set(table) == {*names.ENUMS, "symbol"}
    read = enums_under(pb.Event.DESCRIPTOR)  # the events it draws
    read |= {pb.Fault.DESCRIPTOR.fields_by_name["kind"].enum_type.full_name}  # the faults it marks
    read |= {pb.MatchResult.DESCRIPTOR.fields_by_name["reason"].enum_type.full_name}  # a log cut short
    assert {enum.DESCRIPTOR.full_name for enum in names.ENUMS.values()} == read
    for key, enum in names.ENUMS.items():
        assert table[key] == words(enum.DESCRIPTOR), key  # every value, nothing extra, as the bindings say
    ranks = words(pb.Rank.DESCRIPTOR)
    assert set(table["symbol"]) == set(ranks)
    assert table["symbol"]["RANK_7"] == "7" and table["symbol"]["RANK_DRAW_TWO"] == "+2"
    assert set(names.SYMBOLS) <= {plain.replace(" ", "_") for plain in ranks.values()}  # no stale rank


def settings_of(page: str) -> dict[str, object]:
    found = re.search(r'<script id="viewer-settings" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None
    settings: dict[str, object] = json.loads(found.group(1))
    return settings


def test_every_match_page_sends_the_names_to_its_script(tmp_path: Path) -> None:
    write_replay_file(forfeited_match(players=2), tmp_path)  # f-m00001
    app = create_app(None, "unused", replays=tmp_path)
    page = app.test_client().get("/match/f-m00001")
    assert page.status_code == 200
    assert settings_of(page.get_data(as_text=True))["names"] == names.viewer_names()
    platform = create_app(redis.Redis(port=1), "unused")  # a client never used: the live page's settings
    with platform.test_request_context():  # (its events: tests/web/test_live.py)
        assert viewer.live_view("cup-m00000", ("a", "b")).script["names"] == names.viewer_names()


def test_the_pages_scripts_and_templates_hold_no_protocol_name() -> None:
    prefixes = set()
    for module in (pb, bot_pb2, control_pb2):
        for enum in module.DESCRIPTOR.enum_types_by_name.values():
            prefixes.add(enum.values_by_number[0].name.removesuffix("UNSPECIFIED"))
    pattern = re.compile(rf"\b(?:{'|'.join(sorted(prefixes))})")  # COLOUR_RED, or a prefix stripped
    for path in [*SCRIPTS, *TEMPLATES]:
        assert not pattern.search(path.read_text(encoding="utf-8")), path.name


def test_the_viewer_describes_every_kind_of_event_and_no_other() -> None:
    script = (WEB / "static" / "viewer.js").read_text(encoding="utf-8")
    kinds = {field.name for field in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields}
    describe = script[script.index("function describe(") :]
    describe = describe[: describe.index("\n  }\n")]
    assert set(re.findall(r'case "(\w+)":', describe)) == kinds
    assert set(re.findall(r'case "(\w+)":', script)) <= kinds  # the reducer's too


@pytest.mark.parametrize("colour", sorted(words(pb.Colour.DESCRIPTOR).values()))
def test_every_colour_has_its_card_style(colour: str) -> None:
    """A card's class is `c-` and its colour's label: the style sheet has a symbol and a colour for each."""
    css = (WEB / "static" / "viewer.css").read_text(encoding="utf-8")
    assert f".c-{colour}::before" in css and f".c-{colour} {{" in css


def test_the_templates_say_protocol_values_in_the_viewers_words() -> None:
    app: Flask = create_app(None, "unused", replays=Path("."))
    assert app.jinja_env.filters["label"]("bot_error") == "bot error" == names.label("bot_error")
