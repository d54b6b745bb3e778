"""The test kit: readable positions become the Observation (and legal actions) the server would send."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from uno_arena.rules import FACES, seen_by
from uno_arena.rules import Colour as RulesColour
from uno_arena.rules import parse_card as rules_card
from uno_arena.rules.event import Drew, Played, Received
from uno_arena.sdk import ActionKind, Colour, DrawReason, EventKind, Kind, Phase
from uno_arena.sdk.testkit import card, cards, event, match_info, position
from uno_arena.v1 import codec
from uno_arena.v1.codec import event_from


def readable(face_name: str) -> str:
    """'blue_draw_two' -> 'blue draw two', as a person writes it."""
    return face_name.replace("_", " ")


def test_every_face_reads_in_both_syntaxes() -> None:
    for face in FACES:
        assert card(str(face)) is face
        assert card(readable(str(face)).upper()) is face
        assert card(face) is face and card(str(face)) is face
    assert card("green draw 2") is card("green +2") is rules_card("green_draw_two")
    assert card("wild draw 4") is card("+4") is rules_card("wild_draw_four")
    assert (
        cards("red 3, wild,  blue skip ")
        == cards("red_3 wild blue_skip")
        == cards(["red 3", "wild", "blue_skip"])
    )
    assert cards("") == []


@pytest.mark.parametrize("bad", ["purple 2", "red 10", "red 3 wild", "wild red"])
def test_an_unknown_card_is_named_with_what_is_accepted(bad: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f'unknown card {bad!r}: cards are "red 3", "blue skip"')):
        position(hand=f"red 1, {bad}", top="red 7")


def test_a_turn_offers_the_plays_the_rules_allow_and_a_draw() -> None:
    seen = position(hand="red 3, wild, blue 5", top="red 7")
    assert (seen.phase, seen.seat, seen.players, seen.turn_seat, seen.colour) == (
        Phase.TURN,
        0,
        2,
        0,
        Colour.RED,
    )
    assert [str(c) for c in seen.hand] == ["red_3", "blue_5", "wild"]
    assert [str(a) for a in seen.legal.plays(colour=Colour.RED)] == ["play red_3"]
    assert {a.colour for a in seen.legal.plays(kind=Kind.WILD)} == set(Colour)
    assert seen.legal.draw is not None and seen.legal.plays(colour=Colour.BLUE) == []
    assert (
        seen.hand_sizes == (3, 7) and sum(seen.hand_sizes) + len(seen.discards) + seen.draw_pile_size == 108
    )


def test_two_cards_left_offer_the_uno_call() -> None:
    seen = position(hand="red 3, blue 5", top="red 7")
    assert [str(a) for a in seen.legal.plays()] == ["play red_3", "play red_3 uno"]


def test_a_wild_on_top_plays_to_the_colour_named() -> None:
    seen = position(hand="green 3, blue 5", top="wild", colour="green", discards="red 7")
    assert (seen.colour, [str(c) for c in seen.discards]) == (Colour.GREEN, ["red_7", "wild"])
    assert [str(a) for a in seen.legal.plays()] == ["play green_3", "play green_3 uno"]
    with pytest.raises(ValueError, match="the top card, wild, is a Wild: say which colour"):
        position(hand="green 3", top="wild")


def test_a_drawn_card_is_played_or_kept() -> None:
    seen = position(hand="blue 5", drawn="red 9", top="red 7")
    assert seen.phase is Phase.DRAWN and seen.drawn is not None and str(seen.drawn) == "red_9"
    assert [str(a) for a in seen.legal] == ["play red_9", "play red_9 uno", "keep"]
    unplayable = position(hand="blue 5", drawn="blue 9", top="red 7")  # asked too, to keep it (RULINGS 29)
    assert unplayable.phase is Phase.DRAWN and str(unplayable.drawn) == "blue_9"
    assert [str(a) for a in unplayable.legal] == ["keep"]


def test_a_catch_window_after_the_previous_seat_kept_one_card_quietly() -> None:
    seen = position(hand="red 3, blue 4", top="blue 7", phase="catch", players=4, seat=2)
    assert (seen.phase, seen.turn_seat, seen.hand_sizes) == (Phase.CATCH, 1, (7, 1, 2, 7))
    assert [a.kind for a in seen.legal] == [ActionKind.CATCH, ActionKind.PASS]
    with pytest.raises(ValueError, match="holds one card, not 3"):
        position(hand="red 3", top="blue 7", phase="catch", hand_sizes=[1, 3])


def test_a_wild_draw_four_to_challenge() -> None:
    seen = position(hand="red 3", top="wild draw four", colour="blue", phase="challenge", players=3, seat=2,
                    direction=-1)  # fmt: skip
    assert (seen.phase, seen.turn_seat, seen.colour) == (Phase.CHALLENGE, 0, Colour.BLUE)
    assert [a.kind for a in seen.legal] == [ActionKind.CHALLENGE, ActionKind.ACCEPT]
    with pytest.raises(ValueError, match="must be a Wild Draw Four"):
        position(hand="red 3", top="red 7", phase="challenge")


def test_a_first_card_wild_waits_for_its_colour() -> None:
    seen = position(hand="red 3, red 4", top="wild", phase="choose_colour", players=3, seat=1)
    assert (seen.phase, seen.dealer, seen.colour, seen.discards) == (
        Phase.CHOOSE_COLOUR,
        1,
        None,
        (FACES[52],),
    )
    assert [a.colour for a in seen.legal] == list(Colour)
    first = position(hand="red 3", top="wild", phase="choose_colour", players=3, seat=1,
                     rules_options={"first_wild_chooser": "first_player"})  # fmt: skip
    assert first.dealer == 0 and len(first.legal) == 4


def test_the_table_is_as_described() -> None:
    seen = position(hand="red 3", top="red 7", players=5, seat=3, hand_sizes=[2, 4, 6, 1, 9],
                    scores=[10, 0, 0, 90, 5], target=200, direction=-1, draw_pile=4, turn=30, hand_number=3,
                    match_id="m1")  # fmt: skip
    assert (seen.match_id, seen.seat, seen.players, seen.direction) == ("m1", 3, 5, -1)
    assert (seen.hand_sizes, seen.scores, seen.target_score) == ((2, 4, 6, 1, 9), (10, 0, 0, 90, 5), 200)
    assert (seen.draw_pile_size, len(seen.discards), seen.turn, seen.hand_number) == (4, 108 - 4 - 22, 30, 3)
    assert seen.next_seat == 2 and seen.opponents == (0, 1, 2, 4)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"hand": "red 0, red 0", "top": "red 7"}, "2 x red_0 (the deck has 1)"),
        ({"hand": "wild", "top": "wild", "colour": "red", "discards": "wild, wild, wild"}, "5 x wild"),
        ({"hand": "red 3", "top": "red 7", "colour": "blue"}, "the colour to match is the top card's (red)"),
        ({"hand": "red 3", "top": "red 7", "colour": "mauve"}, "unknown colour 'mauve'"),
        ({"hand": "red 3", "top": "red 7", "phase": "sleeping"}, "unknown phase 'sleeping'"),
        (
            {"hand": "red 3", "top": "red 7", "hand_sizes": [2, 3]},
            "hand_sizes[0] is 2, but your hand holds 1",
        ),
        ({"hand": "red 3", "top": "red 7", "hand_sizes": [1]}, "hand_sizes: one per seat, 2, not 1"),
        ({"hand": "red 3", "top": "red 7", "hand_sizes": [1, 0]}, "seat 1 holds no card"),
        ({"hand": "red 3", "top": "red 7", "hand_sizes": [1, -2]}, "hand_sizes: counts of cards, not -2"),
        ({"hand": "", "top": "red 7"}, "seat 0 holds no card"),
        ({"hand": "red 3", "top": "red 7", "seat": 2}, "seat 2 is not a seat of 2"),
        ({"hand": "red 3", "top": "red 7", "draw_pile": 200}, "draw_pile=200: 99 cards are left"),
        ({"hand": "red 3", "top": "red 7", "players": 11}, "players: must be 2 to 10"),
        ({"hand": "red 3", "top": "red 7", "hand_sizes": [1, 107]}, "would hold 107 cards, but only 106"),
    ],
)
def test_impossible_positions_are_refused_saying_why(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        position(**options)  # type: ignore[arg-type]


def test_events_are_what_a_connected_bot_decodes() -> None:
    played = event("played", seat=1, card="wild", colour="green", cards_left=4)
    assert played == event_from(codec.event(Played(1, rules_card("wild"), RulesColour.GREEN, False, 4)))
    assert (played.kind, played.seat, played.colour, played.uno) == (
        EventKind.PLAYED,
        1,
        Colour.GREEN,
        False,
    )
    drew = event(EventKind.DREW, seat=1, count=2, reason="draw_two")
    assert drew == event_from(codec.event(seen_by(Drew(1, 2, (FACES[0], FACES[1]), DrawReason.DRAW_TWO), 0)))
    assert (drew.cards, drew.reason) == (None, DrawReason.DRAW_TWO)
    mine = event("drew", seat=0, cards="red 1, red 2")
    assert (mine.count, [str(c) for c in mine.cards], mine.reason) == (2, ["red_1", "red_2"], DrawReason.DRAW)
    ended = event("hand_ended", reason="played_out", winner=1, points=[0, 35])
    assert (ended.reason, ended.points) == ("played_out", (0, 35))


@pytest.mark.parametrize(
    ("kind", "fields", "message"),
    [
        ("nope", {}, "unknown event kind 'nope': one of dealer_drew, "),
        ("played", {"seat": 1}, "played needs card, cards_left"),
        (
            "played",
            {"seat": 1, "card": "red 3", "cards_left": 2, "colour": "mauve"},
            "unknown colour 'mauve'",
        ),
        (
            "played",
            {"seat": 1, "card": "red 3", "cards_left": 2, "winner": 1},
            "played has no field 'winner'",
        ),
        ("drew", {"seat": 1, "count": 1, "reason": "tired"}, "drew reason 'tired': one of draw, draw_two"),
        ("hand_ended", {"reason": "bored", "points": [0, 0]}, "hand_ended reason 'bored': one of played_out"),
    ],
)
def test_a_bad_event_says_what_it_takes(kind: str, fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        event(kind, **fields)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def python_block(text: str, first_line: str) -> str:
    """The ```python block of docs/bots.md that starts with `first_line`."""
    blocks: list[str] = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    return next(b for b in blocks if b.startswith(first_line))


def test_the_docs_testing_example_passes_against_the_docs_first_bot(tmp_path: Path) -> None:
    text = DOCS.read_text()
    (tmp_path / "my_bot.py").write_text(python_block(text, "# my_bot.py"))
    (tmp_path / "test_my_bot.py").write_text(python_block(text, "# test_my_bot.py"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_bot.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout


def test_every_python_example_of_the_docs_runs(tmp_path: Path) -> None:
    """docs/bots.md's examples as a reader would run them: the files it names written beside each other
    (`# my_bot.py`), every other block run as a script there (the arena's, the test kit's)."""
    blocks: list[str] = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.DOTALL)
    named = [b for b in blocks if re.match(r"# \w+\.py", b)]
    for block in named:
        (tmp_path / block.split()[1]).write_text(block)
    scripts = [b for b in blocks if b not in named]
    assert len(named) >= 2 and len(scripts) >= 2
    for number, script in enumerate(scripts):
        (tmp_path / f"example_{number}.py").write_text(script)
        run = subprocess.run([sys.executable, f"example_{number}.py"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
        assert run.returncode == 0, f"{script}\n{run.stdout}{run.stderr}"


def test_a_stacking_position_carries_the_pending_total() -> None:
    stack = position("red draw two, blue 3", "green draw two", phase="stack",
                     rules_options={"stacking": True}, penalty=6)  # fmt: skip
    assert (stack.phase, stack.penalty) == (Phase.STACK, 6)
    assert [a.text for a in stack.legal] == ["play red_draw_two", "play red_draw_two uno", "accept"]
    with pytest.raises(ValueError, match="penalty 3"):
        position("red draw two", "green draw two", phase="stack", rules_options={"stacking": True}, penalty=3)


HOUSE = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True}


def test_a_jump_in_position_asks_about_the_previous_seats_play() -> None:
    seen = position("red skip, blue 3, green 4", "red skip", phase="jump_in", players=3, seat=0,
                    rules_options={"jump_in": True})  # fmt: skip
    assert (seen.phase, seen.turn_seat) == (Phase.JUMP_IN, 2)
    assert [a.text for a in seen.legal] == ["play red_skip", "pass"]
    nothing = position("blue 3, green 4", "red skip", phase="jump_in", players=3, seat=1, turn_seat=0,
                       rules_options={"jump_in": True})  # fmt: skip
    assert [a.kind for a in nothing.legal] == [ActionKind.PASS]
    stacked = position("red draw two, blue 3, green 4", "red draw two", phase="jump_in", penalty=4,
                       rules_options={"jump_in": True, "stacking": True})  # fmt: skip
    assert stacked.penalty == 4 and [a.text for a in stacked.legal] == ["play red_draw_two", "pass"]


def test_a_lay_position_offers_the_cards_of_the_same_rank_and_done() -> None:
    seen = position("blue 5, green 5, red 2", "red 5", phase="lay", rules_options={"multi_play": True})
    assert (seen.phase, seen.turn_seat) == (Phase.LAY, 0)
    # laying both 5s would leave one card: each is offered with the UNO call too (RULINGS 28)
    assert [a.text for a in seen.legal] == [
        "play green_5",
        "play green_5 uno",
        "play blue_5",
        "play blue_5 uno",
        "done",
    ]
    assert seen.legal.done is not None and seen.legal.safe_default() is seen.legal.done
    laid = position("red 2, blue 9", "red draw two", discards="blue draw two", phase="lay", laid=2,
                    rules_options={"multi_play": True})  # fmt: skip
    assert (laid.penalty, [a.kind for a in laid.legal]) == (4, [ActionKind.DONE])


def test_a_swap_position_offers_every_other_seat() -> None:
    seen = position(
        "red 3, blue 3", "red 7", phase="swap", players=4, seat=2, rules_options={"seven_zero": True}
    )
    assert seen.phase is Phase.SWAP
    assert [a.seat for a in seen.legal.swaps()] == [0, 1, 3] and all(a.card is None for a in seen.legal)
    twice = position("red 3, blue 3", "red 7", discards="green 7", phase="swap", swaps=2,
                     rules_options={"seven_zero": True, "multi_play": True})  # fmt: skip
    assert [a.text for a in twice.legal] == ["swap with seat 1"]


def test_seven_zero_offers_every_seven_and_zero_with_the_uno_call() -> None:
    seen = position("red 7, red 0, red 3, blue 4", "red 2", rules_options={"seven_zero": True})
    assert [a.text for a in seen.legal.plays()] == [
        "play red_0", "play red_0 uno", "play red_3", "play red_7", "play red_7 uno",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"phase": "jump_in"}, "jump_in: only with the jump_in house rule"),
        ({"phase": "jump_in", "top": "wild", "colour": "red", "rules_options": HOUSE}, "after a Wild"),
        (
            {"phase": "jump_in", "top": "red 0", "rules_options": HOUSE},
            "every copy of red_0 is in the discards",
        ),
        ({"phase": "jump_in", "turn_seat": 0, "rules_options": HOUSE}, "asked about another's play"),
        ({"phase": "lay"}, "lay: only with the multi_play house rule"),
        ({"phase": "lay", "laid": 2, "rules_options": HOUSE}, "the top 2 discards must all be 5 cards"),
        ({"phase": "swap", "rules_options": HOUSE}, "the top card must be the 7 just played, not red_5"),
        ({"phase": "swap", "top": "red 7"}, "swap: only with the seven_zero house rule"),
        (
            {"phase": "swap", "top": "red 7", "swaps": 2, "rules_options": HOUSE},
            "the top 2 discards must all be 7",
        ),
        ({"laid": 2, "rules_options": HOUSE}, "laid 2: only in phases catch, jump_in, lay and swap"),
        (
            {"phase": "lay", "uno_called": True, "rules_options": HOUSE},
            "uno_called: UNO is called with the play",
        ),
    ],
)
def test_house_rule_positions_the_rules_cannot_reach_are_refused(
    options: dict[str, object], message: str
) -> None:
    base: dict[str, object] = {"hand": "red 3, blue 4", "top": "red 5", "players": 3}
    with pytest.raises(ValueError, match=re.escape(message)):
        position(**{**base, **options})  # type: ignore[arg-type]


