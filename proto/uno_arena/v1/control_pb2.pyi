from uno_arena.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PlayMatchRequest(_message.Message):
    __slots__ = ("match_id", "bots", "rules", "seed", "decision_timeout_ms", "max_strikes", "disconnect_grace_ms", "wait_for_bots_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DECISION_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    DISCONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_BOTS_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    rules: _game_pb2.RulesConfig
    seed: int
    decision_timeout_ms: int
    max_strikes: int
    disconnect_grace_ms: int
    wait_for_bots_ms: int
    def __init__(self, match_id: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[_game_pb2.RulesConfig, _Mapping]] = ..., seed: _Optional[int] = ..., decision_timeout_ms: _Optional[int] = ..., max_strikes: _Optional[int] = ..., disconnect_grace_ms: _Optional[int] = ..., wait_for_bots_ms: _Optional[int] = ...) -> None: ...

class MatchProgress(_message.Message):
    __slots__ = ("started", "hand", "fault", "log", "finished")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    started: MatchStartedInfo
    hand: _game_pb2.HandEnded
    fault: _game_pb2.Fault
    log: EventLogChunk
    finished: FinishedMatch
    def __init__(self, started: _Optional[_Union[MatchStartedInfo, _Mapping]] = ..., hand: _Optional[_Union[_game_pb2.HandEnded, _Mapping]] = ..., fault: _Optional[_Union[_game_pb2.Fault, _Mapping]] = ..., log: _Optional[_Union[EventLogChunk, _Mapping]] = ..., finished: _Optional[_Union[FinishedMatch, _Mapping]] = ...) -> None: ...

class EventLogChunk(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class MatchStartedInfo(_message.Message):
    __slots__ = ("match_id", "bots", "rules")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    rules: _game_pb2.RulesConfig
    def __init__(self, match_id: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[_game_pb2.RulesConfig, _Mapping]] = ...) -> None: ...

class FinishedMatch(_message.Message):
    __slots__ = ("result", "event_count", "actions", "seed", "rules", "faults")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    EVENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    result: _game_pb2.MatchResult
    event_count: int
    actions: _containers.RepeatedScalarFieldContainer[int]
    seed: int
    rules: _game_pb2.RulesConfig
    faults: _containers.RepeatedCompositeFieldContainer[_game_pb2.Fault]
    def __init__(self, result: _Optional[_Union[_game_pb2.MatchResult, _Mapping]] = ..., event_count: _Optional[int] = ..., actions: _Optional[_Iterable[int]] = ..., seed: _Optional[int] = ..., rules: _Optional[_Union[_game_pb2.RulesConfig, _Mapping]] = ..., faults: _Optional[_Iterable[_Union[_game_pb2.Fault, _Mapping]]] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ConnectedBot(_message.Message):
    __slots__ = ("name", "max_matches", "active_matches", "connected_seconds", "client")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_MATCHES_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    name: str
    max_matches: int
    active_matches: int
    connected_seconds: float
    client: str
    def __init__(self, name: _Optional[str] = ..., max_matches: _Optional[int] = ..., active_matches: _Optional[int] = ..., connected_seconds: _Optional[float] = ..., client: _Optional[str] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[ConnectedBot]
    def __init__(self, bots: _Optional[_Iterable[_Union[ConnectedBot, _Mapping]]] = ...) -> None: ...

class SpectateRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class SpectatorEvent(_message.Message):
    __slots__ = ("match_id", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, match_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...
