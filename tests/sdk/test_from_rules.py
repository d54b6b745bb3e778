"""Views built from the rules core equal what a connected bot decodes from the server's messages."""

from __future__ import annotations

import random

import pytest

from uno_arena.rules import (
    ACTIONS,
    FACES,
    HandEnded,
    Match,
    RulesConfig,
    apply,
    legal_actions,
    new_match,
    observe,
    seen_by,
)
from uno_arena.rules.event import HandShown
from uno_arena.sdk import Event, EventKind, HandEnd, MatchEnd
from uno_arena.sdk.actions import action_from
from uno_arena.sdk.cards import card_from
from uno_arena.sdk.events import event_from, hand_result_from, match_result_from
from uno_arena.sdk.from_rules import (
    CARDS,
    action_of,
    card_of,
    event_of,
    hand_result_of,
    match_info_of,
    match_result_of,
    observation_of,
)
from uno_arena.sdk.observation import observation_from
from uno_arena.v1 import bot_pb2, codec
from uno_arena.v1 import game_pb2 as pb


def test_every_card_and_action_is_the_object_the_wire_path_gives() -> None:
    for face in FACES:
        assert card_of(face) is card_from(codec.card(face)) is CARDS[face.index]
    for action in ACTIONS:
        assert action_of(action) is action_from(codec.action(action))


def wire_events(events: list[pb.Event]) -> list[Event]:
    return [event_from(e) for e in events]


def play_both_ways(config: RulesConfig, seed: int) -> tuple[set[EventKind], int]:
    """Play a match with a seeded random policy; at every decision and for every event of every
    seat, the view from the rules core equals the view decoded from the server's bytes."""
    rng = random.Random(seed)
    match = new_match(config, rng)
    players = config.players
    sent = [0] * players
    kinds: set[EventKind] = set()
    decisions = 0

    def deliver(seat: int) -> list[Event]:
        """What the server sends `seat` it has not had, as it may see it; checks both views."""
        fresh = [seen_by(e, seat) for e in match.events[sent[seat] :]]
        sent[seat] = len(match.events)
        ours = [event_of(e) for e in fresh]
        assert ours == wire_events([codec.event(e) for e in fresh])
        kinds.update(e.kind for e in ours)
        for event, view in zip(fresh, ours, strict=True):
            if isinstance(event, HandEnded):
                totals = totals_after(match, event)
                message = bot_pb2.HandResult(match_id="m", hand=codec.hand_ended(event), totals=totals)
                assert hand_result_of("m", event, totals) == hand_result_from(message)
                assert view.reason is HandEnd(event.reason.value)
        return ours

    bots = [f"bot{s}" for s in range(players)]
    for seat in range(players):
        started = bot_pb2.MatchStarted(match_id="m", seat=seat, bots=bots, rules=codec.rules(config),
                                       decision_timeout_ms=750)  # fmt: skip
        wired = {d.name: v for d, v in started.rules.ListFields()}
        assert match_info_of("m", seat, bots, config, 0.75).rules == wired
        assert match_info_of("m", seat, bots, config, 0.75).decision_timeout == 0.75
    encoder = codec.MatchEncoder(match, "m", 900)  # the server's hot path
    while match.result is None:
        seat, legal = match.hand.to_move, legal_actions(match)
        first = sent[seat]
        ours = deliver(seat)
        raw, _ = encoder.request(seat, legal, "m#1", first)
        request = bot_pb2.ServerMessage.FromString(raw).decision_request
        assert observation_of("m", observe(match, seat)) == observation_from("m", request)
        assert wire_events(list(request.events)) == ours
        decisions += 1
        apply(match, rng.choice(legal))
    for seat in range(players):
        deliver(seat)
    result = match.result
    for forfeited in ((), (1,)):
        message = codec.match_result("m", codec.MATCH_ENDS[result.reason], result.winners, result.totals,
                                    match.hand_results, bots, list(forfeited), [0] * players)  # fmt: skip
        assert match_result_of("m", result, bots, forfeited) == match_result_from(message)
        assert match_result_of("m", result, bots, forfeited).reason is MatchEnd(result.reason.value)
    return kinds, decisions


def totals_after(match: Match, ended: HandEnded) -> list[int]:
    totals = [0] * match.config.players
    for hand in match.hand_results:
        totals = [t + p for t, p in zip(totals, hand.points, strict=True)]
        if hand is ended:
            break
    return totals


@pytest.mark.parametrize("players", [2, 4, 10])
@pytest.mark.parametrize("seed", [1, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (2, 3))])
def test_whole_matches_give_equal_views_both_ways(players: int, seed: int) -> None:
    config = RulesConfig(players=players, target_score=300 if players < 10 else 150)
    kinds, decisions = play_both_ways(config, seed)
    assert decisions > 50
    assert {EventKind.PLAYED, EventKind.DREW, EventKind.DEALT, EventKind.HAND_ENDED} <= kinds


def test_every_event_kind_is_compared() -> None:
    """Across options that reach them all: first-card Wilds, reshuffles, challenges, catches,
    and the house rules' swaps and passed hands."""
    seen: set[EventKind] = set()
    options = [
        {"players": 3, "target_score": 400, "first_wild_chooser": "first_player"},
        {"players": 2, "target_score": 60, "draw_until_playable": True, "dealer": "rotate_left"},
        {"players": 6, "target_score": 200, "first_wild_draw_four": "reshuffle", "max_turns_per_hand": 60},
        {
            "players": 4,
            "target_score": 200,
            "stacking": True,
            "jump_in": True,
            "seven_zero": True,
            "multi_play": True,
        },
    ]
    for seed, values in enumerate(options):
        kinds, _ = play_both_ways(RulesConfig.from_dict(values), seed)
        seen |= kinds
    assert seen == set(EventKind)


def test_hidden_cards_read_the_same_both_ways() -> None:
    shown = HandShown(seat=1, to=0, cards=(FACES[3], FACES[52]))
    for receiver in (0, 2):
        event = seen_by(shown, receiver)
        ours = event_of(event)
        assert ours == event_from(codec.event(event))
        assert ours.fields["hidden"] is (receiver != 0)
        assert ours.cards == (() if receiver else (CARDS[3], CARDS[52]))