def test_the_house_rules_events_are_what_a_connected_bot_decodes() -> None:
    red_5 = rules_card("red_5")
    jumped = event("played", seat=2, card="red 5", cards_left=3, jump_in=True)
    assert jumped == event_from(codec.event(Played(2, red_5, None, False, 3, True)))
    assert (event("swapped", seat=0, other=2).seat, event("swapped", seat=0, other=2).other) == (0, 2)
    passed = event("hands_passed", direction=-1)
    assert (passed.kind, passed.direction) == (EventKind.HANDS_PASSED, -1)
    hidden = event("received", seat=1, giver=0, count=3)
    assert hidden == event_from(codec.event(seen_by(Received(1, 0, 3, (red_5,) * 3), 0)))
    assert (hidden.cards, hidden.count) == (None, 3)
    mine = event("received", seat=0, giver=1, cards="red 5, blue 2")
    assert (mine.count, [str(c) for c in mine.cards], mine.giver) == (2, ["red_5", "blue_2"], 1)


def test_match_info_tells_on_match_start_the_house_rules_of_a_position() -> None:
    seen = position("red 3", "red 5", players=3, seat=1, target=200, rules_options={"jump_in": True})
    info = match_info(seen, {"jump_in": True})
    assert (info.match_id, info.seat, len(info.bots), info.rules.players) == ("test", 1, 3, 3)
    assert (info.rules.jump_in, info.rules.seven_zero, info.rules.target_score) == (True, False, 200)


def test_the_docs_match_info_example_runs_with_the_docs_first_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = DOCS.read_text()
    (tmp_path / "my_bot.py").write_text(python_block(text, "# my_bot.py"))
    monkeypatch.syspath_prepend(str(tmp_path))
    names: dict[str, object] = {}
    exec(python_block(text, "from uno_arena.sdk.testkit import match_info"), names)
    assert names["bot"].decide(names["seen"]).text == "play red_7 uno"  # type: ignore[attr-defined]
