"""The SDK's typed views of the protocol's enums, checked once (at import) against the bindings.

`uno_arena.v1` is the one source of every enum name and number: a value
`PREFIX_NAME = n` of a .proto enum is `n -> "name"` here (lower case, without
the enum's prefix), and the SDK's typed views map those names to their members,
so no number is written down in the SDK. A view that no longer matches its
enum fails at import, naming the difference.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import TypeVar

from google.protobuf.descriptor import EnumDescriptor

from uno_arena.v1.names import names

_E = TypeVar("_E", bound=enum.Enum)


class ProtocolMismatch(RuntimeError):
    """An SDK view and the protocol enum it stands for list different values."""


def members(proto_enum: EnumDescriptor, view: type[_E]) -> dict[int, _E]:
    """Number -> the member of `view` whose value is that number's name: `{1: Colour.RED, ...}`."""
    by_value = {str(member.value): member for member in view}
    named = names(proto_enum)
    unknown = [name for name in named.values() if name not in by_value]
    if unknown:
        raise ProtocolMismatch(
            f"the protocol's {proto_enum.name} has {unknown}, not in the SDK's {view.__name__}"
        )
    table = {number: by_value[name] for number, name in named.items()}
    covers(proto_enum, view, table.values())
    return table


def covers(proto_enum: EnumDescriptor, view: type[_E], reached: Iterable[_E]) -> None:
    """Raise unless every member of `view` stands for some value of `proto_enum`."""
    seen = set(reached)
    missing = [member.name for member in view if member not in seen]
    if missing:
        raise ProtocolMismatch(
            f"the SDK's {view.__name__} has {missing}, not in the protocol's {proto_enum.name}"
        )
