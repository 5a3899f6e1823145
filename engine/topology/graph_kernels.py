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
    """
    n_nodes = in_ptr.shape[0] - 1
    queue = np.empty(n_nodes, dtype=np.int64)
    for k in range(target_ptr.shape[0] - 1):
        row = out[k]
        row[:] = -1
        head = 0
        tail = 0
        for t in range(target_ptr[k], target_ptr[k + 1]):
            node = targets[t]
            row[local_index[node]] = 0
            queue[tail] = node
            tail += 1
        while head < tail:
            node = queue[head]
            head += 1
            d = row[local_index[node]] + 1
            for e in range(in_ptr[node], in_ptr[node + 1]):
                prev = in_src[e]
                if transit[prev] and row[local_index[prev]] < 0:
                    row[local_index[prev]] = d
                    queue[tail] = prev
                    tail += 1
