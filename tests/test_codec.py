"""The codec agrees with the .proto: enum numbers by name, cards, actions, events.

The server's hot path writes the wire format itself (`event_bytes`, `observation_bytes`,
`MatchEncoder`): over whole matches under every option and house rule, its bytes are those of the
messages built with the generated classes, view by view as `seen_by` filters them (RULINGS 29).
"""

from __future__ import annotations

import enum
import random

import pytest
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from tests import reference_encoder
from uno_arena.rules import (
    ACTIONS,
    FACES,
    ActionKind,
    Colour,
    DealerRule,
    FirstWildChooser,
    FirstWildDrawFour,
    Phase,
    Rank,
    RulesConfig,
    Scoring,
    apply,
    legal_actions,
    new_match,
    observe,
    seen_by,
)
from uno_arena.rules.event import HandEnd, HandShown, MatchEnd, Reshuffled, ShuffleReason
from uno_arena.v1 import bot_pb2, codec
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
            codec.enum_number(member)
    for member in ours:
        assert theirs.Name(codec.enum_number(member)) == f"{prefix}_{member.value.upper()}"


def test_cards_and_actions_round_trip_by_index_and_id() -> None:
    assert [codec.card(face).index for face in FACES] == list(range(54))
    assert [codec.action(a).id for a in ACTIONS] == list(range(len(ACTIONS)))
    assert codec.action_ids(ACTIONS) == list(range(len(ACTIONS)))  # looked up by identity


