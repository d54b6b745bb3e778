"""The codec's decoders give back the rules core's own values: what a connected bot receives equals
what the rules core says for the same moment, over whole matches, for every seat and event kind."""

from __future__ import annotations

import enum
import random
import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import DecodeError

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
    decoders = [codec.DecisionDecoder() for _ in range(players)]  # each seat's bot's (the SDK's path)
    decisions = 0
    while match.result is None:
        seat, legal = match.hand.to_move, legal_actions(match)
        first = sent[seat]
        deliver(seat)
        raw, _ = encoder.request(seat, legal, f"m#{seat}.{decisions}", first)
        request = bot_pb2.ServerMessage.FromString(raw).decision_request
        decoded = codec.decision_from(request)
        assert decoded == observe(match, seat, "m")
        assert decoded.legal_actions == tuple(legal) and all(
            a is b for a, b in zip(decoded.legal, legal, strict=True)
        )
        events = codec.events_from(request.events)
        assert events == [seen_by(e, seat) for e in match.events[first:]]
        read = codec.decision_from_bytes(raw, decoders[seat])
        assert read == (request.match_id, request.request_id, 900, decoded, tuple(events))
        assert all(a is b for a, b in zip(read.observation.legal_actions, legal, strict=True))
        assert all(a is b for a, b in zip(read.observation.cards, decoded.cards, strict=True))
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
    """Across options that reach them all: the house rules' swaps and passed hands first (one match
    of them meets every kind today), then first-card Wilds, reshuffles, challenges and catches, each
    played only while a kind is still unseen."""
    seen: set[EventKind] = set()
    options: list[dict[str, Any]] = [
        {"players": 4, "target_score": 200, "stacking": True, "jump_in": True, "seven_zero": True,
         "multi_play": True},
        {"players": 3, "target_score": 400, "first_wild_chooser": "first_player"},
        {"players": 2, "target_score": 60, "draw_until_playable": True, "dealer": "rotate_left"},
        {"players": 6, "target_score": 200, "first_wild_draw_four": "reshuffle", "max_turns_per_hand": 60},
    ]  # fmt: skip
    for seed in range(1, 4):
        for number, option in enumerate(options):
            if seen == set(EventKind):
                break
            kinds, _ = play_both_ways(RulesConfig.from_dict(option), seed * 10 + (number + 3) % 4)
            seen |= kinds
    assert seen == set(EventKind)


def test_what_this_codec_does_not_know_is_a_clear_error() -> None:
    with pytest.raises(ProtocolMismatch, match="HandEnd 0 is unknown"):
        codec.event_from(pb.Event(hand_ended=pb.HandEnded(reason=pb.HAND_END_UNSPECIFIED)))
    with pytest.raises(ProtocolMismatch, match="draw reason 'fell_over'"):
        codec.event_from(pb.Event(drew=pb.Drew(seat=1, count=1, reason="fell_over")))
    with pytest.raises(ProtocolMismatch, match="kind unknown"):
        codec.event_from(pb.Event())
    with pytest.raises(ProtocolMismatch, match=r"first_card\.card is missing"):
        codec.event_from(pb.Event(first_card=pb.FirstCard()))
    required = {f"{k}.{d.fields[i][0]}" for k, d in codec._EVENT_DECODERS.items() for i in d.required}
    assert required == {"dealer_drew.card", "first_card.card", "played.card", "colour_chosen.colour",
                        "shuffled.reason", "hand_ended.reason", "match_ended.reason"}  # fmt: skip
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


@pytest.mark.parametrize("rule", ["stacking", "jump_in", "seven_zero", "multi_play"])
def test_whole_matches_with_each_house_rule_decode_from_the_bytes(rule: str) -> None:
    _, decisions = play_both_ways(RulesConfig.from_dict({"players": 3, "target_score": 200, rule: True}), 5)
    assert decisions > 50


# --- the bytes decoder on encodings other than the server's: any valid one decodes the same --------

Field = tuple[int, int, Any]  # (number, wire type, value: an int, bytes, or a group's fields)


def wire_fields(data: bytes) -> list[Field]:
    """The fields of a message, in order, as protobuf itself reads them (as unknown fields)."""
    from google.protobuf import empty_pb2
    from google.protobuf.unknown_fields import UnknownFieldSet

    def fields(found: Any) -> list[Field]:
        return [(f.field_number, f.wire_type, fields(f.data) if f.wire_type == 3 else f.data) for f in found]

    return fields(UnknownFieldSet(empty_pb2.Empty.FromString(data)))


