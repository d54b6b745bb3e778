"""The numpy side of the environments' hot path: a seat's vector and action mask from a `Table`."""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from uno_arena.env.table import Table

_F32: Final = np.dtype(np.float32)
_I8: Final = np.dtype(np.int8)


def vector(table: Table, seat: int) -> npt.NDArray[np.float32]:
    """`seat`'s vector now: float32, `uno_arena.sdk.encoding.OBSERVATION_SIZE` values (a new array)."""
    return np.frombuffer(table.seats.fill(table.match, seat), _F32)


def mask(table: Table, seat: int) -> npt.NDArray[np.int8]:
    """`seat`'s action mask now: int8, 1 at its legal action ids, all 0 unless it is to move (a new array)."""
    return np.frombuffer(table.mask_bits(seat), _I8)
