"""A minimal real gRPC bot for tests (the SDK is not used here): a reader thread and a policy."""

from __future__ import annotations

import queue
import random
import threading
from collections.abc import Callable

import grpc

from uno_arena.v1 import bot_pb2, bot_pb2_grpc, control_pb2, control_pb2_grpc
from uno_arena.v1.names import close_reason_of

Policy = Callable[[bot_pb2.DecisionRequest], "int | None"]


def eager(rng: random.Random) -> Policy:
    """Uniform over the plays when there is one, else over all legal actions."""

    def choose(request: bot_pb2.DecisionRequest) -> int:
        ids = [a.id for a in request.legal_actions]
        plays = [a.id for a in request.legal_actions if a.HasField("card")]
        return rng.choice(plays or ids)

    return choose


class TestBot:
    """Connects, answers decision requests with `policy` (None = stay silent), records everything.

    A bot that stays silent sends nothing at all, so each of its timeouts waits for the server's keepalive
    to vouch for its link (docs/protocol.md, "Keepalive and the decision clock"); with `says_alive` it
    sends a `Ping` instead of the answer: a live bot letting the decision time out at its deadline."""

    __test__ = False  # not a test class

    def __init__(
        self,
        address: str,
        name: str,
        token: str,
        policy: Policy | None = None,
        max_matches: int = 1,
        ask_single: bool = False,
        says_alive: bool = False,
        **hello_fields: object,
    ) -> None:
        """`hello_fields`: more fields of the Hello (`follow_pool`, `instance`, `link`)."""
        self.name = name
        self.policy = policy or eager(random.Random(name))
        self.says_alive = says_alive
        self.pings = 0
        self.channel = grpc.insecure_channel(address)
        self.outgoing: queue.Queue[bot_pb2.BotMessage | None] = queue.Queue()
        self.received: list[bot_pb2.ServerMessage] = []
        self.error: grpc.RpcError | None = None
        self.ended = False
        self._changed = threading.Condition()
        hello = bot_pb2.Hello(
            bot_name=name,
            token=token,
            max_matches=max_matches,
            ask_single=ask_single,
            client="test",
            **hello_fields,  # type: ignore[arg-type]
        )
        self.outgoing.put(bot_pb2.BotMessage(hello=hello))
        self.call = bot_pb2_grpc.BotServiceStub(self.channel).Connect(iter(self.outgoing.get, None))
        self.thread = threading.Thread(target=self._read, name=f"bot {name}", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for message in self.call:
                with self._changed:
                    self.received.append(message)
                    self._changed.notify_all()
                if message.WhichOneof("kind") == "decision_request":
                    action_id = self.policy(message.decision_request)
                    if action_id is not None:
                        self.answer(message.decision_request.request_id, action_id)
                    elif self.says_alive:
                        self.ping()
        except grpc.RpcError as error:
            self.error = error
        finally:
            with self._changed:
                self.ended = True
                self._changed.notify_all()

    def answer(self, request_id: str, action_id: int) -> None:
        self.send(bot_pb2.BotMessage(decision=bot_pb2.Decision(request_id=request_id, action_id=action_id)))

    def send(self, message: bot_pb2.BotMessage) -> None:
        self.outgoing.put(message)

    def ping(self) -> None:
        self.pings += 1
        self.send(bot_pb2.BotMessage(ping=bot_pb2.Ping(nonce=self.pings)))

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: predicate() or self.ended, timeout), (
                f"{self.name}: timed out"
            )
            assert predicate(), f"{self.name}: stream ended ({self.error}) before the condition held"

    def kinds(self) -> list[str]:
        with self._changed:
            return [str(m.WhichOneof("kind")) for m in self.received]

    def of_kind(self, kind: str) -> list[bot_pb2.ServerMessage]:
        with self._changed:
            return [m for m in self.received if m.WhichOneof("kind") == kind]

    def welcomed(self) -> bool:
        return "welcome" in self.kinds()

    def close_reason(self) -> bot_pb2.CloseReason:
        """The `CloseReason` the server sent beside the status of the ended stream."""
        assert self.ended
        return close_reason_of(self.call.trailing_metadata())

    def close(self) -> None:
        self.outgoing.put(None)
        self.channel.close()
        self.thread.join(10)


def control(address: str, token: str) -> tuple[control_pb2_grpc.ControlServiceStub, list[tuple[str, str]]]:
    channel = grpc.insecure_channel(address)
    return control_pb2_grpc.ControlServiceStub(channel), [("authorization", f"Bearer {token}")]


def play_match(
    address: str, token: str, request: control_pb2.PlayMatchRequest
) -> list[control_pb2.MatchProgress]:
    stub, metadata = control(address, token)
    return list(stub.PlayMatch(request, metadata=metadata, timeout=120))


class SilentBot:
    """A raw client that says Hello and then only writes: it reads nothing until `outcome()`."""

    __test__ = False

    def __init__(self, address: str, name: str, token: str) -> None:
        # no BDP probing: the stream's receive window stays at 64 KiB, as a bot that never reads would
        # leave it (with probing, gRPC grows it first), so the server's writes stall early
        self.channel = grpc.insecure_channel(address, options=[("grpc.http2.bdp_probe", 0)])
        self.outgoing: queue.Queue[bot_pb2.BotMessage | None] = queue.Queue(maxsize=256)  # keeps a flood lazy
        self.outgoing.put(
            bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name=name, token=token, client="silent"))
        )
        self.call = bot_pb2_grpc.BotServiceStub(self.channel).Connect(iter(self.outgoing.get, None))

    def send(self, message: bot_pb2.BotMessage, until: threading.Event | None = None) -> bool:
        """Queue `message` (waiting while 256 are queued); False if `until` was set meanwhile."""
        while until is None or not until.is_set():
            try:
                self.outgoing.put(message, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def outcome(self, timeout: float = 30) -> tuple[list[bot_pb2.ServerMessage], grpc.RpcError | None]:
        """Read everything the server had sent, then how the stream ended (None: OK)."""
        received: list[bot_pb2.ServerMessage] = []
        done = threading.Event()
        ended: list[grpc.RpcError | None] = [None]

        def read() -> None:
            try:
                received.extend(self.call)
            except grpc.RpcError as error:
                ended[0] = error
            finally:
                done.set()

        threading.Thread(target=read, daemon=True).start()
        assert done.wait(timeout), "the stream did not end"
        return received, ended[0]

    def close(self) -> None:
        self.channel.close()
