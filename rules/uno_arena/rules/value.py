"""The base of the rules' frozen values that write their own `__init__` (the events, `Observation`).

Why their own: a compiled module keeps a dataclass-generated `__init__` interpreted (0.5-0.8 us a call
against ~0.07 us for a compiled one), and events and observations are built on every decision. The
dataclass decorator still gives them fields, equality, hashing, `repr` and frozenness.
"""

from __future__ import annotations

from dataclasses import fields


class Value:
    """Copies and pickles rebuild the value through `__init__`, with its fields in order.

    The default way (`cls.__new__(cls)`, then the slots set) fails once compiled, where `__new__`
    runs `__init__` without its arguments.
    """

    __slots__ = ()

    def __reduce__(self) -> tuple[type[Value], tuple[object, ...]]:
        # every subclass is a dataclass
        return type(self), tuple(getattr(self, f.name) for f in fields(self))  # type: ignore[arg-type]
