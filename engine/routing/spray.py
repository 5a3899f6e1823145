"""Packet spraying: a flow split evenly over every equal-cost next hop at every node.

The flow's weight flows down the DAG of shortest paths in breadth-first order, each node
passing its weight on in equal shares to its candidate links, so one flow yields an entry
per (link, share) of the DAG.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.routing.candidates import candidates
from engine.routing.structures import Graph, Walk


@njit(cache=True, nogil=True)
def spray_dag(
    entry: int,
    target: int,
    key: int,
    graph: Graph,
    dist: np.ndarray,
    walk: Walk,
    tag: int,
    links_out: np.ndarray,
    weights_out: np.ndarray,
    write: bool,
) -> int:
    """Walk the equal-cost DAG from `entry`, splitting weight evenly; return entry count.

    `tag` (distinct per call) marks the nodes reached in `walk.stamp`, so the scratch needs no
    clearing between flows. With `write` the entries go to `links_out` and `weights_out`.
    """
    buf, order, weight, stamp = walk
    link_dst = graph.link_dst
    count = 0
    head = 0
    tail = 1
    order[0] = entry
    stamp[entry] = tag
    weight[entry] = 1.0
    while head < tail:
        node = order[head]
        head += 1
        if node == target:
            continue
        nc = candidates(node, target, key, graph, dist, buf)
        share = weight[node] / nc
        for c in range(nc):
            link = buf[c]
            w = link_dst[link]
            if write:
                links_out[count] = link
                weights_out[count] = share
            count += 1
            if stamp[w] != tag:
                stamp[w] = tag
                weight[w] = 0.0
                order[tail] = w
                tail += 1
            weight[w] += share
    return count
