"""The typed match record: built from a FinishedMatch, one JSON encoding, names from the bindings."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from uno_arena.records.match import FAULT_KINDS, Faults, HandRecord, MatchRecord
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb
from uno_arena.v1.names import name_of, number_of


def finished() -> control_pb2.FinishedMatch:
    result = pb.MatchResult(
        match_id="m", bots=["a", "b", "c"], reason=pb.MATCH_END_FORFEIT, winners=[0], totals=[510, 40, 0],
        forfeited=[2], hands=[pb.HandEnded(reason=pb.HAND_END_PLAYED_OUT, winner=0, points=[510, 0, 0]),
                              pb.HandEnded(reason=pb.HAND_END_MAX_TURNS, points=[0, 40, 0])],
    )  # fmt: skip
    faults = [pb.Fault(seat=2, kind=kind) for kind in (pb.FAULT_KIND_TIMEOUT, pb.FAULT_KIND_TIMEOUT,
                                                       pb.FAULT_KIND_DISCONNECTED)]  # fmt: skip
    faults.append(pb.Fault(seat=1, kind=pb.FAULT_KIND_INVALID))
    faults.append(pb.Fault(seat=0, kind=pb.FAULT_KIND_BOT_ERROR))
    return control_pb2.FinishedMatch(result=result, seed=9, actions=[1, 2, 3], faults=faults)


def test_a_record_holds_the_result_as_typed_values() -> None:
    record = MatchRecord.from_finished(finished(), "cup", 4, "cup-m00004")
    assert (record.match_id, record.tournament, record.index, record.bots) == (
        "cup-m00004",
        "cup",
        4,
        ("a", "b", "c"),
    )
    assert record.reason == pb.MATCH_END_FORFEIT and record.reason_name == "forfeit"
    assert record.hands == (HandRecord(0, (510, 0, 0), pb.HAND_END_PLAYED_OUT),
                            HandRecord(None, (0, 40, 0), pb.HAND_END_MAX_TURNS))  # fmt: skip
    assert record.faults == (Faults(bot_error=1), Faults(invalid=1), Faults(timeout=2, disconnected=1))
    assert (record.seed, record.actions, record.forfeited) == (9, 3, (2,))


def test_one_encoding_reads_back_the_same() -> None:
    record = MatchRecord.from_finished(finished(), "cup", 4, "cup-m00004")
    assert MatchRecord.from_json(record.to_json()) == record
    stored = record.to_dict()
    assert stored["reason"] == "forfeit" and stored["hands"][1]["reason"] == "max_turns"
    assert stored["faults"][2] == dict(timeout=2, illegal=0, invalid=0, disconnected=1, bot_error=0)


def test_a_summary_stored_before_bot_errors_were_counted_reads_them_as_none() -> None:
    stored = MatchRecord.from_finished(finished(), "cup", 4, "cup-m00004").to_dict()
    for seat in stored["faults"]:
        del seat["bot_error"]
    old = MatchRecord.from_json(json.dumps(stored))
    assert old.faults == (Faults(), Faults(invalid=1), Faults(timeout=2, disconnected=1))


def test_a_record_keeps_its_finish_time_and_an_older_summary_reads_the_recorded_time() -> None:
    record = MatchRecord.from_finished(finished(), "cup", 4, "cup-m00004", finished_at=1700000000.25)
    assert MatchRecord.from_json(record.to_json(), recorded=5.0).finished_at == 1700000000.25
    stored = record.to_dict()
    del stored["finished_at"]  # as stored before the finish time was kept
    assert MatchRecord.from_json(json.dumps(stored), recorded=1700000001.5).finished_at == 1700000001.5


def test_the_fault_kinds_are_the_protocols() -> None:
    assert (
        tuple(f.name for f in fields(Faults))
        == FAULT_KINDS
        == ("timeout", "illegal", "invalid", "disconnected", "bot_error")
    )


def test_names_come_from_the_bindings_both_ways() -> None:
    for number in pb.MatchEnd.values():
        assert number_of(pb.MatchEnd, name_of(pb.MatchEnd, number)) == number
    assert name_of(pb.Colour, pb.COLOUR_YELLOW) == "yellow" and name_of(pb.HandEnd, 99) == "99"
    with pytest.raises(ValueError, match="target_reached"):
        number_of(pb.MatchEnd, "walkover")
