"""The SDK's typed views decode what the server encodes, with every enum read from the bindings."""

from __future__ import annotations

import enum
import random
import re
from pathlib import Path

import pytest

import uno_arena.sdk
from uno_arena.rules import (
    ACTIONS,
    FACES,
    Phase,
    RulesConfig,
    apply,
    legal_actions,
    new_match,
    parse_card,
    seen_by,
)
from uno_arena.rules import Colour as RulesColour
from uno_arena.rules.event import Drew, HandEnd, HandEnded, MatchEnd, Played, Shuffled
from uno_arena.rules.event import ShuffleReason as RulesShuffleReason
from uno_arena.sdk import ActionKind, Card, Colour, DrawReason, EventKind, Kind, ShuffleReason
from uno_arena.sdk import HandEnd as SdkHandEnd
from uno_arena.sdk import MatchEnd as SdkMatchEnd
from uno_arena.sdk._protocol import ProtocolMismatch, members
from uno_arena.sdk.actions import action_from
from uno_arena.sdk.cards import card_from, colour_of
from uno_arena.sdk.events import event_from, hand_result_from, match_result_from
from uno_arena.sdk.observation import observation_from
from uno_arena.v1 import bot_pb2, codec
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import names


def test_names_are_the_protocol_values_without_prefix_or_the_unspecified_one() -> None:
    assert names(pb.Colour.DESCRIPTOR) == {
        pb.COLOUR_RED: "red",
        pb.COLOUR_YELLOW: "yellow",
        pb.COLOUR_GREEN: "green",
        pb.COLOUR_BLUE: "blue",
    }
    assert names(pb.ActionKind.DESCRIPTOR)[pb.ACTION_KIND_CHOOSE_COLOUR] == "choose_colour"
    assert names(pb.Rank.DESCRIPTOR)[pb.RANK_0] == "0"


def test_every_colour_and_action_kind_stands_for_its_protocol_value() -> None:
    for colour in Colour:
        assert colour_of(pb.Colour.Value(f"COLOUR_{colour.name}")) is colour
    assert colour_of(pb.COLOUR_UNSPECIFIED) is None
    assert set(members(pb.ActionKind.DESCRIPTOR, ActionKind).values()) == set(ActionKind)


def test_a_view_that_differs_from_its_protocol_enum_fails_loudly() -> None:
    class Fewer(enum.StrEnum):
        RED = "red"

    class More(enum.StrEnum):
        RED = "red"
        YELLOW = "yellow"
        GREEN = "green"
        BLUE = "blue"
        PURPLE = "purple"

    with pytest.raises(ProtocolMismatch, match="yellow"):
        members(pb.Colour.DESCRIPTOR, Fewer)
    with pytest.raises(ProtocolMismatch, match="PURPLE"):
        members(pb.Colour.DESCRIPTOR, More)


def test_every_card_face_decodes_as_the_rules_core_card() -> None:
    for face in FACES:
        card = card_from(codec.card(face))
        assert card.index == face.index
        assert card.points == face.points
        assert str(card) == str(face)
        assert (card.colour.value if card.colour else None) == (face.colour.value if face.colour else None)
        if face.rank.is_number:
            assert (card.kind, card.number) == (Kind.NUMBER, int(face.rank.value))
        else:
            assert (card.kind.value, card.number) == (face.rank.value, None)


def test_every_action_decodes_as_the_rules_core_action() -> None:
    for ours in ACTIONS:
        a = action_from(codec.action(ours))
        # str enums on both sides: str() is the value
        theirs = (ours.id, str(ours.kind), str(ours.colour), ours.uno)
        assert (a.id, str(a.kind), str(a.colour), a.uno) == theirs
        assert str(a) == str(ours)


def test_phases_and_endings_have_the_rules_core_names() -> None:
    assert set(names(pb.Phase.DESCRIPTOR).values()) == {p.value for p in Phase}
    assert set(names(pb.HandEnd.DESCRIPTOR).values()) == {h.value for h in HandEnd}
    # the server adds forfeit and aborted to the rules core's match endings
    assert set(names(pb.MatchEnd.DESCRIPTOR).values()) == {m.value for m in MatchEnd} | {"forfeit", "aborted"}


def test_a_whole_match_decodes() -> None:
    rng = random.Random(5)
    match = new_match(RulesConfig(players=3, target_score=200), rng)
    phases: set[str] = set()
    sent = 0
    while match.result is None:
        seat, legal = match.hand.to_move, legal_actions(match)
        events = [codec.event(seen_by(e, seat)) for e in match.events[sent:]]
        sent = len(match.events)
        request = codec.decision_request(match, seat, legal, "m", "m#1", 900, events)
        observation = observation_from("m", request)
        assert observation.phase == match.hand.phase.value
        assert [a.id for a in observation.legal] == [a.id for a in legal]
        assert all(event_from(e).kind == e.WhichOneof("kind") for e in events)
        phases.add(observation.phase)
        apply(match, rng.choice(legal))
    assert {"turn", "drawn"} <= phases
    ended = next(e for e in match.events if isinstance(e, HandEnded))
    result = hand_result_from(bot_pb2.HandResult(match_id="m", hand=codec.hand_ended(ended)))
    assert (result.reason, result.winner, result.points) == (ended.reason.value, ended.winner, ended.points)
    assert result.reason is SdkHandEnd(ended.reason.value)
    finished = codec.match_result("m", pb.MATCH_END_FORFEIT, (0,), (1, 2, 3), [], ["a", "b", "c"], [1], [])
    assert match_result_from(finished).reason is SdkMatchEnd.FORFEIT
    assert match_result_from(finished).reason == "forfeit"  # a StrEnum: the plain string still compares


