"""Adaptive routing: each flow on the least-loaded equal-cost path, then re-placed.

Paths compare by their busiest link after adding the flow, then by how many links are at
that load (so a flow does not pick a path crossing two busy links over one crossing one).
`adaptive_path` searches whole paths; `least_loaded` is the hop-by-hop choice a switch makes,
used when there are too many flows to search; `refine_adaptive` revisits every flow once all
are placed. The search remembers subtrees that held no better path (see `adaptive_path`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.routing.candidates import candidates, first_distance, max_hops
from engine.routing.hashing import mix64
from engine.routing.structures import Flows, Graph, Links, Paths, Search

# Relative tolerance under which two utilizations count as equal.
TIE = 1e-12


@njit(cache=True, nogil=True)
def least_loaded(
    buf: np.ndarray, nc: int, load: np.ndarray, inv_capacity: np.ndarray, nbytes: float
) -> int:
    """Keep in `buf` the candidates least loaded after adding `nbytes`; return how many."""
    lowest = np.inf
    ties = 0
    for c in range(nc):
        v = (load[buf[c]] + nbytes) * inv_capacity[buf[c]]
        if v < lowest * (1.0 - TIE):
            lowest = v
            buf[0] = buf[c]
            ties = 1
        elif v <= lowest * (1.0 + TIE):
            buf[ties] = buf[c]
            ties += 1
    return ties


@njit(cache=True, nogil=True)
def _extend(after, path_max, path_count):
    """(busiest utilization, links at it) of a path prefix extended by a link at `after`."""
    if after > path_max * (1.0 + TIE):
        return after, 1
    if after >= path_max * (1.0 - TIE):
        return path_max, path_count + 1
    return path_max, path_count


@njit(cache=True, nogil=True)
def _better(m1, c1, m2, c2):
    """Whether (busiest, count) m1, c1 is strictly better than m2, c2."""
    if m1 < m2 * (1.0 - TIE):
        return True
    return m1 <= m2 * (1.0 + TIE) and c1 < c2


@njit(cache=True, nogil=True)
def search_scratch(hops: int, max_degree: int, n_nodes: int) -> Search:
    """Scratch arrays of `adaptive_path` for paths up to `hops` network hops on a fabric of
    `n_nodes` nodes (kept across searches: the memo's versions tell searches apart)."""
    return Search(
        np.empty((hops, max(max_degree, 1)), dtype=np.int64),
        np.zeros(hops, dtype=np.int64),
        np.zeros(hops, dtype=np.int64),
        np.zeros(hops, dtype=np.uint64),
        np.zeros(hops),
        np.zeros(hops, dtype=np.int64),
        np.zeros(hops, dtype=np.bool_),
        np.zeros(hops, dtype=np.int64),
        np.zeros(hops, dtype=np.int64),
        np.zeros(hops, dtype=np.int64),
        np.zeros(n_nodes, dtype=np.int64),
        np.zeros(n_nodes),
        np.zeros(n_nodes, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def adaptive_path(
    entry: int,
    target: int,
    key: int,
    graph: Graph,
    dist: np.ndarray,
    search: Search,
    load: np.ndarray,
    capacity: np.ndarray,
    nbytes: float,
    seed_hash: np.uint64,
    path_out: np.ndarray,
) -> int:
    """The least-loaded equal-cost path for a flow of `nbytes`; adds the flow to `load`.

    An idle path is taken as soon as one is found, as adaptive routing sends to free ports.
    Depth-first search with the candidates visited in a hashed order (ties go to a spread of
    paths) and prefixes already no better than the best path pruned. A node whose subtree
    held nothing better is skipped when reached again under the same best path with the same
    busiest utilization and no fewer links at it: the search below it would run exactly as
    before, so the path is the one the plain search picks (`ReferenceRouter.adaptive_search`)
    at a fifth of the link evaluations on a 3-tier fat-tree. Returns the number of hops
    written to `path_out`.
    """
    cand, n_cand, pos, rot, part_max, part_count, part_idle, trial = search[:8]
    node_at, enter_version, memo_version, memo_max, memo_count = search[8:13]
    link_dst = graph.link_dst
    best_max, best_count, best_hops = np.inf, 1 << 30, 0
    search.version[0] += 1
    version = search.version[0]
    depth = 0
    node_at[0] = entry
    enter_version[0] = version
    n_cand[0] = candidates(entry, target, key, graph, dist, cand[0])
    pos[0] = 0
    rot[0] = mix64(seed_hash ^ np.uint64(entry))
    part_max[0] = 0.0
    part_count[0] = 0
    part_idle[0] = True
    while depth >= 0:
        if pos[depth] >= n_cand[depth]:
            if enter_version[depth] == version:
                # Nothing better below this node with this prefix: remember it.
                v = node_at[depth]
                memo_version[v] = version
                memo_max[v] = part_max[depth]
                memo_count[v] = part_count[depth]
            depth -= 1
            continue
        link = cand[depth, int((rot[depth] + np.uint64(pos[depth])) % np.uint64(n_cand[depth]))]
        pos[depth] += 1
        m, k = _extend((load[link] + nbytes) / capacity[link], part_max[depth], part_count[depth])
        if best_hops > 0 and not _better(m, k, best_max, best_count):
            continue
        trial[depth] = link
        idle = part_idle[depth] and load[link] == 0.0
        node = link_dst[link]
        if node == target:
            best_max, best_count, best_hops = m, k, depth + 1
            search.version[0] += 1
            version = search.version[0]
            for h in range(depth + 1):
                path_out[h] = trial[h]
            if idle:
                break
            continue
        if memo_version[node] == version and memo_max[node] == m and memo_count[node] <= k:
            # The same node, best path and busiest utilization, with no fewer links at it,
            # held nothing better before: it holds nothing better now.
            continue
        depth += 1
        node_at[depth] = node
        enter_version[depth] = version
        n_cand[depth] = candidates(node, target, key, graph, dist, cand[depth])
        pos[depth] = 0
        rot[depth] = mix64(seed_hash ^ np.uint64(node))
        part_max[depth] = m
        part_count[depth] = k
        part_idle[depth] = idle
    for h in range(best_hops):
        load[path_out[h]] += nbytes
    return best_hops


@njit(cache=True, nogil=True)
def refine_adaptive(
    passes: int,
    graph: Graph,
    links: Links,
    dist: np.ndarray,
    flows: Flows,
    load: np.ndarray,
    paths: Paths,
) -> None:
    """Re-place each adaptive flow on the best path given all others, `passes` times.

    The first placement is greedy in flow order, so early flows cannot see later ones;
    revisiting them converges toward the balance adaptive routing reaches in a real fabric,
    where every packet keeps choosing. Shortest paths all have the same length, so a flow's
    network entries in `paths.entry_link` are rewritten in place. `load` must hold the bytes
    of the current paths.
    """
    flow_ptr, entry_link = paths.flow_ptr, paths.entry_link
    path = np.empty(max_hops(dist), dtype=np.int64)
    search = search_scratch(max_hops(dist), graph.max_degree, graph.out_ptr.shape[0] - 1)
    for _ in range(passes):
        for f in range(flows.src.shape[0]):
            entry = flows.entry[f]
            if entry < 0:
                continue
            start = flow_ptr[f] + (2 if entry != flows.src[f] else 0)
            hops = first_distance(entry, flows.key[f], graph, dist) + 2
            for h in range(hops):
                load[entry_link[start + h]] -= flows.nbytes[f]
            n = adaptive_path(
                entry,
                flows.exit[f],
                flows.key[f],
                graph,
                dist,
                search,
                load,
                links.capacity,
                flows.nbytes[f],
                flows.hash[f],
                path,
            )
            for h in range(n):
                entry_link[start + h] = path[h]
