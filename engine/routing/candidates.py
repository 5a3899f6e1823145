"""The equal-cost next hops of a node toward a target GPU, the primitive of every policy.

A flow follows shortest (fewest-hop) paths through switches, using the per-destination hop
distances of `engine.topology.graph_kernels.distances_to_targets` (the `dist` table: a row
per target switch set, a column per fabric switch). At each node the equal-cost next hops
are the candidate links; the policies differ only in what they do with them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.routing.structures import Graph


@njit(cache=True, nogil=True)
def n_nodes_of(out_ptr: np.ndarray) -> int:
    """Number of nodes of a CSR adjacency."""
    return out_ptr.shape[0] - 1


@njit(cache=True, nogil=True, inline="always")
def _search_run(lo: int, hi: int, wanted: int, graph: Graph, buf: np.ndarray) -> int:
    """Write to `buf` the out-links at positions [lo, hi) that go to node `wanted`.

    The out-links are sorted by neighbour, so a binary search finds the run of cables.
    """
    out_link, link_dst = graph.out_link, graph.link_dst
    stop = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if link_dst[out_link[mid]] < wanted:
            lo = mid + 1
        else:
            hi = mid
    n = 0
    e = lo
    while e < stop and link_dst[out_link[e]] == wanted:
        buf[n] = out_link[e]
        n += 1
        e += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _switches_at(node: int, key: int, d: int, graph: Graph, dist: np.ndarray, buf: np.ndarray):
    """Write to `buf` the links from `node` to switch neighbours at distance `d`; count them."""
    out_link, run_end, link_dst, local_index = (
        graph.out_link,
        graph.run_end,
        graph.link_dst,
        graph.local_index,
    )
    n = 0
    stop = graph.out_ptr[node + 1]
    e = graph.first_sw[node]
    while e < stop:
        w = link_dst[out_link[e]]
        r = run_end[e]
        if dist[key, local_index[w]] == d:
            for k in range(e, r):
                buf[n] = out_link[k]
                n += 1
        e = r
    return n


@njit(cache=True, nogil=True, inline="always")
def candidates(
    node: int, target: int, key: int, graph: Graph, dist: np.ndarray, buf: np.ndarray
) -> int:
    """Fill `buf` with the equal-cost next-hop links from `node` toward GPU `target`.

    `key` is the row of `dist` toward `target`. `dist` rows end with one extra column: the
    local index of the target set's switch when the set has exactly one, else -1 (fabric
    switches are the highest, consecutive node ids). Out-links are sorted by neighbour, GPUs
    before switches, and parallel cables are skipped as one run, so each neighbour's distance
    is looked up once. Returns the number of candidates.
    """
    if graph.is_switch[node]:
        d = dist[key, graph.local_index[node]]
        if d == 0:
            # The cables to `target` among the GPU neighbours.
            return _search_run(graph.out_ptr[node], graph.first_sw[node], target, graph, buf)
        single = dist[key, dist.shape[1] - 1]
        if d == 1 and single >= 0:
            # One target switch: the cables to it among the switch neighbours.
            wanted = n_nodes_of(graph.out_ptr) - (dist.shape[1] - 1) + single
            return _search_run(graph.first_sw[node], graph.out_ptr[node + 1], wanted, graph, buf)
        return _switches_at(node, key, d - 1, graph, dist, buf)
    best = first_distance(node, key, graph, dist)
    if best < 0:
        return 0
    return _switches_at(node, key, best, graph, dist, buf)


@njit(cache=True, nogil=True, inline="always")
def first_distance(entry: int, key: int, graph: Graph, dist: np.ndarray) -> int:
    """Fewest hops from a neighbour switch of `entry` to the target set of row `key` (-1: none)."""
    out_link, run_end, link_dst, local_index = (
        graph.out_link,
        graph.run_end,
        graph.link_dst,
        graph.local_index,
    )
    best = -1
    e = graph.first_sw[entry]
    stop = graph.out_ptr[entry + 1]
    while e < stop:
        dw = dist[key, local_index[link_dst[out_link[e]]]]
        if dw >= 0 and (best < 0 or dw < best):
            best = dw
        e = run_end[e]
    return best


@njit(cache=True, nogil=True)
def max_hops(dist: np.ndarray) -> int:
    """An upper bound on network hops of a shortest path (entry and exit links included)."""
    longest = 0
    for v in dist.ravel():
        if v > longest:
            longest = v
    return int(longest) + 3
