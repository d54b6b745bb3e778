"""A recorded match as text: every seat by its bot's name (seat 0 too), cards and enum values by name; replay
files written and read back, and refused with a clear message when missing or not a replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uno_arena.records.match import MatchRecord, RecordedMatch
from uno_arena.records.replay import (
    ReplayFileError,
    export,
    lines,
    read_replay_file,
    recorded_match,
    replay_file_name,
    replay_path_in,
    write_replay_file,
)
from uno_arena.v1 import control_pb2
from uno_arena.v1 import game_pb2 as pb

RED_4 = pb.Card(colour=pb.COLOUR_RED, rank=pb.RANK_4, index=4)
WILD_FOUR = pb.Card(rank=pb.RANK_WILD_DRAW_FOUR, index=53)
RED_0 = pb.Card(colour=pb.COLOUR_RED, rank=pb.RANK_0, index=0)


def recorded() -> RecordedMatch:
    events = [
        pb.Event(hand_started=pb.HandStarted(number=1)),
        pb.Event(dealer_drew=pb.DealerDrew(seat=0, card=RED_4)),
        pb.Event(played=pb.Played(seat=0, card=WILD_FOUR, colour=pb.COLOUR_BLUE, cards_left=6)),
        pb.Event(drew=pb.Drew(seat=1, count=2, cards=[RED_0, RED_4])),
        pb.Event(hand_ended=pb.HandEnded(reason=pb.HAND_END_PLAYED_OUT, winner=0, points=[30, 0])),
    ]
    result = pb.MatchResult(match_id="t-m00000", bots=["alice", "bob"], reason=pb.MATCH_END_TARGET_REACHED,
                            winners=[0], totals=[30, 0], hands=[events[-1].hand_ended])  # fmt: skip
    finished = control_pb2.FinishedMatch(result=result, seed=3, actions=[1, 2], event_count=len(events))
    return RecordedMatch(MatchRecord.from_finished(finished, "t", 0, "t-m00000"), finished, events, 0.0)


def test_the_text_names_every_seat_and_card() -> None:
    text = list(lines(recorded()))
    assert text[0] == "t-m00000: alice vs bob, seed 3"
    assert "  alice dealer drew card=red 4" in text
    assert "  alice played card=wild draw four colour=blue cards_left=6" in text
    assert "  bob drew count=2 cards=[red 0, red 4]" in text
    assert "  hand ends (played_out): points [30, 0], totals [30, 0]" in text
    assert text[-1] == "target_reached: alice won; totals [30, 0]"


RED_7 = pb.Card(colour=pb.COLOUR_RED, rank=pb.RANK_7, index=7)
BLUE_7 = pb.Card(colour=pb.COLOUR_BLUE, rank=pb.RANK_7, index=46)


def house_rules_match(hidden: bool) -> RecordedMatch:
    """Three seats under every house rule: a jump-in, two 7s laid together and their swaps, a 0's pass;
    what carol received shown, or `hidden` as another seat's view of the log holds it."""
    received = pb.Received(seat=2, giver=0, count=2, cards=[] if hidden else [RED_0, RED_4], hidden=hidden)
    events = [
        pb.Event(hand_started=pb.HandStarted(number=1)),
        pb.Event(played=pb.Played(seat=0, card=RED_4, cards_left=6)),
        pb.Event(played=pb.Played(seat=2, card=RED_4, cards_left=5, jump_in=True)),
        pb.Event(played=pb.Played(seat=0, card=RED_7, cards_left=5)),
        pb.Event(played=pb.Played(seat=0, card=BLUE_7, cards_left=4)),
        pb.Event(swapped=pb.Swapped(seat=0, other=2)),
        pb.Event(received=pb.Received(seat=0, giver=2, count=5, hidden=True)),
        pb.Event(received=received),
        pb.Event(played=pb.Played(seat=1, card=RED_0, cards_left=3)),
        pb.Event(hands_passed=pb.HandsPassed(direction=-1)),
        pb.Event(hand_ended=pb.HandEnded(reason=pb.HAND_END_PLAYED_OUT, winner=1, points=[0, 40, 0])),
    ]
    rules = pb.RulesConfig(players=3, target_score=150, hand_size=5, stacking=True, jump_in=True,
                           seven_zero=True, multi_play=True, scoring="penalty_points")  # fmt: skip
    result = pb.MatchResult(match_id="h-m00001", bots=["alice", "bob", "carol"], winners=[1],
                            reason=pb.MATCH_END_TARGET_REACHED, totals=[0, 40, 0],
                            hands=[events[-1].hand_ended])  # fmt: skip
    finished = control_pb2.FinishedMatch(result=result, seed=5, rules=rules, event_count=len(events))
    return RecordedMatch(MatchRecord.from_finished(finished, "h", 1, "h-m00001"), finished, events, 0.0)