# The SDK's own types an event may hold: anything else (a protobuf name, a dict of a card) is a leak.
SDK_VALUES = (Card, Colour, DrawReason, ShuffleReason, SdkHandEnd, SdkMatchEnd, bool, int, type(None))


def sdk_values(value: object) -> bool:
    if isinstance(value, tuple):
        return all(sdk_values(v) for v in value)
    return isinstance(value, SDK_VALUES)


def test_events_speak_the_sdks_vocabulary_only() -> None:
    """Every field of every event of a few matches is an SDK enum, a Card, a tuple of them, or a number."""
    rng = random.Random(7)
    for players in (2, 5):
        match = new_match(RulesConfig(players=players, target_score=300), rng)
        while match.result is None:
            apply(match, rng.choice(legal_actions(match)))
        for event in match.events:
            view = event_from(codec.event(seen_by(event, 0)))
            assert type(view.kind) is EventKind
            assert all(sdk_values(v) for v in view.fields.values()), view
            assert sdk_values((view.seat, view.card, view.cards, view.colour, view.count, view.reason))


def test_the_typed_attributes_read_from_the_fields() -> None:
    played = event_from(codec.event(Played(2, parse_card("wild"), RulesColour.GREEN, True, 1)))
    assert (played.kind, played.seat, played.card, played.colour) == (
        EventKind.PLAYED, 2, card_from(codec.card(parse_card("wild"))), Colour.GREEN)  # fmt: skip
    assert played.fields == {
        "seat": 2,
        "card": played.card,
        "colour": Colour.GREEN,
        "uno": True,
        "cards_left": 1,
        "jump_in": False,
    }
    assert played.kind == "played" and played.colour == "green"  # StrEnums: plain strings still compare
    drew = event_from(codec.event(Drew(1, 2, None, "draw_two")))
    assert (drew.count, drew.cards, drew.reason, drew.fields["hidden"]) == (2, (), DrawReason.DRAW_TWO, True)
    shuffled = event_from(codec.event(Shuffled(RulesShuffleReason.RESHUFFLE, 40)))
    assert (shuffled.count, shuffled.cards, shuffled.reason) == (40, (), ShuffleReason.RESHUFFLE)
    ended = event_from(codec.event(HandEnded(HandEnd.NO_PROGRESS, None, (0, 0))))
    assert (ended.reason, ended.fields["winner"], ended.fields["points"]) == (
        SdkHandEnd.NO_PROGRESS,
        None,
        (0, 0),
    )
    with pytest.raises(TypeError):
        played.fields["seat"] = 3  # type: ignore[index]  # views are shared: read-only


def test_an_enum_value_this_sdk_does_not_know_is_a_clear_error() -> None:
    message = pb.Event(hand_ended=pb.HandEnded(reason=pb.HAND_END_UNSPECIFIED))
    with pytest.raises(ProtocolMismatch, match="HandEnd 0, unknown to this SDK"):
        event_from(message)
    with pytest.raises(ProtocolMismatch, match="draw reason 'fell_over'"):
        event_from(pb.Event(drew=pb.Drew(seat=1, count=1, reason="fell_over")))
    with pytest.raises(ProtocolMismatch, match="kind unknown"):
        event_from(pb.Event())


def documented_events() -> dict[str, list[str]]:
    """docs/bots.md's event table: kind -> the fields it lists, in order."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "bots.md").read_text()
    table = text[text.index("| kind | fields | what happened |") :].split("\n\n")[0]
    rows = [line.split("|") for line in table.splitlines()[2:]]
    return {row[1].strip(" `"): re.findall(r"`(\w+)`", row[2]) for row in rows}


def test_the_docs_list_every_event_kind_with_every_field_of_the_protocol() -> None:
    documented = documented_events()
    assert list(documented) == [kind.value for kind in EventKind]
    for kind, fields in documented.items():
        message = pb.Event.DESCRIPTOR.fields_by_name[kind].message_type
        assert message is not None and fields == [f.name for f in message.fields], kind


def test_the_docs_list_every_enum_the_sdk_exports() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "bots.md").read_text()
    exported = [getattr(uno_arena.sdk, name) for name in uno_arena.sdk.__all__]
    enums = [value for value in exported if isinstance(value, type) and issubclass(value, enum.Enum)]
    assert len(enums) >= 10
    for listed in enums:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{listed.__name__}` |")), "")
        assert row, f"docs/bots.md has no row for {listed.__name__}"
        if listed is not EventKind:
            assert all(f"`{member.name}`" in row for member in listed), row
