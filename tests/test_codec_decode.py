"""The codec's decoders give back the rules core's own values: what a connected bot receives equals
what the rules core says for the same moment, over whole matches, for every seat and event kind."""

from __future__ import annotations

import enum
import random
import re
from pathlib import Path
from typing import Any

import pytest

import uno_arena.sdk
from uno_arena.rules import (
    ACTIONS,
    FACES,
    EventKind,
    RulesConfig,
    apply,
    legal_actions,
    new_match,
    observe,
    public,
    seen_by,
)
from uno_arena.rules.event import EVENT_CLASSES, HandEnded
from uno_arena.sdk.messages import hand_result_from, match_info_from
from uno_arena.v1 import bot_pb2, codec
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.codec import ProtocolMismatch

ROOT = Path(__file__).resolve().parents[1]


def test_every_card_and_action_decodes_to_the_interned_value() -> None:
    for face in FACES:
        assert codec.card_from(codec.card(face)) is face
    for action in ACTIONS:
        assert codec.action_from(codec.action_message(action)) is action


def play_both_ways(config: RulesConfig, seed: int) -> tuple[set[EventKind], int]:
    """Plays a match at random; at every decision, what the server's hot path encodes for the seat
    decodes to `observe` with the match id, and every event each seat (and a spectator) is sent
    decodes to the event `seen_by` gives. Returns the event kinds met and the decisions made."""
    match, rng = new_match(config, random.Random(seed)), random.Random(seed + 1)
    players = config.players
    sent = [0] * players
    kinds: set[EventKind] = set()

    def deliver(seat: int) -> None:
        fresh = [seen_by(e, seat) for e in match.events[sent[seat] :]]
        sent[seat] = len(match.events)
        assert codec.events_from([codec.event(e) for e in fresh]) == fresh
        for event in fresh:
            kinds.add(event.kind)
            if seat == 0:  # once: what a spectator is sent
                assert codec.event_from(codec.event(public(event))) == public(event)
            if isinstance(event, HandEnded):
                totals = match.totals_after(event)
                message = bot_pb2.HandResult(match_id="m", hand=codec.hand_ended(event), totals=totals)
                result = hand_result_from(message)
                assert (result.hand, result.totals, result.reason) == (event, tuple(totals), event.reason)

    bots = [f"bot{s}" for s in range(players)]
    for seat in range(players):
        started = bot_pb2.MatchStarted(match_id="m", seat=seat, bots=bots, rules=codec.rules(config),
                                       decision_timeout_ms=750)  # fmt: skip
        info = match_info_from(started)
        assert (info.rules, info.seat, info.bots, info.decision_timeout) == (config, seat, tuple(bots), 0.75)
    encoder = codec.MatchEncoder(match, "m", 900)  # the server's hot path
    decisions = 0
    while match.result is None:
        seat, legal = match.hand.to_move, legal_actions(match)
        first = sent[seat]
        deliver(seat)
        raw, _ = encoder.request(seat, legal, "m#1", first)
        request = bot_pb2.ServerMessage.FromString(raw).decision_request
        decoded = codec.decision_from(request)
        assert decoded == observe(match, seat, "m")
        assert decoded.legal_actions == tuple(legal) and all(
            a is b for a, b in zip(decoded.legal, legal, strict=True)
        )
        assert codec.events_from(request.events) == [seen_by(e, seat) for e in match.events[first:]]
        decisions += 1
        apply(match, rng.choice(legal))
    for seat in range(players):
        deliver(seat)
    result = match.result
    assert result is not None
    for forfeited in ((), (1,)):
        message = codec.match_result("m", codec.MATCH_ENDS[result.reason], result.winners, result.totals,
                                    match.hand_results, bots, list(forfeited), [0] * players)  # fmt: skip
        decoded_result = codec.match_result_from(message)
        assert decoded_result.hands == result.hands and decoded_result.winners == result.winners
        assert (decoded_result.totals, decoded_result.reason) == (result.totals, result.reason)
        assert (decoded_result.match_id, decoded_result.bots, decoded_result.forfeited) == (
            "m",
            tuple(bots),
            forfeited,
        )
    return kinds, decisions


