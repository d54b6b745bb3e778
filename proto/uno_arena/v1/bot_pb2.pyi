from uno_arena.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CloseReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOSE_REASON_UNSPECIFIED: _ClassVar[CloseReason]
    CLOSE_REASON_REPLACED: _ClassVar[CloseReason]
    CLOSE_REASON_TOKEN_REVOKED: _ClassVar[CloseReason]
    CLOSE_REASON_TOKEN_REFUSED: _ClassVar[CloseReason]
    CLOSE_REASON_NO_HELLO: _ClassVar[CloseReason]
    CLOSE_REASON_FIELD_TOO_LONG: _ClassVar[CloseReason]
    CLOSE_REASON_NOT_A_BOT_MESSAGE: _ClassVar[CloseReason]
    CLOSE_REASON_OUTBOX_FULL: _ClassVar[CloseReason]
    CLOSE_REASON_STRAY_FLOOD: _ClassVar[CloseReason]
    CLOSE_REASON_SERVER_STOPPING: _ClassVar[CloseReason]
    CLOSE_REASON_TOKEN_CHECK_FAILED: _ClassVar[CloseReason]
    CLOSE_REASON_DRAINED: _ClassVar[CloseReason]
    CLOSE_REASON_RATE_LIMITED: _ClassVar[CloseReason]
    CLOSE_REASON_DUPLICATE_LINK: _ClassVar[CloseReason]
CLOSE_REASON_UNSPECIFIED: CloseReason
CLOSE_REASON_REPLACED: CloseReason
CLOSE_REASON_TOKEN_REVOKED: CloseReason
CLOSE_REASON_TOKEN_REFUSED: CloseReason
CLOSE_REASON_NO_HELLO: CloseReason
CLOSE_REASON_FIELD_TOO_LONG: CloseReason
CLOSE_REASON_NOT_A_BOT_MESSAGE: CloseReason
CLOSE_REASON_OUTBOX_FULL: CloseReason
CLOSE_REASON_STRAY_FLOOD: CloseReason
CLOSE_REASON_SERVER_STOPPING: CloseReason
CLOSE_REASON_TOKEN_CHECK_FAILED: CloseReason
CLOSE_REASON_DRAINED: CloseReason
CLOSE_REASON_RATE_LIMITED: CloseReason
CLOSE_REASON_DUPLICATE_LINK: CloseReason

class BotMessage(_message.Message):
    __slots__ = ("hello", "decision", "ping", "drain", "bot_error")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    BOT_ERROR_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    decision: Decision
    ping: Ping
    drain: Drain
    bot_error: BotError
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., drain: _Optional[_Union[Drain, _Mapping]] = ..., bot_error: _Optional[_Union[BotError, _Mapping]] = ...) -> None: ...

class Drain(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class BotError(_message.Message):
    __slots__ = ("request_id", "detail")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    detail: str
    def __init__(self, request_id: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("bot_name", "token", "max_matches", "ask_single", "client", "follow_pool", "instance", "link")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    ASK_SINGLE_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    FOLLOW_POOL_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    LINK_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    token: str
    max_matches: int
    ask_single: bool
    client: str
    follow_pool: bool
    instance: str
    link: str
    def __init__(self, bot_name: _Optional[str] = ..., token: _Optional[str] = ..., max_matches: _Optional[int] = ..., ask_single: _Optional[bool] = ..., client: _Optional[str] = ..., follow_pool: _Optional[bool] = ..., instance: _Optional[str] = ..., link: _Optional[str] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("request_id", "action_id")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    action_id: int
    def __init__(self, request_id: _Optional[str] = ..., action_id: _Optional[int] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("welcome", "match_started", "decision_request", "events", "hand_result", "match_finished", "fault", "pong", "draining", "pool_changed")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    HAND_RESULT_FIELD_NUMBER: _ClassVar[int]
    MATCH_FINISHED_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    POOL_CHANGED_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    match_started: MatchStarted
    decision_request: DecisionRequest
    events: Events
    hand_result: HandResult
    match_finished: MatchFinished
    fault: _game_pb2.Fault
    pong: Pong
    draining: Draining
    pool_changed: PoolChanged
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., events: _Optional[_Union[Events, _Mapping]] = ..., hand_result: _Optional[_Union[HandResult, _Mapping]] = ..., match_finished: _Optional[_Union[MatchFinished, _Mapping]] = ..., fault: _Optional[_Union[_game_pb2.Fault, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., draining: _Optional[_Union[Draining, _Mapping]] = ..., pool_changed: _Optional[_Union[PoolChanged, _Mapping]] = ...) -> None: ...

class PoolChanged(_message.Message):
    __slots__ = ("servers",)
    SERVERS_FIELD_NUMBER: _ClassVar[int]
    servers: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, servers: _Optional[_Iterable[str]] = ...) -> None: ...

class Draining(_message.Message):
    __slots__ = ("running_matches",)
    RUNNING_MATCHES_FIELD_NUMBER: _ClassVar[int]
    running_matches: int
    def __init__(self, running_matches: _Optional[int] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("max_matches", "decision_timeout_ms", "max_message_bytes", "server", "address", "pool", "pool_name")
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    DECISION_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    POOL_NAME_FIELD_NUMBER: _ClassVar[int]
    max_matches: int
    decision_timeout_ms: int
    max_message_bytes: int
    server: str
    address: str
    pool: _containers.RepeatedScalarFieldContainer[str]
    pool_name: str
    def __init__(self, max_matches: _Optional[int] = ..., decision_timeout_ms: _Optional[int] = ..., max_message_bytes: _Optional[int] = ..., server: _Optional[str] = ..., address: _Optional[str] = ..., pool: _Optional[_Iterable[str]] = ..., pool_name: _Optional[str] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "seat", "bots", "rules", "decision_timeout_ms", "max_strikes")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    DECISION_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    bots: _containers.RepeatedScalarFieldContainer[str]
    rules: _game_pb2.RulesConfig
    decision_timeout_ms: int
    max_strikes: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., bots: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[_game_pb2.RulesConfig, _Mapping]] = ..., decision_timeout_ms: _Optional[int] = ..., max_strikes: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("match_id", "request_id", "observation", "legal_actions", "deadline_ms", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: str
    observation: _game_pb2.Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[_game_pb2.Action]
    deadline_ms: int
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[str] = ..., observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[_game_pb2.Action, _Mapping]]] = ..., deadline_ms: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class Events(_message.Message):
    __slots__ = ("match_id", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, match_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class HandResult(_message.Message):
    __slots__ = ("match_id", "hand", "totals")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    hand: _game_pb2.HandEnded
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, match_id: _Optional[str] = ..., hand: _Optional[_Union[_game_pb2.HandEnded, _Mapping]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchFinished(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: _game_pb2.MatchResult
    def __init__(self, result: _Optional[_Union[_game_pb2.MatchResult, _Mapping]] = ...) -> None: ...
