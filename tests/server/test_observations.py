"""What each client receives over whole matches: never another seat's cards, the draw pile or a seed."""

from __future__ import annotations

from google.protobuf.message import Message

from tests.conftest import RunningServer
from tests.server.botclient import TestBot, play_match
from uno_arena.v1 import bot_pb2, control_pb2
from uno_arena.v1 import game_pb2 as pb

PRIVATE_EVENTS = ("dealt", "drew", "hand_shown")


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


def test_clients_never_receive_other_seats_cards_the_pile_or_a_seed(match_server: RunningServer) -> None:
    names = ["n0", "n1", "n2"]
    bots = [TestBot(match_server.address, n, match_server.register(n)) for n in names]
    for bot in bots:
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(
        match_id="private", bots=names, seed=99, rules=pb.RulesConfig(target_score=300)
    )
    finished = play_match(match_server.address, match_server.control_token, request)[-1].finished
    assert finished.result.reason == pb.MATCH_END_TARGET_REACHED
    for bot in bots:
        bot.wait_for(lambda b=bot: bool(b.of_kind("match_finished")))
        seat = seat_in(bot, "private")
        checked = 0
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
            if message.WhichOneof("kind") == "decision_request":
                observation = message.decision_request.observation
                assert observation.seat == seat
                assert len(observation.cards) == observation.hand_sizes[seat]
        assert checked > 0  # other seats' deals and draws were seen, hidden
    for bot in bots:
        bot.close()


def test_single_legal_actions_are_applied_without_asking_unless_asked_to(match_server: RunningServer) -> None:
    lazy = TestBot(match_server.address, "lazy", match_server.register("lazy"))
    keen = TestBot(match_server.address, "keen", match_server.register("keen"), ask_single=True)
    for bot in (lazy, keen):
        bot.wait_for(bot.welcomed)
    request = control_pb2.PlayMatchRequest(
        match_id="single", bots=["lazy", "keen"], seed=4, rules=pb.RulesConfig(target_score=200)
    )
    play_match(match_server.address, match_server.control_token, request)

    def sizes(bot: TestBot) -> set[int]:
        return {len(m.decision_request.legal_actions) for m in bot.of_kind("decision_request")}

    assert 1 not in sizes(lazy)
    assert 1 in sizes(keen)
    assert isinstance(lazy.received[0], bot_pb2.ServerMessage)
    lazy.close()
    keen.close()
