"""(config, seed, actions) replays a hand or a match exactly; explicit decks too."""

import random

import pytest

from uno_arena.rules import (
    DRAW,
    KEEP,
    Action,
    IllegalActionError,
    Match,
    Phase,
    RulesConfig,
    keep_skipped,
    legal_actions,
    new_hand,
    new_match,
    play,
    play_card,
    play_recorded,
    replay_hand,
    replay_match,
)


def random_match(config: RulesConfig, seed: int) -> object:
    match = new_match(config, random.Random(seed))
    rng = random.Random(seed + 1)
    while match.result is None:
        play(match, rng.choice(legal_actions(match)))
    return match


@pytest.mark.parametrize("players", [2, 5])
def test_a_match_replays_event_for_event(players: int) -> None:
    config = RulesConfig(players=players, target_score=200)
    match = random_match(config, 21)
    again = replay_match(config, 21, match.actions)  # type: ignore[attr-defined]
    assert again.events == match.events  # type: ignore[attr-defined]
    assert again.result == match.result  # type: ignore[attr-defined]


def test_a_hand_replays_from_seed_and_actions() -> None:
    config = RulesConfig(players=3)
    hand = new_hand(config, random.Random(4))
    rng = random.Random(5)
    for _ in range(40):
        if hand.result is None:
            play(hand, rng.choice(legal_actions(hand)))
    again = replay_hand(config, 4, hand.actions)
    assert again.events == hand.events


def test_different_seeds_deal_differently() -> None:
    config = RulesConfig(players=2)
    assert new_hand(config, random.Random(1)).cards != new_hand(config, random.Random(2)).cards


def test_a_tampered_log_is_refused() -> None:
    config = RulesConfig(players=2, target_score=100)
    match = random_match(config, 3)
    actions = list(match.actions)  # type: ignore[attr-defined]
    index = next(i for i, a in enumerate(actions) if a is not DRAW and a.card is not None)
    actions.insert(index, actions[index])  # the same card twice in a row
    with pytest.raises(IllegalActionError):
        replay_match(config, 3, actions)


def _as_written_before_every_draw_was_asked(match: Match) -> list[Action]:
    """The match's actions as uno-arena 0.2 recorded them: a draw whose card did not play ended the
    turn by itself, so the KEEP of each such draw (KEEP its only legal action) was not there."""
    again = new_match(match.config, random.Random(21))
    written: list[Action] = []
    for action in match.actions:
        forced = again.hand.phase is Phase.DRAWN and legal_actions(again) == [KEEP]
        if not forced:
            written.append(action)
        play(again, action)
    return written


def test_an_action_list_of_an_earlier_version_replays_to_the_same_match() -> None:
    """A list without the KEEPs of unplayable draws (recorded before RULINGS 29 asked them) replays
    event for event: the KEEP is taken wherever the next recorded action is not KEEP."""
    config = RulesConfig(players=3, target_score=200)
    match = random_match(config, 21)
    written = _as_written_before_every_draw_was_asked(match)  # type: ignore[arg-type]
    skipped = len(match.actions) - len(written)  # type: ignore[attr-defined]
    assert skipped > 20
    again = replay_match(config, 21, written)
    assert again.events == match.events and again.result == match.result  # type: ignore[attr-defined]
    assert again.actions == match.actions  # type: ignore[attr-defined]
    state, taken = new_match(config, random.Random(21)), 0
    for action in written:
        taken += play_recorded(state, action)
    assert taken == skipped and state.events == match.events  # type: ignore[attr-defined]


def test_a_keep_is_taken_for_a_recorded_list_only_where_it_is_the_only_action() -> None:
    """Not after a playable draw (the list of any version holds its KEEP or the play), nor before a
    recorded KEEP; and a list that plays the unplayable card it drew is still refused."""
    config = RulesConfig(players=2)
    hand = new_hand(config, random.Random(1))
    while not (hand.phase is Phase.TURN and not hand.playable(hand.draw_pile[-1])):
        play(hand, DRAW)
        play(hand, KEEP)
    play(hand, DRAW)  # a card that does not play
    assert keep_skipped(hand, DRAW) and not keep_skipped(hand, KEEP)
    with pytest.raises(IllegalActionError):
        play_recorded(hand, play_card(hand.drawn))  # type: ignore[arg-type]
    playable = new_hand(config, random.Random(1))
    while not (playable.phase is Phase.TURN and playable.playable(playable.draw_pile[-1])):
        play(playable, DRAW)
        play(playable, KEEP)
    play(playable, DRAW)
    assert not keep_skipped(playable, DRAW)
    with pytest.raises(IllegalActionError):
        play_recorded(playable, DRAW)  # an earlier version asked this decision too: a DRAW is wrong
