"""Small numba graph kernels on the expanded fabric: components and hop distances.

They work on flat arrays (directed links as ``src``/``dst`` index arrays, CSR adjacency) so
they scale to the 131,072-GPU fabric. Each has a plain-Python twin in
`engine.topology.graph_reference` used by the tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _find(parent: np.ndarray, i: int) -> int:
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:
        nxt = parent[i]
        parent[i] = root
        i = nxt
    return root


@njit(cache=True, nogil=True)
def component_labels(n_nodes: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Connected-component label of every node (smallest node index of its component)."""
    parent = np.arange(n_nodes)
    for e in range(src.shape[0]):
        a = _find(parent, src[e])
        b = _find(parent, dst[e])
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
    labels = np.empty(n_nodes, dtype=np.int64)
    for i in range(n_nodes):
        labels[i] = _find(parent, i)
    return labels


# The index of a power of two from its remainder mod 67 (distinct for 2**0 .. 2**63).
_BIT_OF_MOD67 = np.full(67, -1, dtype=np.int64)
for _bit in range(64):
    _BIT_OF_MOD67[(1 << _bit) % 67] = _bit


@njit(cache=True, nogil=True)
def distances_to_targets(
    in_ptr: np.ndarray,
    in_src: np.ndarray,
    transit: np.ndarray,
    target_ptr: np.ndarray,
    targets: np.ndarray,
    local_index: np.ndarray,
    out: np.ndarray,
) -> None:
    """Hop distance from every transit node to each target set, written into `out`.

    `in_ptr`/`in_src` list, for every node, the sources of its incoming links; only nodes
    with `transit` true are relaxed. Target set k is ``targets[target_ptr[k]:target_ptr[k+1]]``.
    ``out[k, local_index[node]]`` receives the distance (-1 when unreachable); `out` has a
    column per transit node.

    Up to 64 target sets advance together, one bit each in a word per node (a multi-source
    breadth-first search): a level reads every edge once for the whole batch instead of once
    per set, which is what a fabric with thousands of leaves needs.
    """
    n_nodes = in_ptr.shape[0] - 1
    n_sets = target_ptr.shape[0] - 1
    seen = np.zeros(n_nodes, dtype=np.uint64)
    frontier = np.zeros(n_nodes, dtype=np.uint64)
    reached = np.zeros(n_nodes, dtype=np.uint64)
    current = np.empty(n_nodes, dtype=np.int64)
    following = np.empty(n_nodes, dtype=np.int64)
    bit_of = _BIT_OF_MOD67
    for first in range(0, n_sets, 64):
        batch = min(64, n_sets - first)
        for j in range(batch):
            out[first + j, :] = -1
        n_current = 0
        for j in range(batch):
            bit = np.uint64(1) << np.uint64(j)
            for t in range(target_ptr[first + j], target_ptr[first + j + 1]):
                node = targets[t]
                out[first + j, local_index[node]] = 0
                if frontier[node] == 0:
                    current[n_current] = node
                    n_current += 1
                frontier[node] |= bit
                seen[node] |= bit
        level = 0
        while n_current > 0:
            level += 1
            n_following = 0
            for c in range(n_current):
                node = current[c]
                bits = frontier[node]
                frontier[node] = 0
                for e in range(in_ptr[node], in_ptr[node + 1]):
                    prev = in_src[e]
                    if not transit[prev]:
                        continue
                    new = bits & ~seen[prev]
                    if new == 0:
                        continue
                    if reached[prev] == 0:
                        following[n_following] = prev
                        n_following += 1
                    reached[prev] |= new
                    seen[prev] |= new
            for c in range(n_following):
                node = following[c]
                bits = reached[node]
                reached[node] = 0
                frontier[node] = bits
                column = local_index[node]
                while bits != 0:
                    low = bits & (~bits + np.uint64(1))
                    out[first + bit_of[np.int64(low % np.uint64(67))], column] = level
                    bits ^= low
                current[c] = node
            n_current = n_following
        for c in range(n_nodes):
            seen[c] = 0
