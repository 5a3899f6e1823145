"""The hashes of ECMP: splitmix64 mixing and the per-flow hash of (src, dst, sub-flow, seed).

A switch hashes a flow's header fields to pick one of its equal-cost links; here the fields
are the GPUs and the sub-flow (queue pair) index, salted by the policy's seed, and the hash
is mixed once more with the node id at every hop. `engine.routing.reference` has the same
hashes on Python integers.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def mix64(x: np.uint64) -> np.uint64:
    """splitmix64 finaliser: a well-spread 64-bit hash of `x`."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def flow_hashes(src: np.ndarray, dst: np.ndarray, sub: np.ndarray, seed: int) -> np.ndarray:
    """The ECMP hash of every flow (GPU `src` to `dst`, sub-flow `sub`) under `seed`."""
    out = np.empty(src.shape[0], dtype=np.uint64)
    base = mix64(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
    for i in range(src.shape[0]):
        h = mix64(base ^ np.uint64(src[i]))
        h = mix64(h ^ (np.uint64(dst[i]) << np.uint64(20)))
        out[i] = mix64(h ^ (np.uint64(sub[i]) << np.uint64(44)))
    return out
