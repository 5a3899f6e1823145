"""Hashes for colour refinement: numbers of one row into one, multisets into one, and back
to small labels (`engine.topology.symmetry` on fabrics, `engine.transport.kinds` on
transport networks).

The arithmetic is splitmix64's finaliser on uint64, wrapping; a multiset's hash is the
wrapping sum of its members' hashes, so it does not depend on their order. Two different
rows or multisets share a hash with odds of about 2^-64 per pair.
"""

from __future__ import annotations

import numpy as np

MIX1 = np.uint64(0xBF58476D1CE4E5B9)  # splitmix64's constants (also read by numba kernels)
MIX2 = np.uint64(0x94D049BB133111EB)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element-wise on uint64 (wrapping arithmetic)."""
    x = np.asarray(x).astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * MIX1
        x = (x ^ (x >> np.uint64(27))) * MIX2
        return x ^ (x >> np.uint64(31))


def combine(*columns: np.ndarray) -> np.ndarray:
    """One uint64 per row from several integer columns of equal length (order matters)."""
    out = np.zeros(np.asarray(columns[0]).shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for col in columns:
            out = mix(out * GOLDEN + np.asarray(col).astype(np.uint64))
    return out


def dense(keys: np.ndarray) -> np.ndarray:
    """Small integer labels 0..k-1 for distinct `keys`, as int64."""
    return np.unique(keys, return_inverse=True)[1].reshape(-1).astype(np.int64)


def multiset_sum(owner: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per owner 0..n-1 the wrapping uint64 sum of its `values` (a multiset's hash)."""
    out = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        np.add.at(out, np.asarray(owner), np.asarray(values, dtype=np.uint64))
    return out
