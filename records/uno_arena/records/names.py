"""Plain names of protocol enum values from the bindings: `target_reached` for `MATCH_END_TARGET_REACHED`.

Records store and show these names; the numbers and the full names come only from `uno_arena.v1`.
"""

from __future__ import annotations

import functools
from typing import TypeVar, cast

from google.protobuf.descriptor import EnumDescriptor
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

E = TypeVar("E", bound=int)


@functools.cache
def _tables(descriptor: EnumDescriptor) -> tuple[dict[int, str], dict[str, int]]:
    zero = descriptor.values_by_number[0].name  # MATCH_END_UNSPECIFIED: the prefix every value shares
    prefix = zero[: zero.rfind("_") + 1]
    by_number = {value.number: value.name.removeprefix(prefix).lower() for value in descriptor.values}
    return by_number, {short: number for number, short in by_number.items()}


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


def names(enum: type[E]) -> tuple[str, ...]:
    """Every plain name of the enum but the zero value's (`unspecified`), in number order."""
    return tuple(name for number, name in sorted(_tables(_descriptor(enum))[0].items()) if number)