def test_the_text_says_the_rules_and_every_house_rule_event() -> None:
    text = list(lines(house_rules_match(hidden=False)))
    assert text[:2] == [
        "h-m00001: alice vs bob vs carol, seed 5",
        "rules: target 150; house rules: stacking, jump_in, seven_zero, multi_play; "
        "options: hand_size=5, scoring=penalty_points",
    ]
    assert text[4:13] == [
        "  alice played card=red 4 cards_left=6",
        "  carol jumps in with card=red 4 cards_left=5",
        "  alice played card=red 7 cards_left=5",
        "  alice also lays card=blue 7 cards_left=4",
        "  alice swaps hands with carol",
        "  alice receives 5 cards from carol: (hidden)",
        "  carol receives 2 cards from alice: [red 0, red 4]",
        "  bob played card=red 0 cards_left=3",
        "  every hand passes one seat counter-clockwise (to the right)",
    ]
    hidden = list(lines(house_rules_match(hidden=True)))
    assert "  carol receives 2 cards from alice: (hidden)" in hidden


def test_the_rules_line_of_an_official_match_and_of_unreadable_rules() -> None:
    assert list(lines(recorded()))[1] == "rules: target 500; official rules"
    match = recorded()
    match.finished.rules.hand_size = 60  # cannot be dealt to two seats: said, not raised
    assert list(lines(match))[1] == "rules: unreadable (hand_size: 60 cannot be dealt to 2 players)"


def test_the_export_holds_the_record_and_every_event() -> None:
    exported = export(recorded())
    assert exported["summary"]["bots"] == ["alice", "bob"]  # type: ignore[index]
    assert len(exported["events"]) == 5  # type: ignore[arg-type]


def test_a_replay_file_reads_back_as_the_match_it_was_written_from(tmp_path: Path) -> None:
    match = recorded()
    path = write_replay_file(match, tmp_path / "replays")
    assert path == tmp_path / "replays" / "t-m00000.json"
    assert json.loads(path.read_text()) == json.loads(
        json.dumps(export(match))
    )  # what `replay --json` prints
    again = read_replay_file(path)
    assert again.record == match.record and again.finished == match.finished and again.events == match.events
    assert list(lines(again)) == list(lines(match))
    assert [p.name for p in path.parent.iterdir()] == ["t-m00000.json"]  # no partial file left behind


def test_a_played_match_becomes_a_record_without_a_tournament() -> None:
    finished = recorded().finished
    match = recorded_match(finished, recorded().events, index=3)
    assert match.match_id == "t-m00000" and match.record.index == 3 and match.record.tournament == ""
    assert match.record.bots == ("alice", "bob") and match.record.actions == 2


def test_replay_file_names_stay_in_their_folder(tmp_path: Path) -> None:
    assert replay_file_name("../../etc/passwd") == "_.._etc_passwd.json"
    assert replay_file_name("cli-1a2b") == "cli-1a2b.json"
    (tmp_path / "arena-1-0.json").write_text("{}")
    assert replay_path_in(tmp_path, "arena-1-0") == tmp_path / "arena-1-0.json"
    for bad in ("../arena-1-0", "..", "", "a/b", "missing"):
        assert replay_path_in(tmp_path, bad) is None


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such replay file"),
        ("not json", "not a replay file (not JSON"),
        ("[1, 2]", "not a replay file (no summary, finished, events"),
        ('{"summary": {}, "finished": {}, "events": []}', "not a valid replay file"),
        ('{"summary": {}, "finished": {"seed": "x"}, "events": []}', "not a valid replay file"),
    ],
)
def test_a_missing_or_invalid_replay_file_is_a_clear_error(
    tmp_path: Path, content: str | None, says: str
) -> None:
    path = tmp_path / "match.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReplayFileError) as raised:
        read_replay_file(path)
    assert str(raised.value).startswith(f"{path}: {says}")


def test_a_replay_file_whose_parts_disagree_is_refused(tmp_path: Path) -> None:
    values = export(recorded())
    values["summary"]["bots"] = ["alice", "bob", "carol"]  # type: ignore[index]
    path = tmp_path / "match.json"
    path.write_text(json.dumps(values))
    with pytest.raises(ReplayFileError, match="its summary and result name other seats"):
        read_replay_file(path)
