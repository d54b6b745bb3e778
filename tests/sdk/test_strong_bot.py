"""The strong example bot's choices, one position at a time: an example of testing a bot with the test kit."""

from __future__ import annotations

from collections.abc import Mapping

from uno_arena.sdk import ActionKind, Colour, Kind, Observation
from uno_arena.sdk.examples.strong_bot import StrongBot
from uno_arena.sdk.testkit import event, match_info, position


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


# --- the house rules (RULINGS 25-28) ----------------------------------------------------------

HOUSE = {"stacking": True, "jump_in": True, "seven_zero": True, "multi_play": True}


def playing(seen: Observation, rules_options: Mapping[str, object] = HOUSE) -> StrongBot:
    """A strong bot told the match's rules, as `on_match_start` tells it."""
    bot = StrongBot()
    bot.on_match_start(match_info(seen, rules_options))
    return bot


def test_it_stacks_to_pass_a_penalty_on() -> None:
    seen = position("blue draw two, blue 3, green 4", "red draw two", phase="stack", penalty=4,
                    rules_options=HOUSE)  # fmt: skip
    assert playing(seen).decide(seen).text == "play blue_draw_two"


def test_it_jumps_in_to_shed_an_action_card() -> None:
    seen = position("red skip, blue 3, green 4", "red skip", phase="jump_in", players=3, rules_options=HOUSE)
    assert playing(seen).decide(seen).text == "play red_skip"


def test_it_jumps_in_with_a_seven_only_if_the_swap_leaves_it_fewer_cards() -> None:
    """Holding two, a 7 then a swap with the smallest other hand: 7 cards (no) or 1 (yes)."""
    options = {"phase": "jump_in", "players": 3, "rules_options": HOUSE}
    big = position("red 7, blue 1", "red 7", hand_sizes=[2, 7, 7], **options)  # type: ignore[arg-type]
    assert playing(big).decide(big).kind is ActionKind.PASS
    small = position("red 7, blue 1, blue 2", "red 7", hand_sizes=[3, 1, 7], **options)  # type: ignore[arg-type]
    assert playing(small).decide(small).text == "play red_7 uno"


def test_it_lays_every_card_of_the_rank_and_last_the_colour_it_follows_best() -> None:
    hand = "blue 5, green 5, green 2, green 8, yellow 1"
    first = position(hand, "red 5", phase="lay", players=3, rules_options=HOUSE)
    assert playing(first).decide(first).text == "play blue_5"  # green, its colour, goes last
    last = position("green 5, green 2, green 8, yellow 1", "blue 5", discards="red 5", phase="lay", laid=2,
                    players=3, rules_options=HOUSE)  # fmt: skip
    assert playing(last).decide(last).text == "play green_5"


def test_it_lays_another_seven_only_if_the_swaps_leave_it_fewer_cards() -> None:
    """After a 7, holding three: one swap with the 1-card hand leaves it 1; a second 7 and two
    swaps would leave it 2. Against hands of 4 and 5, two swaps leave it 2, one swap 4."""
    hand, options = "blue 7, green 1, green 2", {"phase": "lay", "players": 3, "rules_options": HOUSE}
    one_small = position(hand, "red 7", hand_sizes=[3, 1, 5], **options)  # type: ignore[arg-type]
    assert playing(one_small).decide(one_small).kind is ActionKind.DONE
    all_big = position(hand, "red 7", hand_sizes=[3, 4, 5], **options)  # type: ignore[arg-type]
    assert playing(all_big).decide(all_big).text == "play blue_7 uno"


def test_it_swaps_with_the_smallest_hand_the_leaders_when_tied() -> None:
    seen = position("red 3, blue 3, green 4", "red 7", phase="swap", players=4, hand_sizes=[3, 4, 2, 2],
                    scores=[0, 90, 10, 50], rules_options=HOUSE)  # fmt: skip
    assert playing(seen).decide(seen).seat == 3


def test_it_calls_uno_with_a_seven_whose_swap_leaves_it_one_card() -> None:
    seen = position("red 7, blue 3, blue 4", "red 2", players=3, hand_sizes=[3, 1, 6], rules_options=HOUSE)
    action = playing(seen).decide(seen)
    assert (action.text, action.uno) == ("play red_7 uno", True)


def test_it_draws_rather_than_play_a_seven_that_would_leave_it_more_cards() -> None:
    seen = position("red 7, blue 3, blue 4", "red 2", players=3, hand_sizes=[3, 9, 9], rules_options=HOUSE)
    assert playing(seen).decide(seen).kind is ActionKind.DRAW


def test_it_passes_hands_with_a_zero_when_the_hand_it_gets_is_smaller() -> None:
    """A 0 passes hands in the direction of play: seat 0 gets seat 2's (direction +1, 3 seats)."""
    hand = "red 0, red 9, blue 3, blue 4, green 5"
    gets_two = position(hand, "red 2", players=3, hand_sizes=[5, 6, 2], rules_options=HOUSE)
    assert playing(gets_two).decide(gets_two).text == "play red_0 uno"
    gets_nine = position(hand, "red 2", players=3, hand_sizes=[5, 6, 9], rules_options=HOUSE)
    assert playing(gets_nine).decide(gets_nine).text == "play red_9"


def test_it_learns_the_house_rules_from_the_decision_when_not_told() -> None:
    """A position without on_match_start: a 7 offered with the UNO call from three cards says seven_zero."""
    seen = position("red 7, blue 3, blue 4", "red 2", players=3, hand_sizes=[3, 9, 9], rules_options=HOUSE)
    assert StrongBot().decide(seen).kind is ActionKind.DRAW


def test_what_an_opponent_lacked_moves_with_its_hand() -> None:
    """Seat 1 drew on green; after seats 1 and 2 swap hands, seat 2 holds the hand without green."""
    seen = position("red 5, green 5, blue 9", "yellow 5", players=3)
    bot = playing(seen)
    bot.on_events(seen.match_id, [
        event("played", seat=0, card="green 3", cards_left=4),
        event("drew", seat=1, count=1),
        event("played", seat=2, card="green 7", cards_left=3),
        event("swapped", seat=2, other=1),
    ])  # fmt: skip
    assert bot.lacks[seen.match_id] == {2: {Colour.GREEN}, 1: set()}
    bot.on_events(seen.match_id, [event("hands_passed", direction=1)])
    assert bot.lacks[seen.match_id] == {0: {Colour.GREEN}, 2: set()}