@pytest.mark.parametrize("players", [2, 4, 10])
@pytest.mark.parametrize("seed", [1, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (2, 3))])
def test_whole_matches_decode_to_the_rules_cores_values(players: int, seed: int) -> None:
    config = RulesConfig(players=players, target_score=300 if players < 10 else 150)
    kinds, decisions = play_both_ways(config, seed)
    assert decisions > 50
    assert {EventKind.PLAYED, EventKind.DREW, EventKind.DEALT, EventKind.HAND_ENDED} <= kinds


def test_every_event_kind_decodes() -> None:
    """Across options that reach them all: first-card Wilds, reshuffles, challenges, catches,
    and the house rules' swaps and passed hands."""
    seen: set[EventKind] = set()
    options: list[dict[str, Any]] = [
        {"players": 3, "target_score": 400, "first_wild_chooser": "first_player"},
        {"players": 2, "target_score": 60, "draw_until_playable": True, "dealer": "rotate_left"},
        {"players": 6, "target_score": 200, "first_wild_draw_four": "reshuffle", "max_turns_per_hand": 60},
        {"players": 4, "target_score": 200, "stacking": True, "jump_in": True, "seven_zero": True,
         "multi_play": True},
    ]  # fmt: skip
    for number, option in enumerate(options):
        for seed in range(1, 4):
            kinds, _ = play_both_ways(RulesConfig.from_dict(option), seed * 10 + number)
            seen |= kinds
    assert seen == set(EventKind)


def test_what_this_codec_does_not_know_is_a_clear_error() -> None:
    with pytest.raises(ProtocolMismatch, match="HandEnd 0 is unknown"):
        codec.event_from(pb.Event(hand_ended=pb.HandEnded(reason=pb.HAND_END_UNSPECIFIED)))
    with pytest.raises(ProtocolMismatch, match="draw reason 'fell_over'"):
        codec.event_from(pb.Event(drew=pb.Drew(seat=1, count=1, reason="fell_over")))
    with pytest.raises(ProtocolMismatch, match="kind unknown"):
        codec.event_from(pb.Event())
    with pytest.raises(ProtocolMismatch, match="card index 54"):
        codec.card_from(pb.Card(index=54))
    with pytest.raises(ProtocolMismatch, match="action id 9999"):
        codec.action_from(pb.Action(id=9999))
    request = bot_pb2.DecisionRequest(observation=pb.Observation(phase=99, top=pb.Card(index=3)))
    with pytest.raises(ProtocolMismatch, match="Phase 99 is unknown"):
        codec.decision_from(request)
    request = bot_pb2.DecisionRequest(observation=pb.Observation(cards=[pb.Card(index=77)]))
    with pytest.raises(ProtocolMismatch, match="out of range"):
        codec.decision_from(request)


def test_every_event_class_is_a_kind_of_the_protocols_oneof() -> None:
    oneof = [f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields]
    assert sorted(oneof) == sorted(kind.value for kind in EventKind) == sorted(k.value for k in EVENT_CLASSES)
    for kind, cls in EVENT_CLASSES.items():
        assert kind.value == re.sub(r"(?<!^)([A-Z])", r"_\1", cls.__name__).lower()


def documented_events() -> dict[str, list[str]]:
    """docs/bots.md's event table: kind -> the fields it lists, in order."""
    text = (ROOT / "docs" / "bots.md").read_text()
    table = text[text.index("| kind | class and fields | what happened |") :].split("\n\n")[0]
    rows = [line.split("|") for line in table.splitlines()[2:]]
    return {row[1].strip(" `"): re.findall(r"`(\w+)`", row[2]) for row in rows}


def test_the_docs_list_every_event_kind_with_its_class_and_fields() -> None:
    documented = documented_events()
    assert sorted(documented) == sorted(kind.value for kind in EventKind)
    for kind, names in documented.items():
        cls = EVENT_CLASSES[EventKind(kind)]
        fields = [name for name in cls.__dataclass_fields__]
        assert names == [cls.__name__, *fields], kind


def test_the_docs_list_every_enum_the_sdk_exports() -> None:
    text = (ROOT / "docs" / "bots.md").read_text()
    exported = [getattr(uno_arena.sdk, name) for name in uno_arena.sdk.__all__]
    enums = [value for value in exported if isinstance(value, type) and issubclass(value, enum.Enum)]
    assert len(enums) >= 10
    for listed in enums:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{listed.__name__}` |")), "")
        assert row, f"docs/bots.md has no row for {listed.__name__}"
        if listed is not EventKind:
            assert all(f"`{member.name}`" in row for member in listed), row
