"""The wire encoding agrees with the .proto: enum numbers by name, cards, actions, events."""

from __future__ import annotations

import enum
import random

import pytest
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from uno_arena.rules import (
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
from uno_arena.rules.event import HandEnd, MatchEnd, ShuffleReason
from uno_arena.server import wire
from uno_arena.v1 import game_pb2 as pb

ENUMS = [(Colour, pb.Colour, "COLOUR"), (Rank, pb.Rank, "RANK"), (ActionKind, pb.ActionKind, "ACTION_KIND"),
         (Phase, pb.Phase, "PHASE"), (HandEnd, pb.HandEnd, "HAND_END"), (MatchEnd, pb.MatchEnd, "MATCH_END"),
         (ShuffleReason, pb.ShuffleReason, "SHUFFLE_REASON")]  # fmt: skip


@pytest.mark.parametrize(("ours", "theirs", "prefix"), ENUMS, ids=[e[2] for e in ENUMS])
def test_every_enum_member_maps_to_the_proto_value_of_the_same_name(
    ours: type[enum.StrEnum], theirs: EnumTypeWrapper, prefix: str
) -> None:
    # encode members of every enum first, so a cache shared between enums would show
    for other, _, _ in ENUMS:
        for member in other:
            wire.enum_number(member)
    for member in ours:
        assert theirs.Name(wire.enum_number(member)) == f"{prefix}_{member.value.upper()}"


def test_cards_and_actions_round_trip_by_index_and_id() -> None:
    assert [wire.card(face).index for face in FACES] == list(range(54))
    assert [wire.action(a).id for a in ACTIONS] == list(range(len(ACTIONS)))


def test_every_event_kind_encodes() -> None:
    match = new_match(RulesConfig(players=3, target_score=100), random.Random(3))
    rng = random.Random(4)
    from uno_arena.rules import legal_actions, play

    while match.result is None:
        play(match, rng.choice(legal_actions(match)))
    kinds = {wire.event(seen_by(e, 0)).WhichOneof("kind") for e in match.events}
    assert {"hand_started", "dealer_drew", "dealt", "played", "drew", "hand_ended", "match_ended"} <= kinds


@pytest.mark.parametrize("players", [2, 3, 6, 10])
def test_the_pre_encoded_decision_request_is_the_built_message(players: int) -> None:
    from uno_arena.rules import apply, legal_actions
    from uno_arena.v1 import bot_pb2

    rng = random.Random(players)
    match = new_match(RulesConfig(players=players, target_score=200), rng)
    sent, shown = [0] * players, 0
    while match.result is None:
        seat, legal = match.hand.to_move, legal_actions(match)
        events = [seen_by(e, seat) for e in match.events[sent[seat] :]]
        sent[seat] = len(match.events)
        built = wire.decision_request(
            match, seat, legal, "t/m", "t/m#7", 900, [wire.event(e) for e in events]
        )
        encoded = wire.decision_request_bytes(
            match, seat, legal, "t/m", "t/m#7", 900, [wire.event_element(e) for e in events]
        )
        assert bot_pb2.ServerMessage.FromString(encoded) == bot_pb2.ServerMessage(decision_request=built)
        shown += len(built.observation.shown) > 0
        apply(match, rng.choice(legal))
    assert shown > 0  # hands shown in challenges were among the states compared


def test_the_log_chunk_from_cached_encodings_is_the_built_message() -> None:
    from uno_arena.rules import apply, legal_actions
    from uno_arena.v1 import control_pb2

    rng = random.Random(8)
    match = new_match(RulesConfig(players=4, target_score=200), rng)
    while match.result is None:
        apply(match, rng.choice(legal_actions(match)))
    # encode what seat 1 saw first: a hidden draw must not be served for the whole one
    hidden = [wire.event_element(seen_by(e, 1)) for e in match.events]
    chunk = wire.event_log_chunk(match.events)
    assert chunk == control_pb2.EventLogChunk(events=[wire.event(e) for e in match.events])
    assert len(hidden) == len(chunk.events)
    assert any(not e.drew.hidden and e.drew.cards for e in chunk.events if e.HasField("drew"))
