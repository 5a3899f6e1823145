"""The routing kernel: every flow's whole path as CSR arrays of (link, weight) entries.

A flow enters the network at GPU `entry` and leaves it at GPU `exit`; between them it
follows shortest paths through switches, whose equal-cost next hops `candidates` finds. The
policies differ only in what they do with the candidates: hash one (ECMP), take the one on
the least-loaded path (adaptive, `engine.routing.adaptive`), or split evenly over all (spray,
`engine.routing.spray`). NVLink hops before and after the network part are written here too.
`route_flows` runs twice per routing: once to count each flow's entries, once to write them.
A single-path choice hashes the flow with the salt of the node it is at, so switches sharing
a salt (the policy's hash scope) choose alike and polarize.

`engine.routing.reference` holds the plain-Python twin used by the tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.routing.adaptive import adaptive_path, least_loaded, search_scratch
from engine.routing.candidates import candidates, first_distance, max_hops, n_nodes_of
from engine.routing.hashing import mix64
from engine.routing.spray import spray_dag
from engine.routing.structures import Flows, Graph, Links, Paths, Walk

MODE_ECMP, MODE_ADAPTIVE, MODE_SPRAY, MODE_ADAPTIVE_LOCAL = 0, 1, 2, 3
UNREACHABLE = -1


@njit(cache=True, nogil=True, inline="always")
def _write_pair(paths: Paths, pos: int, first: int, second: int) -> None:
    """Write two whole-flow entries (an NVLink hop up and one down) at `pos`."""
    paths.entry_link[pos] = first
    paths.entry_link[pos + 1] = second
    paths.entry_weight[pos] = 1.0
    paths.entry_weight[pos + 1] = 1.0


@njit(cache=True, nogil=True)
def route_flows(
    mode: int,
    write: bool,
    graph: Graph,
    links: Links,
    dist: np.ndarray,
    salt: np.ndarray,
    flows: Flows,
    load: np.ndarray,
    paths: Paths,
) -> None:
    """Count (write=False) or write (write=True) every flow's (link, weight) entries.

    A flow whose entry is -1 stays inside its server (NVLink only). `paths.counts` receives
    the number of entries per flow, or UNREACHABLE. When writing, `paths.flow_ptr` holds the
    offsets computed from the counting pass. Adaptive modes add each flow's bytes to `load`.
    `salt` (uint64 per node, `engine.routing.hashing.node_salts`) is what a node's hash
    function mixes with the flow hash: nodes with equal salts pick alike.
    """
    n_nodes = n_nodes_of(graph.out_ptr)
    # Per-node scratch only for the policy that reads it: sizing the adaptive search scans
    # the whole distance table, a fixed cost every call would pay (10 M entries at 128k).
    n_walk = n_nodes if mode == MODE_SPRAY else 1
    walk = Walk(
        np.empty(max(graph.max_degree, 1), dtype=np.int64),
        np.empty(n_walk, dtype=np.int64),
        np.zeros(n_walk),
        np.zeros(n_walk, dtype=np.int64),
    )
    buf = walk.buf
    searching = mode == MODE_ADAPTIVE and write  # the counting pass never searches
    path = np.empty(n_nodes if searching else 1, dtype=np.int64)
    search = search_scratch(
        max_hops(dist) if searching else 1, graph.max_degree, n_nodes if searching else 1
    )
    # Only the hop-by-hop adaptive choice reads it (a million links at 128k).
    inv_capacity = 1.0 / links.capacity if mode == MODE_ADAPTIVE_LOCAL else np.ones(1)
    nv_up, nv_down = links.nvlink_up, links.nvlink_down
    entry_link, entry_weight, counts = paths.entry_link, paths.entry_weight, paths.counts
    for f in range(flows.src.shape[0]):
        src, dst, entry, exit_ = flows.src[f], flows.dst[f], flows.entry[f], flows.exit[f]
        pos = paths.flow_ptr[f] if write else 0
        n = 0
        if entry < 0:
            if write:
                _write_pair(paths, pos, nv_up[src], nv_down[dst])
            counts[f] = 2
            continue
        key = flows.key[f]
        first = first_distance(entry, key, graph, dist)
        if first < 0:
            counts[f] = UNREACHABLE
            continue
        if entry != src:
            if write:
                _write_pair(paths, pos, nv_up[src], nv_down[entry])
            n += 2
        if mode == MODE_SPRAY:
            n += spray_dag(
                entry,
                exit_,
                key,
                graph,
                dist,
                walk,
                f + 1,
                entry_link[pos + n :],
                entry_weight[pos + n :],
                write,
            )
        elif not write:
            # Every shortest path has the same length: count without walking it.
            n += first + 2
        elif mode == MODE_ADAPTIVE:
            hops = adaptive_path(
                entry,
                exit_,
                key,
                graph,
                dist,
                search,
                load,
                links.capacity,
                flows.nbytes[f],
                flows.hash[f],
                path,
            )
            for h in range(hops):
                entry_link[pos + n + h] = path[h]
                entry_weight[pos + n + h] = 1.0
            n += hops
        else:
            # Single-path walk: ECMP hashes one candidate; local adaptive hashes among the
            # least-loaded ones and books the flow on its link.
            node = entry
            while node != exit_:
                nc = candidates(node, exit_, key, graph, dist, buf)
                if mode == MODE_ADAPTIVE_LOCAL:
                    nc = least_loaded(buf, nc, load, inv_capacity, flows.nbytes[f])
                pick = buf[int(mix64(flows.hash[f] ^ salt[node]) % np.uint64(nc))]
                if mode == MODE_ADAPTIVE_LOCAL:
                    load[pick] += flows.nbytes[f]
                if write:
                    entry_link[pos + n] = pick
                    entry_weight[pos + n] = 1.0
                n += 1
                node = graph.link_dst[pick]
        if exit_ != dst:
            if write:
                _write_pair(paths, pos + n, nv_up[exit_], nv_down[dst])
            n += 2
        counts[f] = n