def wire_varint(value: int, padding: int = 0) -> bytes:
    """A varint; with `padding`, that many bytes more than needed (valid, if over-long)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out += bytes([value | 0x80, *[0x80] * (padding - 1), 0]) if padding else bytes([value])
    return bytes(out)


def wire(fields: list[Field], padding: int = 0) -> bytes:
    """The fields written as a message, each varint (keys and lengths too) `padding` bytes too long."""
    out = bytearray()
    for number, kind, value in fields:
        out += wire_varint(number << 3 | kind, padding)
        if kind == 0:
            out += wire_varint(value, padding)
        elif kind == 1:
            out += (value & (1 << 64) - 1).to_bytes(8, "little")
        elif kind == 5:
            out += (value & (1 << 32) - 1).to_bytes(4, "little")
        elif kind == 2:
            out += wire_varint(len(value), padding) + value
        else:  # a group: its fields, then its end
            out += wire(value, padding) + wire_varint(number << 3 | 4, padding)
    return bytes(out)


def varints(data: bytes) -> list[int]:
    values, value, shift = [], 0, 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            values.append(value)
            value, shift = 0, 0
    return values


UNKNOWN: list[Field] = [
    (99, 0, 7),
    (100, 1, 5),
    (101, 2, b"\x08\x01junk"),
    (102, 5, 9),
    (103, 3, [(1, 0, 4)]),
]
# Per message: its fields that are messages (rewritten too) or packed, and its varint fields (by number)
NESTED: dict[str, dict[int, str]] = {
    "request": {3: "observation", 4: "action"},
    "observation": {8: "card", 9: "card", 11: "card", 14: "card", 15: "shown", 12: "packed", 17: "packed"},
    "shown": {2: "card"},
    "action": {3: "card"},
    "card": {},
}
SCALARS: dict[str, list[int]] = {
    "request": [5],
    "observation": [1, 2, 4, 5, 6, 13, 16, 18, 19, 20],
    "shown": [1],
    "action": [2, 4, 5],
    "card": [1, 2, 3],
}


def shuffled(fields: list[Field], rng: random.Random) -> list[Field]:
    """The fields in another order, those of one number in theirs (a repeated field's elements, the
    last value of a singular field)."""
    numbers = [number for number, _, _ in fields]
    rng.shuffle(numbers)
    queues: dict[int, list[Field]] = {}
    for field in fields:
        queues.setdefault(field[0], []).append(field)
    return [queues[number].pop(0) for number in numbers]


def unusual(data: bytes, what: str, rng: random.Random) -> bytes:
    """Another valid encoding of a message of kind `what`: its fields (and its nested messages')
    reordered, unknown fields added, packed fields unpacked, defaults written out, varints too long."""
    fields: list[Field] = []
    for number, kind, value in wire_fields(data):
        nested = NESTED[what].get(number) if kind == 2 else None
        if nested == "packed" and rng.random() < 0.7:  # unpacked: a varint field for each value
            fields += [(number, 0, v) for v in varints(value)]
        elif nested in NESTED:
            fields.append((number, kind, unusual(value, nested, rng)))
        else:
            fields.append((number, kind, value))
    if rng.random() < 0.5:
        fields = shuffled(fields, rng)
    if rng.random() < 0.5:
        fields.insert(rng.randrange(len(fields) + 1), rng.choice(UNKNOWN))
    for number in SCALARS[what]:  # unset varints written out with their default, 0
        if all(n != number for n, _, _ in fields) and rng.random() < 0.5:
            fields.insert(rng.randrange(len(fields) + 1), (number, 0, 0))
    return wire(fields, padding=1 if rng.random() < 0.2 else 0)


def decoded_by_protobuf(raw: bytes) -> codec.DecodedRequest:
    """The reference: protobuf's parse, then the codec's decoders of the parsed messages."""
    request = bot_pb2.ServerMessage.FromString(raw).decision_request
    events = tuple(codec.events_from(request.events))
    observation = codec.decision_from(request)
    return codec.DecodedRequest(
        request.match_id, request.request_id, request.deadline_ms, observation, events
    )


def requests_of_a_match(config: RulesConfig, seed: int) -> list[bytes]:
    """Each request of a match played at random, as the server encodes it."""
    match, rng = new_match(config, random.Random(seed)), random.Random(seed + 1)
    encoder = codec.MatchEncoder(match, "m-1", 900)
    sent = [0] * config.players
    found: list[bytes] = []
    while match.result is None:
        seat, legal = match.hand.to_move, legal_actions(match)
        raw, sent[seat] = encoder.request(seat, legal, f"m-1#{len(found)}", sent[seat])
        found.append(raw)
        apply(match, rng.choice(legal))
    return found


def test_other_valid_encodings_decode_the_same() -> None:
    """Fields in another order, unknown fields, unpacked repeated fields, explicit defaults, over-long
    varints, an observation sent in two parts: decoded as protobuf decodes them."""
    rng = random.Random(5)
    config = RulesConfig.from_dict({"players": 3, "target_score": 150, "seven_zero": True, "stacking": True})
    decoder = codec.DecisionDecoder()
    for raw in requests_of_a_match(config, 3)[::8]:
        expected = codec.decision_from_bytes(raw)
        assert expected == decoded_by_protobuf(raw)
        for _ in range(3):
            request = unusual(wire_fields(raw)[0][2], "request", rng)
            if rng.random() < 0.3:  # the observation in two parts, which protobuf merges
                fields = wire_fields(request)
                at = next(i for i, f in enumerate(fields) if f[0] == 3)
                parts = wire_fields(fields[at][2])
                cut = rng.randrange(len(parts) + 1)
                fields[at : at + 1] = [(3, 2, wire(parts[:cut])), (3, 2, wire(parts[cut:]))]
                request = wire(fields)
            message = wire([(3, 2, request), rng.choice(UNKNOWN)])
            assert decoded_by_protobuf(message) == expected
            assert codec.decision_from_bytes(message, decoder) == expected
            assert codec.DecisionDecoder().decision_request(request) == expected


def test_negative_and_large_values_decode_as_protobuf_reads_them() -> None:
    observation = pb.Observation(seat=1, players=3, phase=pb.PHASE_TURN, direction=-1, top=pb.Card(index=5),
                                 scores=[-20, 300, 70000], target_score=-1, turn=100000,
                                 hand_sizes=[200, 3, 1], draw_pile_size=2**32 - 1)  # fmt: skip
    request = bot_pb2.DecisionRequest(match_id="m é", request_id="r", observation=observation,
                                      deadline_ms=2**32 - 1)  # fmt: skip
    raw = bot_pb2.ServerMessage(decision_request=request).SerializeToString()
    decoded = codec.decision_from_bytes(raw)
    assert decoded == decoded_by_protobuf(raw)
    assert decoded.observation.scores == (-20, 300, 70000) and decoded.observation.direction == -1
    assert (decoded.observation.target_score, decoded.deadline_ms, decoded.match_id) == (-1, 2**32 - 1, "m é")
    # a top card sent twice merges: the index given first stays when the second gives none
    top_again = wire([(9, 2, b"\x08\x01")])  # colour red, no index
    twice = wire([(3, 2, wire([(3, 2, observation.SerializeToString() + top_again)]))])
    assert codec.decision_from_bytes(twice).observation.top is FACES[5]
    assert decoded_by_protobuf(twice).observation.top is FACES[5]


def test_other_kinds_of_server_message_are_left_to_protobuf() -> None:
    decoder = codec.DecisionDecoder()
    pong = bot_pb2.ServerMessage(pong=bot_pb2.Pong(nonce=3)).SerializeToString()
    assert decoder.server_message(pong) is None
    assert decoder.server_message(b"") is None
    later = requests_of_a_match(RulesConfig(players=2), 1)[0] + pong  # the oneof's last kind wins
    assert decoder.server_message(later) is None and bot_pb2.ServerMessage.FromString(later).HasField("pong")
    with pytest.raises(ProtocolMismatch, match="without a decision request"):
        codec.decision_from_bytes(later)


def test_the_discard_piles_remembered_are_bounded_and_never_trusted() -> None:
    decoder = codec.DecisionDecoder(matches=4)
    for number, raw in enumerate(requests_of_a_match(RulesConfig(players=2), 2)[:60]):
        message = bot_pb2.ServerMessage.FromString(raw)
        message.decision_request.match_id = f"m-{number % 7}"  # seven matches' ids, one match's piles
        raw = message.SerializeToString()
        assert decoder.server_message(raw) == decoded_by_protobuf(raw)
        assert len(decoder._runs) <= 4


def test_malformed_bytes_are_a_protocol_mismatch() -> None:
    requests = requests_of_a_match(RulesConfig(players=3), 4)
    raw = requests[len(requests) // 2]
    decoder = codec.DecisionDecoder()
    decoder.server_message(raw)
    for stop in range(len(raw)):  # every truncation, with the decoder that has seen the whole
        with pytest.raises(ProtocolMismatch):
            codec.decision_from_bytes(raw[:stop], decoder)
    rng = random.Random(1)
    for _ in range(3000):  # bytes changed at random: read as protobuf reads them, or a ProtocolMismatch
        changed = bytearray(raw)
        for _ in range(rng.randint(1, 3)):
            changed[rng.randrange(len(changed))] = rng.randrange(256)
        try:
            expected: codec.DecodedRequest | None = decoded_by_protobuf(bytes(changed))
        except (ProtocolMismatch, DecodeError):
            expected = None
        try:
            decoded = codec.decision_from_bytes(bytes(changed), decoder)
        except ProtocolMismatch:
            continue
        # what protobuf refuses may still decode here: the fields the codec skips are not checked
        assert expected is None or decoded == expected


def request_bytes(**fields: Any) -> bytes:
    fields.setdefault("observation", pb.Observation(phase=pb.PHASE_TURN))
    return bot_pb2.ServerMessage(decision_request=bot_pb2.DecisionRequest(**fields)).SerializeToString()


def observed(**fields: Any) -> bytes:
    """A request whose observation has these fields (a turn's phase unless given)."""
    return request_bytes(observation=pb.Observation(**{"phase": pb.PHASE_TURN, **fields}))


def event(**kind: Any) -> bytes:
    return request_bytes(events=[pb.Event(**kind)])


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (observed(cards=[pb.Card(index=77)]), "card index 77"),
        (observed(discards=[pb.Card(index=54)]), "card index 54"),
        (observed(top=pb.Card(index=99)), "card index 99"),
        (observed(drawn=pb.Card(index=60)), "card index 60"),
        (observed(shown=[pb.ShownHand(cards=[pb.Card(index=55)])]), "card index 55"),
        (observed(phase=99), "Phase 99 is unknown"),
        (observed(colour=7), "Colour 7 is unknown"),
        (request_bytes(legal_actions=[pb.Action(id=9999)]), "action id 9999"),
        (event(played=pb.Played(card=pb.Card(index=80))), "card index 80"),
        (event(drew=pb.Drew(count=1, reason="fell_over")), "draw reason 'fell_over'"),
        (event(), "kind unknown"),
        (event(played=pb.Played(seat=1)), "played.card is missing"),  # compiled, None is refused
        (event(colour_chosen=pb.ColourChosen(seat=1)), "colour_chosen.colour is missing"),
        (wire([(3, 2, wire([(6, 2, wire([(99, 2, b"")]))]))]), "kind unknown"),  # an event of a newer kind
        (wire([(3, 2, wire([(6, 2, b"\x0a\x05\x08")]))]), "event that does not parse"),
        (wire([(3, 2, wire([(1, 2, b"\xff\xfe")]))]), "not UTF-8"),
        (wire([(3, 2, b"\x0f\x01")]), "wire type 7"),
        (wire([(3, 2, b"\x00\x01")]), "field number 0"),
        (wire([(3, 2, b"\x28" + b"\xff" * 11)]), "longer than 10 bytes"),
        (wire([(3, 2, b"\x0a\x05ab")]), "runs past the end"),
        (wire([(3, 2, wire([(3, 2, b"\x42\x09\x18\x01")]))]), "runs past the end"),  # a card's length
        (wire([(3, 2, b"\x1b\x08\x01")]), "does not end"),  # a group without its end
        (request_bytes(deadline_ms=5)[:-1], "runs past the end of its message"),  # truncated
        (wire([(3, 2, b"\x28\xe8")]), "end inside a field"),
    ],
)
def test_what_the_bytes_decoder_cannot_decode_is_a_clear_error(raw: bytes, message: str) -> None:
    with pytest.raises(ProtocolMismatch, match=message):
        codec.decision_from_bytes(raw)
