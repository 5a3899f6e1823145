"""Path latencies of routed flows, summed once per distinct path shape.

A link's latency depends only on its class (`engine.topology.expand.latency_classes`: the
NVLink of a server group, or one direction of a bundle), and thousands of flows cross the
same sequence of classes (GPU, NIC, leaf, spine, leaf, NIC, GPU). So a route is read once
into its *signatures*, the distinct class sequences of its flows, with one representative
path each; a sweep of a latency then sums a handful of representative paths and gathers
them per flow, instead of summing every entry of every path at every point. The sums are
those of the full computation, term for term, so the latencies are identical.

Flows whose entries carry weights other than one (traffic spread over several paths) or
routes whose class sequences are too long to encode keep one signature per flow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from engine.runtime.lru import ByteLRU


@dataclass(frozen=True)
class PathSignatures:
    """The distinct class sequences of a route's flows and a representative path of each."""

    flow_signature: np.ndarray  # int32 or int64 per flow: index of its signature
    rep_ptr: np.ndarray  # int64: representative entries of signature s are ptr[s]..ptr[s+1]-1
    rep_class: np.ndarray  # int64 latency class of each representative entry
    rep_weight: np.ndarray  # float64 weight of each representative entry


SIGNATURES: ByteLRU[PathSignatures] = ByteLRU(128 * 2**20)
# Routes whose latencies were summed once entry by entry: a second ask (a sweep) builds their
# shapes, so a single evaluation never pays for them (insertion-ordered, bounded by the router).
SUMMED_ONCE: dict[str, None] = {}


@njit(cache=True, nogil=True)
def path_codes(
    flow_ptr: np.ndarray, entry_link: np.ndarray, link_class: np.ndarray, base: int
) -> np.ndarray:
    """One integer per flow naming its class sequence exactly: digit ``class + 1`` in base
    `base` per entry, first entry lowest (the caller checks that the codes fit)."""
    n = flow_ptr.shape[0] - 1
    out = np.empty(n, dtype=np.int64)
    for f in range(n):
        code, scale = 0, 1
        for e in range(flow_ptr[f], flow_ptr[f + 1]):
            code += (link_class[entry_link[e]] + 1) * scale
            scale *= base
        out[f] = code
    return out


def path_codes_reference(
    flow_ptr: np.ndarray, entry_link: np.ndarray, link_class: np.ndarray, base: int
) -> np.ndarray:
    """`path_codes` in plain Python (for the tests)."""
    codes = []
    for f in range(flow_ptr.shape[0] - 1):
        links = entry_link[flow_ptr[f] : flow_ptr[f + 1]]
        codes.append(sum((int(link_class[x]) + 1) * base**i for i, x in enumerate(links)))
    return np.array(codes, dtype=np.int64)


def path_signatures(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    link_class: np.ndarray,
    n_classes: int,
) -> PathSignatures:
    """The signatures of one route's paths (see the module's docstring)."""
    counts = np.diff(flow_ptr)
    base = n_classes + 1
    encodable = (
        counts.size > 0
        and counts.min() >= 1
        and float(base) ** int(counts.max()) < 2.0**62
        and bool(np.all(entry_weight == 1.0))
    )
    if not encodable:
        n = flow_ptr.shape[0] - 1
        entry_class = link_class[entry_link].astype(np.int64)
        return PathSignatures(np.arange(n, dtype=np.int64), flow_ptr, entry_class, entry_weight)
    codes = path_codes(flow_ptr, entry_link, link_class.astype(np.int64), base)
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    del codes
    shape_counts = counts[first]
    rep_ptr = np.zeros(first.size + 1, dtype=np.int64)
    np.cumsum(shape_counts, out=rep_ptr[1:])
    within = np.arange(rep_ptr[-1], dtype=np.int64) - np.repeat(rep_ptr[:-1], shape_counts)
    take = np.repeat(flow_ptr[first], shape_counts) + within
    return PathSignatures(
        inverse.astype(np.int32).ravel(),
        rep_ptr,
        link_class[entry_link[take]].astype(np.int64),
        entry_weight[take],
    )


def signature_latencies(signatures: PathSignatures, class_latency: np.ndarray) -> np.ndarray:
    """Each flow's path latency, in s, from the latency of each class."""
    s = signatures
    if s.rep_class.size == 0:
        return np.zeros(s.flow_signature.size)
    per_signature = np.add.reduceat(s.rep_weight * class_latency[s.rep_class], s.rep_ptr[:-1])
    return per_signature[s.flow_signature]


def path_latencies_reference(
    flow_ptr: np.ndarray, entry_link: np.ndarray, entry_weight: np.ndarray, link_latency: np.ndarray
) -> np.ndarray:
    """Each flow's path latency summed entry by entry (what the signatures must reproduce)."""
    if entry_link.size == 0:
        return np.zeros(0)
    per_entry = link_latency[entry_link]
    per_entry *= entry_weight  # in place: one temporary of the entries' size, not two
    return np.add.reduceat(per_entry, flow_ptr[:-1])
