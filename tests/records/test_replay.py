"""A recorded match as text: every seat by its bot's name (seat 0 too), cards and enum values by name."""

from __future__ import annotations

from uno_arena.records.match import MatchRecord, RecordedMatch
from uno_arena.records.replay import export, lines
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


def test_the_export_holds_the_record_and_every_event() -> None:
    exported = export(recorded())
    assert exported["summary"]["bots"] == ["alice", "bob"]  # type: ignore[index]
    assert len(exported["events"]) == 5  # type: ignore[arg-type]
