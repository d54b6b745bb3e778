from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Colour(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLOUR_UNSPECIFIED: _ClassVar[Colour]
    COLOUR_RED: _ClassVar[Colour]
    COLOUR_YELLOW: _ClassVar[Colour]
    COLOUR_GREEN: _ClassVar[Colour]
    COLOUR_BLUE: _ClassVar[Colour]

class Rank(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RANK_UNSPECIFIED: _ClassVar[Rank]
    RANK_0: _ClassVar[Rank]
    RANK_1: _ClassVar[Rank]
    RANK_2: _ClassVar[Rank]
    RANK_3: _ClassVar[Rank]
    RANK_4: _ClassVar[Rank]
    RANK_5: _ClassVar[Rank]
    RANK_6: _ClassVar[Rank]
    RANK_7: _ClassVar[Rank]
    RANK_8: _ClassVar[Rank]
    RANK_9: _ClassVar[Rank]
    RANK_SKIP: _ClassVar[Rank]
    RANK_REVERSE: _ClassVar[Rank]
    RANK_DRAW_TWO: _ClassVar[Rank]
    RANK_WILD: _ClassVar[Rank]
    RANK_WILD_DRAW_FOUR: _ClassVar[Rank]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_PLAY: _ClassVar[ActionKind]
    ACTION_KIND_DRAW: _ClassVar[ActionKind]
    ACTION_KIND_KEEP: _ClassVar[ActionKind]
    ACTION_KIND_CHALLENGE: _ClassVar[ActionKind]
    ACTION_KIND_ACCEPT: _ClassVar[ActionKind]
    ACTION_KIND_CATCH: _ClassVar[ActionKind]
    ACTION_KIND_PASS: _ClassVar[ActionKind]
    ACTION_KIND_CHOOSE_COLOUR: _ClassVar[ActionKind]
    ACTION_KIND_DONE: _ClassVar[ActionKind]
    ACTION_KIND_SWAP: _ClassVar[ActionKind]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_CHOOSE_COLOUR: _ClassVar[Phase]
    PHASE_TURN: _ClassVar[Phase]
    PHASE_DRAWN: _ClassVar[Phase]
    PHASE_CATCH: _ClassVar[Phase]
    PHASE_CHALLENGE: _ClassVar[Phase]
    PHASE_OVER: _ClassVar[Phase]
    PHASE_STACK: _ClassVar[Phase]
    PHASE_JUMP_IN: _ClassVar[Phase]
    PHASE_LAY: _ClassVar[Phase]
    PHASE_SWAP: _ClassVar[Phase]

class HandEnd(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HAND_END_UNSPECIFIED: _ClassVar[HandEnd]
    HAND_END_PLAYED_OUT: _ClassVar[HandEnd]
    HAND_END_NO_PROGRESS: _ClassVar[HandEnd]
    HAND_END_MAX_TURNS: _ClassVar[HandEnd]

class MatchEnd(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_END_UNSPECIFIED: _ClassVar[MatchEnd]
    MATCH_END_TARGET_REACHED: _ClassVar[MatchEnd]
    MATCH_END_MAX_HANDS: _ClassVar[MatchEnd]
    MATCH_END_FORFEIT: _ClassVar[MatchEnd]
    MATCH_END_ABORTED: _ClassVar[MatchEnd]

class ShuffleReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SHUFFLE_REASON_UNSPECIFIED: _ClassVar[ShuffleReason]
    SHUFFLE_REASON_DEAL: _ClassVar[ShuffleReason]
    SHUFFLE_REASON_RESHUFFLE: _ClassVar[ShuffleReason]
    SHUFFLE_REASON_FIRST_CARD: _ClassVar[ShuffleReason]

class FaultKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_KIND_UNSPECIFIED: _ClassVar[FaultKind]
    FAULT_KIND_TIMEOUT: _ClassVar[FaultKind]
    FAULT_KIND_ILLEGAL: _ClassVar[FaultKind]
    FAULT_KIND_INVALID: _ClassVar[FaultKind]
    FAULT_KIND_DISCONNECTED: _ClassVar[FaultKind]
    FAULT_KIND_BOT_ERROR: _ClassVar[FaultKind]
COLOUR_UNSPECIFIED: Colour
COLOUR_RED: Colour
COLOUR_YELLOW: Colour
COLOUR_GREEN: Colour
COLOUR_BLUE: Colour
RANK_UNSPECIFIED: Rank
RANK_0: Rank
RANK_1: Rank
RANK_2: Rank
RANK_3: Rank
RANK_4: Rank
RANK_5: Rank
RANK_6: Rank
RANK_7: Rank
RANK_8: Rank
RANK_9: Rank
RANK_SKIP: Rank
RANK_REVERSE: Rank
RANK_DRAW_TWO: Rank
RANK_WILD: Rank
RANK_WILD_DRAW_FOUR: Rank
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_PLAY: ActionKind
ACTION_KIND_DRAW: ActionKind
ACTION_KIND_KEEP: ActionKind
ACTION_KIND_CHALLENGE: ActionKind
ACTION_KIND_ACCEPT: ActionKind
ACTION_KIND_CATCH: ActionKind
ACTION_KIND_PASS: ActionKind
ACTION_KIND_CHOOSE_COLOUR: ActionKind
ACTION_KIND_DONE: ActionKind
ACTION_KIND_SWAP: ActionKind
PHASE_UNSPECIFIED: Phase
PHASE_CHOOSE_COLOUR: Phase
PHASE_TURN: Phase
PHASE_DRAWN: Phase
PHASE_CATCH: Phase
PHASE_CHALLENGE: Phase
PHASE_OVER: Phase
PHASE_STACK: Phase
PHASE_JUMP_IN: Phase
PHASE_LAY: Phase
PHASE_SWAP: Phase
HAND_END_UNSPECIFIED: HandEnd
HAND_END_PLAYED_OUT: HandEnd
HAND_END_NO_PROGRESS: HandEnd
HAND_END_MAX_TURNS: HandEnd
MATCH_END_UNSPECIFIED: MatchEnd
MATCH_END_TARGET_REACHED: MatchEnd
MATCH_END_MAX_HANDS: MatchEnd
MATCH_END_FORFEIT: MatchEnd
MATCH_END_ABORTED: MatchEnd
SHUFFLE_REASON_UNSPECIFIED: ShuffleReason
SHUFFLE_REASON_DEAL: ShuffleReason
SHUFFLE_REASON_RESHUFFLE: ShuffleReason
SHUFFLE_REASON_FIRST_CARD: ShuffleReason
FAULT_KIND_UNSPECIFIED: FaultKind
FAULT_KIND_TIMEOUT: FaultKind
FAULT_KIND_ILLEGAL: FaultKind
FAULT_KIND_INVALID: FaultKind
FAULT_KIND_DISCONNECTED: FaultKind
FAULT_KIND_BOT_ERROR: FaultKind

class Card(_message.Message):
    __slots__ = ("colour", "rank", "index")
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    colour: Colour
    rank: Rank
    index: int
    def __init__(self, colour: _Optional[_Union[Colour, str]] = ..., rank: _Optional[_Union[Rank, str]] = ..., index: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("id", "kind", "card", "colour", "uno", "text", "seat")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    UNO_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    id: int
    kind: ActionKind
    card: Card
    colour: Colour
    uno: bool
    text: str
    seat: int
    def __init__(self, id: _Optional[int] = ..., kind: _Optional[_Union[ActionKind, str]] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., colour: _Optional[_Union[Colour, str]] = ..., uno: _Optional[bool] = ..., text: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class ShownHand(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "players", "phase", "to_move", "turn_seat", "dealer", "direction", "cards", "top", "colour", "discards", "hand_sizes", "draw_pile_size", "drawn", "shown", "turn", "scores", "target_score", "hand_number", "penalty")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    TURN_SEAT_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TOP_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    DISCARDS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    DRAW_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TARGET_SCORE_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PENALTY_FIELD_NUMBER: _ClassVar[int]
    seat: int
    players: int
    phase: Phase
    to_move: int
    turn_seat: int
    dealer: int
    direction: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    top: Card
    colour: Colour
    discards: _containers.RepeatedCompositeFieldContainer[Card]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    draw_pile_size: int
    drawn: Card
    shown: _containers.RepeatedCompositeFieldContainer[ShownHand]
    turn: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    target_score: int
    hand_number: int
    penalty: int
    def __init__(self, seat: _Optional[int] = ..., players: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., to_move: _Optional[int] = ..., turn_seat: _Optional[int] = ..., dealer: _Optional[int] = ..., direction: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., top: _Optional[_Union[Card, _Mapping]] = ..., colour: _Optional[_Union[Colour, str]] = ..., discards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., draw_pile_size: _Optional[int] = ..., drawn: _Optional[_Union[Card, _Mapping]] = ..., shown: _Optional[_Iterable[_Union[ShownHand, _Mapping]]] = ..., turn: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., target_score: _Optional[int] = ..., hand_number: _Optional[int] = ..., penalty: _Optional[int] = ...) -> None: ...

class RulesConfig(_message.Message):
    __slots__ = ("players", "dealer", "hand_size", "first_wild_chooser", "first_wild_draw_four", "draw_until_playable", "uno_penalty", "target_score", "scoring", "max_turns_per_hand", "max_hands_per_match", "stacking", "jump_in", "seven_zero", "multi_play")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    FIRST_WILD_CHOOSER_FIELD_NUMBER: _ClassVar[int]
    FIRST_WILD_DRAW_FOUR_FIELD_NUMBER: _ClassVar[int]
    DRAW_UNTIL_PLAYABLE_FIELD_NUMBER: _ClassVar[int]
    UNO_PENALTY_FIELD_NUMBER: _ClassVar[int]
    TARGET_SCORE_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    MAX_TURNS_PER_HAND_FIELD_NUMBER: _ClassVar[int]
    MAX_HANDS_PER_MATCH_FIELD_NUMBER: _ClassVar[int]
    STACKING_FIELD_NUMBER: _ClassVar[int]
    JUMP_IN_FIELD_NUMBER: _ClassVar[int]
    SEVEN_ZERO_FIELD_NUMBER: _ClassVar[int]
    MULTI_PLAY_FIELD_NUMBER: _ClassVar[int]
    players: int
    dealer: str
    hand_size: int
    first_wild_chooser: str
    first_wild_draw_four: str
    draw_until_playable: bool
    uno_penalty: int
    target_score: int
    scoring: str
    max_turns_per_hand: int
    max_hands_per_match: int
    stacking: bool
    jump_in: bool
    seven_zero: bool
    multi_play: bool
    def __init__(self, players: _Optional[int] = ..., dealer: _Optional[str] = ..., hand_size: _Optional[int] = ..., first_wild_chooser: _Optional[str] = ..., first_wild_draw_four: _Optional[str] = ..., draw_until_playable: _Optional[bool] = ..., uno_penalty: _Optional[int] = ..., target_score: _Optional[int] = ..., scoring: _Optional[str] = ..., max_turns_per_hand: _Optional[int] = ..., max_hands_per_match: _Optional[int] = ..., stacking: _Optional[bool] = ..., jump_in: _Optional[bool] = ..., seven_zero: _Optional[bool] = ..., multi_play: _Optional[bool] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("hand_started", "dealer_drew", "dealer_chosen", "shuffled", "dealt", "first_card", "colour_chosen", "played", "drew", "kept", "skipped", "direction_changed", "caught", "catch_passed", "accepted", "challenged", "hand_shown", "reshuffled", "hand_ended", "match_ended", "swapped", "hands_passed", "received")
    HAND_STARTED_FIELD_NUMBER: _ClassVar[int]
    DEALER_DREW_FIELD_NUMBER: _ClassVar[int]
    DEALER_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    SHUFFLED_FIELD_NUMBER: _ClassVar[int]
    DEALT_FIELD_NUMBER: _ClassVar[int]
    FIRST_CARD_FIELD_NUMBER: _ClassVar[int]
    COLOUR_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    DREW_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_CHANGED_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_FIELD_NUMBER: _ClassVar[int]
    CATCH_PASSED_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    CHALLENGED_FIELD_NUMBER: _ClassVar[int]
    HAND_SHOWN_FIELD_NUMBER: _ClassVar[int]
    RESHUFFLED_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    SWAPPED_FIELD_NUMBER: _ClassVar[int]
    HANDS_PASSED_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    hand_started: HandStarted
    dealer_drew: DealerDrew
    dealer_chosen: DealerChosen
    shuffled: Shuffled
    dealt: Dealt
    first_card: FirstCard
    colour_chosen: ColourChosen
    played: Played
    drew: Drew
    kept: Kept
    skipped: Skipped
    direction_changed: DirectionChanged
    caught: Caught
    catch_passed: CatchPassed
    accepted: Accepted
    challenged: Challenged
    hand_shown: HandShown
    reshuffled: Reshuffled
    hand_ended: HandEnded
    match_ended: MatchEnded
    swapped: Swapped
    hands_passed: HandsPassed
    received: Received
    def __init__(self, hand_started: _Optional[_Union[HandStarted, _Mapping]] = ..., dealer_drew: _Optional[_Union[DealerDrew, _Mapping]] = ..., dealer_chosen: _Optional[_Union[DealerChosen, _Mapping]] = ..., shuffled: _Optional[_Union[Shuffled, _Mapping]] = ..., dealt: _Optional[_Union[Dealt, _Mapping]] = ..., first_card: _Optional[_Union[FirstCard, _Mapping]] = ..., colour_chosen: _Optional[_Union[ColourChosen, _Mapping]] = ..., played: _Optional[_Union[Played, _Mapping]] = ..., drew: _Optional[_Union[Drew, _Mapping]] = ..., kept: _Optional[_Union[Kept, _Mapping]] = ..., skipped: _Optional[_Union[Skipped, _Mapping]] = ..., direction_changed: _Optional[_Union[DirectionChanged, _Mapping]] = ..., caught: _Optional[_Union[Caught, _Mapping]] = ..., catch_passed: _Optional[_Union[CatchPassed, _Mapping]] = ..., accepted: _Optional[_Union[Accepted, _Mapping]] = ..., challenged: _Optional[_Union[Challenged, _Mapping]] = ..., hand_shown: _Optional[_Union[HandShown, _Mapping]] = ..., reshuffled: _Optional[_Union[Reshuffled, _Mapping]] = ..., hand_ended: _Optional[_Union[HandEnded, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., swapped: _Optional[_Union[Swapped, _Mapping]] = ..., hands_passed: _Optional[_Union[HandsPassed, _Mapping]] = ..., received: _Optional[_Union[Received, _Mapping]] = ...) -> None: ...

class HandStarted(_message.Message):
    __slots__ = ("number",)
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    number: int
    def __init__(self, number: _Optional[int] = ...) -> None: ...

class DealerDrew(_message.Message):
    __slots__ = ("seat", "card", "round")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Card
    round: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., round: _Optional[int] = ...) -> None: ...

class DealerChosen(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Shuffled(_message.Message):
    __slots__ = ("reason", "cards")
    REASON_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    reason: ShuffleReason
    cards: int
    def __init__(self, reason: _Optional[_Union[ShuffleReason, str]] = ..., cards: _Optional[int] = ...) -> None: ...

class Dealt(_message.Message):
    __slots__ = ("seat", "count", "cards", "hidden")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    count: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    hidden: bool
    def __init__(self, seat: _Optional[int] = ..., count: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., hidden: _Optional[bool] = ...) -> None: ...

class FirstCard(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: Card
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class ColourChosen(_message.Message):
    __slots__ = ("seat", "colour")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    seat: int
    colour: Colour
    def __init__(self, seat: _Optional[int] = ..., colour: _Optional[_Union[Colour, str]] = ...) -> None: ...

class Played(_message.Message):
    __slots__ = ("seat", "card", "colour", "uno", "cards_left", "jump_in")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    UNO_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    JUMP_IN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Card
    colour: Colour
    uno: bool
    cards_left: int
    jump_in: bool
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., colour: _Optional[_Union[Colour, str]] = ..., uno: _Optional[bool] = ..., cards_left: _Optional[int] = ..., jump_in: _Optional[bool] = ...) -> None: ...

class Drew(_message.Message):
    __slots__ = ("seat", "count", "cards", "hidden", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    count: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    hidden: bool
    reason: str
    def __init__(self, seat: _Optional[int] = ..., count: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., hidden: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class Kept(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Skipped(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DirectionChanged(_message.Message):
    __slots__ = ("direction",)
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    direction: int
    def __init__(self, direction: _Optional[int] = ...) -> None: ...

class Caught(_message.Message):
    __slots__ = ("catcher", "seat")
    CATCHER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    catcher: int
    seat: int
    def __init__(self, catcher: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class CatchPassed(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Accepted(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Challenged(_message.Message):
    __slots__ = ("challenger", "seat", "guilty")
    CHALLENGER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GUILTY_FIELD_NUMBER: _ClassVar[int]
    challenger: int
    seat: int
    guilty: bool
    def __init__(self, challenger: _Optional[int] = ..., seat: _Optional[int] = ..., guilty: _Optional[bool] = ...) -> None: ...

class HandShown(_message.Message):
    __slots__ = ("seat", "to", "cards", "hidden")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    to: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    hidden: bool
    def __init__(self, seat: _Optional[int] = ..., to: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., hidden: _Optional[bool] = ...) -> None: ...

class Reshuffled(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: int
    def __init__(self, cards: _Optional[int] = ...) -> None: ...

class Swapped(_message.Message):
    __slots__ = ("seat", "other")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OTHER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    other: int
    def __init__(self, seat: _Optional[int] = ..., other: _Optional[int] = ...) -> None: ...

class HandsPassed(_message.Message):
    __slots__ = ("direction",)
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    direction: int
    def __init__(self, direction: _Optional[int] = ...) -> None: ...

class Received(_message.Message):
    __slots__ = ("seat", "giver", "count", "cards", "hidden")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GIVER_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    giver: int
    count: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    hidden: bool
    def __init__(self, seat: _Optional[int] = ..., giver: _Optional[int] = ..., count: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., hidden: _Optional[bool] = ...) -> None: ...

class HandEnded(_message.Message):
    __slots__ = ("reason", "winner", "points")
    REASON_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    reason: HandEnd
    winner: int
    points: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, reason: _Optional[_Union[HandEnd, str]] = ..., winner: _Optional[int] = ..., points: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("reason", "winners", "totals")
    REASON_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    reason: MatchEnd
    winners: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, reason: _Optional[_Union[MatchEnd, str]] = ..., winners: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("match_id", "seat", "kind", "detail", "applied", "strikes", "forfeited", "action_index", "event_index")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    EVENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    kind: FaultKind
    detail: str
    applied: Action
    strikes: int
    forfeited: bool
    action_index: int
    event_index: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., kind: _Optional[_Union[FaultKind, str]] = ..., detail: _Optional[str] = ..., applied: _Optional[_Union[Action, _Mapping]] = ..., strikes: _Optional[int] = ..., forfeited: _Optional[bool] = ..., action_index: _Optional[int] = ..., event_index: _Optional[int] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("match_id", "reason", "winners", "totals", "hands", "forfeited", "faults", "bots")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: MatchEnd
    winners: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    hands: _containers.RepeatedCompositeFieldContainer[HandEnded]
    forfeited: _containers.RepeatedScalarFieldContainer[int]
    faults: _containers.RepeatedScalarFieldContainer[int]
    bots: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[_Union[MatchEnd, str]] = ..., winners: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., hands: _Optional[_Iterable[_Union[HandEnded, _Mapping]]] = ..., forfeited: _Optional[_Iterable[int]] = ..., faults: _Optional[_Iterable[int]] = ..., bots: _Optional[_Iterable[str]] = ...) -> None: ...
