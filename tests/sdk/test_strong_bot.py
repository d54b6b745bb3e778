"""The strong example bot's choices, one position at a time: an example of testing a bot with the test kit."""

from __future__ import annotations

from uno_arena.sdk import ActionKind, Colour, Kind
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.sdk.testkit import event, position


def test_it_catches_a_player_who_did_not_call_uno() -> None:
    seen = position(hand="red 3, blue 4", top="blue 7", phase="catch", players=3, seat=2)
    assert StrongBot().decide(seen).kind is ActionKind.CATCH


def test_it_calls_uno_with_its_next_to_last_card() -> None:
    seen = position(hand="red 3, blue 4", top="red 7")
    action = StrongBot().decide(seen)
    assert (str(action.card), action.uno) == ("red_3", True)


def test_it_keeps_its_wild_when_another_card_plays() -> None:
    seen = position(hand="wild, red 3, blue 5", top="red 7")
    assert str(StrongBot().decide(seen).card) == "red_3"


def test_it_plays_a_wild_naming_the_colour_it_holds_most() -> None:
    seen = position(hand="wild, blue 2, blue 5, yellow 1", top="red 7")
    action = StrongBot().decide(seen)
    assert (action.card and action.card.kind, action.colour) == (Kind.WILD, Colour.BLUE)


def test_it_attacks_an_opponent_about_to_go_out() -> None:
    """A Wild Draw Four is saved while nobody threatens, played when the next seat holds one card."""
    hand = "wild draw four, red 3, blue 5"
    calm = StrongBot().decide(position(hand=hand, top="red 7", players=3, hand_sizes=[3, 5, 6]))
    assert str(calm.card) == "red_3"
    threat = StrongBot().decide(position(hand=hand, top="red 7", players=3, hand_sizes=[3, 1, 6]))
    assert threat.card is not None and threat.card.kind is Kind.WILD_DRAW_FOUR


def test_it_names_the_colour_it_holds_most_for_a_first_wild() -> None:
    seen = position(hand="green 1, green 8, red 2", top="wild", phase="choose_colour")
    assert StrongBot().decide(seen).colour is Colour.GREEN


def test_it_steers_the_colour_to_one_an_opponent_could_not_play() -> None:
    """Seat 1 drew with green to match: between two equal plays, the bot picks the green one."""
    seen = position(hand="red 5, green 5, blue 9", top="yellow 5")
    plain = StrongBot()
    assert str(plain.decide(seen).card) == "red_5"
    remembering = StrongBot()
    remembering.on_events(seen.match_id, [
        event("played", seat=0, card="green 3", cards_left=4),
        event("drew", seat=1, count=1),  # it drew: it had no green
        event("played", seat=1, card="yellow 3", cards_left=5),
        event("played", seat=0, card="yellow 5", cards_left=3),
    ])  # fmt: skip
    assert str(remembering.decide(seen).card) == "green_5"


def test_it_challenges_a_wild_draw_four_only_when_the_odds_say_guilty() -> None:
    """Red was current before the Wild Draw Four: from a big hand it surely held a red, from one card not."""
    history = [
        event("played", seat=0, card="red 5", cards_left=6),
        event("played", seat=1, card="wild draw four", colour="blue", cards_left=12),
    ]

    def decide(cards_held: int) -> ActionKind:
        bot = StrongBot()
        seen = position(hand="red 3, green 4", top="wild draw four", colour="blue", discards="red 5",
                        phase="challenge", players=2, hand_sizes=[2, cards_held])  # fmt: skip
        bot.on_events(seen.match_id, history)
        return bot.decide(seen).kind

    assert decide(12) is ActionKind.CHALLENGE
    assert decide(1) is ActionKind.ACCEPT
