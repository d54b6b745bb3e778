"""Plain names of the protocol's enum values: `target_reached` for `MATCH_END_TARGET_REACHED`.

Written by hand beside the generated bindings and read from their descriptors, so the numbers and
the full names stay in the .proto alone: the SDK's views, the records and replays name values
through this module. The zero value (`..._UNSPECIFIED`, "not set") gives each enum's prefix.

Also the one enum sent by name rather than number: a bot stream's `CloseReason`, in the trailing
metadata entry `CLOSE_REASON_KEY` (bot.proto), written by the server and read by the SDK here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TypeVar, cast

from google.protobuf.descriptor import EnumDescriptor
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from uno_arena.v1 import bot_pb2

E = TypeVar("E", bound=int)


@functools.cache
def _tables(descriptor: EnumDescriptor) -> tuple[dict[int, str], dict[str, int]]:
    prefix = descriptor.values_by_number[0].name.removesuffix("UNSPECIFIED")  # MATCH_END_
    by_number = {value.number: value.name.removeprefix(prefix).lower() for value in descriptor.values}
    return by_number, {short: number for number, short in by_number.items()}


def names(descriptor: EnumDescriptor) -> dict[int, str]:
    """Number -> plain name of every value but the zero one: `{1: "red", 2: "yellow", ...}` for `Colour`."""
    return {number: name for number, name in _tables(descriptor)[0].items() if number}


def _descriptor(enum: type[E]) -> EnumDescriptor:
    # The stubs declare each protocol enum as an int subclass; at run time it is an EnumTypeWrapper.
    return cast(EnumTypeWrapper, enum).DESCRIPTOR


def described(descriptor: EnumDescriptor, number: int) -> str:
    """The plain name of `number` in the enum `descriptor` (a field's `enum_type`); unknown: the number."""
    return _tables(descriptor)[0].get(number, str(number))


def name_of(enum: type[E], number: int) -> str:
    """`name_of(pb.MatchEnd, pb.MATCH_END_FORFEIT) == "forfeit"`; an unknown number shows as itself."""
    return described(_descriptor(enum), number)


def number_of(enum: type[E], name: str) -> E:
    """The inverse of `name_of`; an unknown name raises `ValueError` naming the enum's values."""
    numbers = _tables(_descriptor(enum))[1]
    if name not in numbers:
        raise ValueError(f"{name!r} is not one of {', '.join(numbers)}")
    return cast(E, numbers[name])


def names_of(enum: type[E]) -> tuple[str, ...]:
    """Every plain name of the enum but the zero value's (`unspecified`), in number order."""
    return tuple(name for _, name in sorted(names(_descriptor(enum)).items()))


CLOSE_REASON_KEY = "uno-arena-close-reason"
"""The trailing metadata key of a bot stream's end; its value names a `CloseReason` (bot.proto)."""


def close_trailer(reason: bot_pb2.CloseReason) -> tuple[tuple[str, str], ...]:
    """The trailing metadata that tells why a bot's stream ends; none for `CLOSE_REASON_UNSPECIFIED`."""
    if reason == bot_pb2.CLOSE_REASON_UNSPECIFIED:
        return ()
    return ((CLOSE_REASON_KEY, bot_pb2.CloseReason.Name(reason)),)


def close_reason_of(
    trailing_metadata: Iterable[tuple[str, str | bytes]] | None,
) -> bot_pb2.CloseReason:
    """The `CloseReason` an ended stream's trailers name: `CLOSE_REASON_UNSPECIFIED` when they name none
    (a server before the enum, or gRPC ending the stream itself) or one this version does not know."""
    for key, value in trailing_metadata or ():
        if key == CLOSE_REASON_KEY:
            name = value.decode("ascii", "replace") if isinstance(value, bytes) else value
            known = bot_pb2.CloseReason.DESCRIPTOR.values_by_name.get(name)
            return cast(bot_pb2.CloseReason, known.number) if known else bot_pb2.CLOSE_REASON_UNSPECIFIED
    return bot_pb2.CLOSE_REASON_UNSPECIFIED


def json_names(enum: type[E]) -> dict[str, str]:
    """Each value's name as the protocol's JSON spells it (`MessageToDict`: `COLOUR_RED`) -> its plain
    name (`red`), for every value but the zero one (which the JSON leaves out), in number order."""
    descriptor = _descriptor(enum)
    values = descriptor.values_by_number
    return {values[number].name: name for number, name in sorted(names(descriptor).items())}
