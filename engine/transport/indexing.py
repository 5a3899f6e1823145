"""Indices the step kernel's compiler can see are not negative.

numba wraps a negative index around (adds the axis' length), so every array access whose
index it cannot prove non-negative carries a test, an add and a load of the array's shape.
Inside the step kernel, where hundreds of arrays are live and their shapes sit on the
stack, those tests took about a tenth of the 64:1 incast's step (docs/transport.md). An
index masked with `NON_NEGATIVE` has its sign bit clear, so the compiler drops the test;
the mask changes no index the kernel uses, since none is negative.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# An index no larger than this is not negative.
NON_NEGATIVE = np.int64(0x7FFF_FFFF_FFFF_FFFF)


@njit(cache=True, nogil=True, inline="always")
def block_range(begin: int, end: int) -> tuple[int, int]:
    """A block's range as (first index, length), for a loop that counts from 0 and adds
    the first index, which is masked (without, a small network's step cost a third more)."""
    first = begin & NON_NEGATIVE
    return first, end - first


@njit(cache=True, nogil=True, inline="always")
def index(i: int) -> int:
    """`i`, an index read from a table (a link, entry, class or ring row, never negative),
    masked so that the accesses it makes carry no test for a negative index."""
    return i & NON_NEGATIVE


@njit(cache=True, nogil=True, inline="always")
def ring_mask(rows: int) -> int:
    """The mask of a ring of `rows` rows, a power of two: a row's place is its absolute
    number and this mask, which the compiler then sees is not negative."""
    return (rows - 1) & NON_NEGATIVE


@njit(cache=True, nogil=True, inline="always")
def zero(values: np.ndarray, begin: int, end: int) -> None:
    """Zero `values[begin:end]` of a block, counting as `block_range` does."""
    first, count = block_range(begin, end)
    for at in range(count):
        values[first + at] = 0.0
