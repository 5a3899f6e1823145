"""The passes over a sprayed route's entries that `engine.transport.spray` makes, in numba.

A sprayed route has an entry per (flow, link, share); at 16,384 GPUs a permutation has 33
million. `hop_sets` cuts each flow's entries into hops (the shares of a hop add up to one)
and gives every hop its lowest link, its size and a signature of its links; `sets_agree`
checks that every link belongs to one set (each hop that crosses a link crosses the same
links). Each has a plain-Python twin the tests compare it with.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# A hop's shares add up to 1; floating sums of shares such as 1/3 miss it by ~1e-16 each.
HOP_EPSILON = 1e-6
SHARE_TOLERANCE = 1e-9
# What `hop_sets` found.
EVEN, UNEVEN_TOTAL, UNEVEN_SHARE = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def mix(link: int) -> np.uint64:
    """A 64-bit mix of a link id; a set's signature is the wrapping sum over its links."""
    x = np.uint64(link) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(29)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(32)
    return x


@njit(cache=True, nogil=True)
def count_hops(flow_ptr: np.ndarray, weight: np.ndarray) -> int:
    """The number of whole hops over all flows (an upper bound when some are not whole)."""
    hops = 0
    for f in range(flow_ptr.shape[0] - 1):
        total = 0.0
        for e in range(flow_ptr[f], flow_ptr[f + 1]):
            total += weight[e]
            if total >= 1.0 - HOP_EPSILON:
                hops += 1
                total = 0.0
    return hops


@njit(cache=True, nogil=True)
def hop_sets(
    flow_ptr: np.ndarray,
    link: np.ndarray,
    weight: np.ndarray,
    hops_of_flow: np.ndarray,
    lowest: np.ndarray,
    size: np.ndarray,
    signature: np.ndarray,
) -> int:
    """Each flow's hops, in order: their count per flow, and per hop the lowest link, the
    number of links and the signature. Returns `EVEN`, or `UNEVEN_TOTAL` when a flow's
    shares do not add up to whole hops, `UNEVEN_SHARE` when a hop's shares differ."""
    h = 0
    for f in range(flow_ptr.shape[0] - 1):
        e, end = flow_ptr[f], flow_ptr[f + 1]
        n_hops = 0
        while e < end:
            start = e
            total = 0.0
            low = link[e]
            sig = np.uint64(0)
            while e < end:
                total += weight[e]
                low = min(low, link[e])
                sig += mix(link[e])
                e += 1
                if total >= 1.0 - HOP_EPSILON:
                    break
            if abs(total - 1.0) > HOP_EPSILON:
                return UNEVEN_TOTAL
            n = e - start
            for k in range(start, e):
                if abs(weight[k] - 1.0 / n) > SHARE_TOLERANCE:
                    return UNEVEN_SHARE
            lowest[h] = low
            size[h] = n
            signature[h] = sig
            h += 1
            n_hops += 1
        hops_of_flow[f] = n_hops
    return EVEN


@njit(cache=True, nogil=True)
def sets_agree(
    flow_ptr: np.ndarray,
    link: np.ndarray,
    hops_of_flow: np.ndarray,
    lowest: np.ndarray,
    size: np.ndarray,
    signature: np.ndarray,
    set_of: np.ndarray,
) -> bool:
    """Whether every hop that crosses a link crosses the same set (lowest link, size and
    signature alike); `set_of` (per link, -1 filled) gets each crossed link's set."""
    seen_size = np.zeros(set_of.shape[0], dtype=np.int64)
    seen_signature = np.zeros(set_of.shape[0], dtype=np.uint64)
    for check in range(2):  # the first pass writes, the second compares
        h = 0
        for f in range(flow_ptr.shape[0] - 1):
            e = flow_ptr[f]
            for _ in range(hops_of_flow[f]):
                for k in range(e, e + size[h]):
                    x = link[k]
                    if check == 0:
                        set_of[x] = lowest[h]
                        seen_size[x] = size[h]
                        seen_signature[x] = signature[h]
                    elif (
                        set_of[x] != lowest[h]
                        or seen_size[x] != size[h]
                        or seen_signature[x] != signature[h]
                    ):
                        return False
                e += size[h]
                h += 1
    return True


def hop_sets_reference(
    flow_ptr: np.ndarray, link: np.ndarray, weight: np.ndarray
) -> tuple[int, list[int], list[int], list[int], list[int]]:
    """Plain-Python twin of `hop_sets`: (status, hops per flow, lowest, size, signature)."""
    hops_of_flow, lowest, size, signature = [], [], [], []
    for f in range(len(flow_ptr) - 1):
        entries = list(range(int(flow_ptr[f]), int(flow_ptr[f + 1])))
        n_hops = 0
        while entries:
            hop, total = [], 0.0
            while entries and total < 1.0 - HOP_EPSILON:
                e = entries.pop(0)
                hop.append(e)
                total += float(weight[e])
            if abs(total - 1.0) > HOP_EPSILON:
                return UNEVEN_TOTAL, [], [], [], []
            if any(abs(float(weight[e]) - 1.0 / len(hop)) > SHARE_TOLERANCE for e in hop):
                return UNEVEN_SHARE, [], [], [], []
            lowest.append(min(int(link[e]) for e in hop))
            size.append(len(hop))
            signature.append(sum(_mix_reference(int(link[e])) for e in hop) % 2**64)
            n_hops += 1
        hops_of_flow.append(n_hops)
    return EVEN, hops_of_flow, lowest, size, signature


def _mix_reference(link: int) -> int:
    """Plain-Python twin of `mix`."""
    mask = 2**64 - 1
    x = (link * 0x9E3779B97F4A7C15) & mask
    x ^= x >> 29
    x = (x * 0xBF58476D1CE4E5B9) & mask
    x ^= x >> 32
    return x


def sets_agree_reference(
    flow_ptr: np.ndarray, link: np.ndarray, hops_of_flow, lowest, size, signature
) -> bool:
    """Plain-Python twin of `sets_agree`: each link's hops all name the same set."""
    seen: dict[int, tuple[int, int, int]] = {}
    h = 0
    for f in range(len(flow_ptr) - 1):
        e = int(flow_ptr[f])
        for _ in range(hops_of_flow[f]):
            key = (lowest[h], size[h], signature[h])
            for k in range(e, e + size[h]):
                if seen.setdefault(int(link[k]), key) != key:
                    return False
            e += size[h]
            h += 1
    return True
