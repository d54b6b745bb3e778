"""The SDK's typed views decode what the server encodes, with every enum read from the bindings."""

from __future__ import annotations

import enum
import random

import pytest

from uno_arena.rules import ACTIONS, FACES, Phase, RulesConfig, apply, legal_actions, new_match, seen_by
from uno_arena.rules.event import HandEnd, HandEnded, MatchEnd
from uno_arena.sdk import ActionKind, Colour, Kind
from uno_arena.sdk._protocol import ProtocolMismatch, members
from uno_arena.sdk.actions import action_from
from uno_arena.sdk.cards import card_from, colour_named, colour_of
from uno_arena.sdk.events import event_from, hand_result_from, match_result_from
from uno_arena.sdk.observation import observation_from
from uno_arena.server import wire
from uno_arena.v1 import bot_pb2
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
        assert colour_named(f"COLOUR_{colour.name}") is colour
    assert colour_of(pb.COLOUR_UNSPECIFIED) is None
    assert colour_named("COLOUR_UNSPECIFIED") is None
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
        card = card_from(wire.card(face))
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
        a = action_from(wire.action(ours))
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
        events = [wire.event(seen_by(e, seat)) for e in match.events[sent:]]
        sent = len(match.events)
        request = wire.decision_request(match, seat, legal, "m", "m#1", 900, events)
        observation = observation_from("m", request)
        assert observation.phase == match.hand.phase.value
        assert [a.id for a in observation.legal] == [a.id for a in legal]
        assert all(event_from(e).kind == e.WhichOneof("kind") for e in events)
        phases.add(observation.phase)
        apply(match, rng.choice(legal))
    assert {"turn", "drawn"} <= phases
    ended = next(e for e in match.events if isinstance(e, HandEnded))
    result = hand_result_from(bot_pb2.HandResult(match_id="m", hand=wire.hand_ended(ended)))
    assert (result.reason, result.winner, result.points) == (ended.reason.value, ended.winner, ended.points)
    finished = wire.match_result("m", pb.MATCH_END_FORFEIT, (0,), (1, 2, 3), [], ["a", "b", "c"], [1], [])
    assert match_result_from(finished).reason == "forfeit"
