"""What each client receives over whole matches: never another seat's cards, the draw pile or a seed."""

from __future__ import annotations

import concurrent.futures
import random
import threading

import pytest
from google.protobuf.message import Message

from tests.conftest import RunningServer
from tests.server.botclient import Policy, TestBot, control, play_match
from uno_arena.rules import (
    DRAW,
    KEEP,
    Phase,
    action_from_id,
    apply,
    legal_actions,
    must_ask,
    new_match,
    to_move,
)
from uno_arena.v1 import bot_pb2, codec, control_pb2
from uno_arena.v1 import game_pb2 as pb

PRIVATE_EVENTS = ("dealt", "drew", "hand_shown", "received")


def field_names(message: Message) -> set[str]:
    """Every field name set anywhere inside a message."""
    names: set[str] = set()
    for descriptor, value in message.ListFields():
        names.add(descriptor.name)
        values = value if descriptor.is_repeated else [value]
        for item in values:
            if isinstance(item, Message):
                names |= field_names(item)
    return names


def seat_in(bot: TestBot, match_id: str) -> int:
    return next(
        m.match_started.seat for m in bot.of_kind("match_started") if m.match_started.match_id == match_id
    )


@pytest.mark.parametrize(
    "rules",
    [pb.RulesConfig(target_score=300),
     pb.RulesConfig(target_score=150, stacking=True, jump_in=True, seven_zero=True, multi_play=True)],
    ids=["official", "house_rules"],
)  # fmt: skip
def test_clients_never_receive_other_seats_cards_the_pile_or_a_seed(
    match_server: RunningServer, rules: pb.RulesConfig
) -> None:
    """With seven-0, too: a seat sees the cards it receives in a swap or a pass, never another's."""
    names = ["n0", "n1", "n2"]
    bots = [TestBot(match_server.address, n, match_server.register(n)) for n in names]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(match_id="private", bots=names, seed=99, rules=rules)
    finished = play_match(match_server.address, match_server.control_token, request)[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    for bot in bots:
        bot.wait_for(lambda b=bot: bool(b.of_kind("match_finished")))
        seat = seat_in(bot, "private")
        checked, kinds = 0, set()
        for message in bot.received:
            assert not {"seed", "draw_pile", "deck"} & field_names(message)
            kind_of_message = message.WhichOneof("kind")
            batch = message.events.events if kind_of_message == "events" else message.decision_request.events
            for event in batch:
                kind = event.WhichOneof("kind")
                if kind in PRIVATE_EVENTS:
                    inner = getattr(event, kind)
                    owner = inner.to if kind == "hand_shown" else inner.seat
                    if owner != seat:
                        assert inner.hidden and not inner.cards
                        checked += 1
                        kinds.add(kind)
                    elif kind == "received":
                        assert not inner.hidden and len(inner.cards) == inner.count
            if message.WhichOneof("kind") == "decision_request":
                observation = message.decision_request.observation
                assert observation.seat == seat
                assert len(observation.cards) == observation.hand_sizes[seat]
        assert checked > 0  # other seats' deals and draws were seen, hidden
        assert ("received" in kinds) == rules.seven_zero  # and with seven-0, what they received
    for bot in bots:
        bot.close()


def test_a_single_action_is_asked_unless_every_seat_can_tell_it_is_the_only_one(
    match_server: RunningServer,
) -> None:
    """What a seat receives, and when, depends only on public information and its own cards: a
    decision with one legal action that only its seat can know of (a drawn card that does not play,
    a turn with nothing to play) is asked like any other, since the round trip it saves would show in
    the time the others wait. The swap after a 7 at two seats has one action everyone can tell: it is
    applied without a round trip, unless the bot said `Hello.ask_single` (docs/protocol.md)."""
    lazy = TestBot(match_server.address, "lazy", match_server.register("lazy"))
    keen = TestBot(match_server.address, "keen", match_server.register("keen"), ask_single=True)
    for bot in (lazy, keen):
        bot.wait_for(bot.welcomed)
    rules = pb.RulesConfig(target_score=200, seven_zero=True)
    request = control_pb2.PlayMatchRequest(match_id="single", bots=["lazy", "keen"], seed=4, rules=rules)
    finished = play_match(match_server.address, match_server.control_token, request)[-1].finished
    match = new_match(codec.rules_from(finished.rules, 2), random.Random(finished.seed))
    hidden, public = [0, 0], [0, 0]  # per seat: decisions to ask, one-action decisions everyone can tell
    for action_id in finished.actions:
        seat, legal = to_move(match), legal_actions(match)
        if must_ask(match, legal):
            hidden[seat] += 1
        else:
            assert match.hand.phase is Phase.SWAP and len(legal) == 1
            public[seat] += 1
        apply(match, action_from_id(action_id))
    assert min(public) >= 1, "both seats should have played a 7"

    def requests(bot: TestBot) -> list[bot_pb2.DecisionRequest]:
        bot.wait_for(lambda: bool(bot.of_kind("match_finished")))
        return [m.decision_request for m in bot.of_kind("decision_request")]

    asked_lazy, asked_keen = requests(lazy), requests(keen)
    assert (len(asked_lazy), len(asked_keen)) == (hidden[0], hidden[1] + public[1])
    single = [r for r in asked_lazy if len(r.legal_actions) == 1]
    assert {r.legal_actions[0].id for r in single} >= {KEEP.id, DRAW.id}  # a kept card, nothing to play
    assert not any(r.observation.phase == pb.PHASE_SWAP for r in asked_lazy)
    assert any(r.observation.phase == pb.PHASE_SWAP and len(r.legal_actions) == 1 for r in asked_keen)
    lazy.close()
    keen.close()


def drawing(rng: random.Random, go: threading.Event) -> Policy:
    """Draws half the time it may, then keeps or plays the drawn card at random; waits for `go`."""

    def choose(request: bot_pb2.DecisionRequest) -> int:
        assert go.wait(30), "the spectator never subscribed"
        ids = [a.id for a in request.legal_actions]
        if DRAW.id in ids and rng.random() < 0.5:
            return DRAW.id
        if KEEP.id in ids:
            return rng.choice(ids)
        plays = [a.id for a in request.legal_actions if a.HasField("card")]
        return rng.choice(plays or ids)

    return choose


def test_nobody_but_the_drawer_learns_whether_its_drawn_card_plays(match_server: RunningServer) -> None:
    """RULINGS 29 over the wire: the server asks a drawer to play or keep after every draw, and only
    the drawer learns whether its card plays, so nothing another seat or a spectator receives may show
    the decision: not the events (a `kept` ends every drawing turn), not where a batch of events ends
    (never while the drawer decides), not the request ids (each seat's count only its own)."""
    names = ["d0", "d1", "d2"]
    go = threading.Event()
    bots = [
        TestBot(match_server.address, n, match_server.register(n), policy=drawing(random.Random(n), go))
        for n in names
    ]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    stub, metadata = control(match_server.address, match_server.control_token)
    rules = pb.RulesConfig(target_score=100, max_hands_per_match=4)
    request = control_pb2.PlayMatchRequest(match_id="draws", bots=names, seed=11, rules=rules)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        played = pool.submit(play_match, match_server.address, match_server.control_token, request)
        bots[0].wait_for(lambda: bool(bots[0].of_kind("match_started")))
        stream = stub.Spectate(control_pb2.SpectateRequest(match_id="draws"), metadata=metadata, timeout=60)
        first = next(stream)
        go.set()
        batches = [first, *stream]
        finished = played.result(60)[-1].finished

    # Replay the match: the event counts at which a drawer was deciding whether to play its card.
    match = new_match(codec.rules_from(finished.rules, len(names)), random.Random(finished.seed))
    deciding: set[int] = set()
    for action_id in finished.actions:
        apply(match, action_from_id(action_id))
        if match.result is None and match.hand.phase is Phase.DRAWN:
            deciding.add(len(match.events))
    assert len(match.events) == finished.event_count
    assert len(deciding) >= 5, "the match should hold several draws"

    ends, total = set(), 0
    for batch in batches:
        total += len(batch.events)
        ends.add(total)
    assert total == finished.event_count
    assert not ends & deciding, "a spectator batch ended while a drawer decided"

    for bot in bots:
        bot.wait_for(lambda b=bot: bool(b.of_kind("match_finished")))
        seat = seat_in(bot, "draws")
        asked = [m.decision_request.request_id for m in bot.of_kind("decision_request")]
        assert asked == [f"draws#{seat}.{k}" for k in range(1, len(asked) + 1)]
        for message in bot.received:
            kind = message.WhichOneof("kind")
            batch = list(message.events.events if kind == "events" else message.decision_request.events)
            for i, event in enumerate(batch):
                drew = event.drew if event.WhichOneof("kind") == "drew" else None
                if drew is not None and drew.reason == "draw" and drew.seat != seat:
                    assert i + 1 < len(batch), f"seat {seat}: a batch ended with another seat's draw"
                    after = batch[i + 1]
                    assert after.WhichOneof("kind") in ("played", "kept")
                    assert getattr(after, str(after.WhichOneof("kind"))).seat == drew.seat
        bot.close()
