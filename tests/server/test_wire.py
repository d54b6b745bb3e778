"""The wire encoding agrees with the .proto: enum numbers by name, cards, actions, events."""

from __future__ import annotations

import random

import pytest

from server import wire
from server.rules import (
    ACTIONS,
    FACES,
    ActionKind,
    Colour,
    Phase,
    Rank,
    RulesConfig,
    new_match,
    seen_by,
)
from server.rules.event import HandEnd, MatchEnd, ShuffleReason
from uno_arena.v1 import game_pb2 as pb

ENUMS = [(Colour, pb.Colour, "COLOUR"), (Rank, pb.Rank, "RANK"), (ActionKind, pb.ActionKind, "ACTION_KIND"),
         (Phase, pb.Phase, "PHASE"), (HandEnd, pb.HandEnd, "HAND_END"), (MatchEnd, pb.MatchEnd, "MATCH_END"),
         (ShuffleReason, pb.ShuffleReason, "SHUFFLE_REASON")]  # fmt: skip


@pytest.mark.parametrize(("ours", "theirs", "prefix"), ENUMS, ids=[e[2] for e in ENUMS])
def test_every_enum_member_maps_to_the_proto_value_of_the_same_name(
    ours: type, theirs: object, prefix: str
) -> None:
    # encode members of every enum first, so a cache shared between enums would show
    for other, _, _ in ENUMS:
        for member in other:
            wire.enum_number(member)
    for member in ours:
        assert theirs.Name(wire.enum_number(member)) == f"{prefix}_{member.value.upper()}"  # type: ignore[attr-defined]


def test_cards_and_actions_round_trip_by_index_and_id() -> None:
    assert [wire.card(face).index for face in FACES] == list(range(54))
    assert [wire.action(a).id for a in ACTIONS] == list(range(len(ACTIONS)))


def test_every_event_kind_encodes() -> None:
    match = new_match(RulesConfig(players=3, target_score=100), random.Random(3))
    rng = random.Random(4)
    from server.rules import legal_actions, play

    while match.result is None:
        play(match, rng.choice(legal_actions(match)))
    kinds = {wire.event(seen_by(e, 0)).WhichOneof("kind") for e in match.events}
    assert {"hand_started", "dealer_drew", "dealt", "played", "drew", "hand_ended", "match_ended"} <= kinds