def test_every_event_kind_encodes() -> None:
    match = new_match(RulesConfig(players=3, target_score=100), random.Random(3))
    rng = random.Random(4)
    from uno_arena.rules import legal_actions, play

    while match.result is None:
        play(match, rng.choice(legal_actions(match)))
    kinds = {codec.event(seen_by(e, 0)).WhichOneof("kind") for e in match.events}
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
        built = reference_encoder.decision_request(
            match, seat, legal, "t/m", "t/m#7", 900, [codec.event(e) for e in events]
        )
        encoded = reference_encoder.decision_request_bytes(
            match, seat, legal, "t/m", "t/m#7", 900, [codec.event_element(e) for e in events]
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
    hidden = [codec.event_element(seen_by(e, 1)) for e in match.events]
    chunk = codec.event_log_chunk(match.events)
    assert chunk == control_pb2.EventLogChunk(events=[codec.event(e) for e in match.events])
    assert len(hidden) == len(chunk.events)
    assert any(not e.drew.hidden and e.drew.cards for e in chunk.events if e.HasField("drew"))


def test_a_matchs_log_as_sent_at_its_end_is_the_built_message() -> None:
    from uno_arena.rules import apply, legal_actions
    from uno_arena.server.match_host import LOG_CHUNK_EVENTS, log_chunks
    from uno_arena.v1 import control_pb2

    rng = random.Random(9)
    match = new_match(RulesConfig(players=3, target_score=500), rng)
    while match.result is None:
        apply(match, rng.choice(legal_actions(match)))
    assert len(match.events) > LOG_CHUNK_EVENTS  # more than one chunk
    sent = [control_pb2.MatchProgress.FromString(m) for m in log_chunks(codec.MatchEncoder(match, "m", 1000))]
    events = [codec.event(e) for e in match.events]
    built = [
        control_pb2.MatchProgress(log=control_pb2.EventLogChunk(events=events[i : i + LOG_CHUNK_EVENTS]))
        for i in range(0, len(events), LOG_CHUNK_EVENTS)
    ]
    assert sent == built


# Every option and house rule; random play draws a lot, so piles are reshuffled and hands stall.
WHOLE_MATCHES = {
    "official": RulesConfig(players=2, target_score=200),
    "table_options": RulesConfig(
        players=3, dealer=DealerRule.ROTATE_LEFT, first_wild_chooser=FirstWildChooser.FIRST_PLAYER,
        first_wild_draw_four=FirstWildDrawFour.RESHUFFLE, uno_penalty=4, target_score=150,
    ),
    "penalty_points": RulesConfig(
        players=4, scoring=Scoring.PENALTY_POINTS, draw_until_playable=True, target_score=100
    ),
    "house_rules": RulesConfig(
        players=5, stacking=True, jump_in=True, seven_zero=True, multi_play=True, target_score=150
    ),
    "ten_players": RulesConfig(
        players=10, hand_size=10, max_turns_per_hand=150, max_hands_per_match=2, target_score=10_000
    ),
}  # fmt: skip


@pytest.mark.parametrize("config", WHOLE_MATCHES.values(), ids=WHOLE_MATCHES.keys())
def test_the_match_encoder_writes_the_built_requests_byte_for_byte(config: RulesConfig) -> None:
    """Each request the encoder writes (events encoded as they were logged, the discard pile grown
    card by card) is the stateless encoding's, whose message is the one built from `observe`.
    Every seat's observation, not only the mover's, is compared: what a seat may see (RULINGS 29)."""
    rng = random.Random(config.players)
    match = new_match(config, rng)
    encoder = codec.MatchEncoder(match, "t/m", 900)
    sent = [0] * config.players
    requests = 0
    while match.result is None:
        seat, legal = match.hand.to_move, legal_actions(match)
        events = [seen_by(e, seat) for e in match.events[sent[seat] :]]
        request, logged = encoder.request(seat, legal, f"t/m#{seat}.{requests}", sent[seat])
        sent[seat] = logged
        assert logged == len(match.events)
        stateless = reference_encoder.decision_request_bytes(
            match, seat, legal, "t/m", f"t/m#{seat}.{requests}", 900, [codec.event_element(e) for e in events]
        )
        assert request == stateless
        if requests % 7 == 0:  # the built messages are slow: every 7th request
            built = reference_encoder.decision_request(
                match, seat, legal, "t/m", f"t/m#{seat}.{requests}", 900, [codec.event(e) for e in events]
            )
            assert bot_pb2.ServerMessage.FromString(request) == bot_pb2.ServerMessage(decision_request=built)
            for viewer in range(config.players):  # the same message (the card lists come last)
                observed = reference_encoder.observation_bytes(
                    match.hand, viewer, match.totals, match.hand_number
                )
                assert pb.Observation.FromString(observed) == reference_encoder.observation(
                    observe(match, viewer)
                )
        requests += 1
        apply(match, rng.choice(legal))
    assert any(isinstance(e, Reshuffled) for e in match.events)  # the pile's encoding was rebuilt


@pytest.mark.parametrize("config", WHOLE_MATCHES.values(), ids=WHOLE_MATCHES.keys())
def test_each_event_is_encoded_once_per_view_as_seen_by_filters_it(config: RulesConfig) -> None:
    """Every seat's view, a spectator's (-1) and the complete log, of every event of a whole match."""
    rng = random.Random(config.players + 1)
    match = new_match(config, rng)
    while match.result is None:
        apply(match, rng.choice(legal_actions(match)))
    encoder = codec.MatchEncoder(match, "t/m", 900)
    logged = encoder.catch_up()
    assert logged == len(match.events)
    assert encoder.log(0, logged) == [codec.event(e).SerializeToString() for e in match.events]
    for viewer in range(-1, config.players):
        expected = [codec.event(seen_by(e, viewer)).SerializeToString() for e in match.events]
        assert encoder.seen_by(viewer, 0, logged) == expected
        assert [codec.event_bytes(seen_by(e, viewer)) for e in match.events] == expected
    hidden = [e for e in match.events if seen_by(e, -1) is not e]
    assert hidden  # private cards were among them
    if config.stacking:  # challenges show hands: private to the challenger
        assert any(isinstance(e, HandShown) for e in hidden)


def test_the_discard_pile_is_rebuilt_when_its_list_is_replaced_or_shrinks() -> None:
    match = new_match(RulesConfig(players=2), random.Random(1))
    encoder = codec.MatchEncoder(match, "t/m", 900)
    pile = match.hand.discards
    whole = encoder._discards(pile)
    assert encoder._discards(pile) is whole  # nothing laid since: not encoded again
    pile.append(FACES[5])
    assert encoder._discards(pile) == whole + codec._CARD_IN_DISCARDS[5]
    pile[-1] = FACES[6]  # the same length, another last card: rebuilt, not trusted
    assert encoder._discards(pile) == whole + codec._CARD_IN_DISCARDS[6]
    assert encoder._discards([FACES[7]]) == codec._CARD_IN_DISCARDS[7]  # a reshuffle's new list
