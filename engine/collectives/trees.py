"""NCCL's double binary tree: who is whose parent, and the tree all-reduce's flows.

NCCL builds two binary trees over the servers, the second the mirror (or shift) of the first,
so that each server is an inner node of at most one and the inner nodes' load is split
(src/graph/trees.cc). Tree all-reduce and NVLS-tree both run them, one pair per rail.
"""

from __future__ import annotations

import numpy as np

from engine.collectives.stages import Pipeline, RankLayout, Stage, flows, refuse


def nccl_btree_parents(n: int) -> np.ndarray:
    """Parent of each of n positions in NCCL's binary tree (-1: the root, position 0).

    NCCL's tree alternates leaves and inner nodes: a position's parent clears its lowest
    set bit and sets the next one up (or only clears it when that falls outside), so odd
    positions are leaves and the root has a single child (src/graph/trees.cc).
    """
    parent = np.full(n, -1, dtype=np.int64)
    for r in range(1, n):
        bit = r & -r
        up = (r ^ bit) | (bit << 1)
        parent[r] = up if up < n else r ^ bit
    return parent


def nccl_dtree_parents(n: int) -> tuple[np.ndarray, np.ndarray]:
    """NCCL's double binary tree over n positions: the tree and its mirror (or shift).

    With an even count the second tree mirrors the first (position r takes the role of
    n - 1 - r), with an odd count it shifts it by one, so every position is an inner node of
    at most one of the two and the load of inner nodes is split between them.
    """
    a = nccl_btree_parents(n)
    r = np.arange(n)
    if n % 2 == 0:
        role = n - 1 - r
        b = np.where(a[role] >= 0, n - 1 - a[role], -1)
    else:
        role = (r - 1) % n
        b = np.where(a[role] >= 0, (a[role] + 1) % n, -1)
    return a, b


def tree_depth(parent: np.ndarray) -> int:
    """Edges from the deepest position to the root."""
    depth = 0
    for i in range(parent.shape[0]):
        d, j = 0, i
        while parent[j] >= 0:
            j, d = parent[j], d + 1
        depth = max(depth, d)
    return depth


def tree_schedule(op: str, lay: RankLayout) -> list[Stage]:
    """NCCL's tree all-reduce: a chain over NVLink in each server, double binary trees between."""
    if op != "all-reduce":
        raise refuse(op, "tree", "tree is an all-reduce algorithm")
    if lay.per_server == 0:
        raise refuse(op, "tree", "needs the same number of ranks on every server, in server order")
    g, n_nodes = lay.per_server, lay.n_servers
    channels = g if n_nodes > 1 else 1
    s, d, share, depth, pipeline = double_binary_trees(lay, channels, with_chains=g > 1)
    return [
        Stage(
            "double binary tree all-reduce",
            s,
            d,
            share,
            net_steps=2 * depth,
            nvlink_steps=2 * (g - 1),
            latency_class="tree",
            pipeline=pipeline,
        )
    ]


def double_binary_trees(
    lay: RankLayout, channels: int, with_chains: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, Pipeline]:
    """Flows of NCCL's double binary tree between servers, one pair of trees per channel.

    Channel c joins the servers' local rank c (its rail); with `with_chains` the other ranks
    of each server hang below it in a chain over NVLink. Every tree carries half of its
    channel's share, up (reduce) and down (broadcast) at once, as NCCL pipelines them.
    Returns sources, destinations, shares, the depth of the trees between servers and
    the pipeline (each tree of each channel its own, up phase 0, down phase 1).
    """
    n_nodes = lay.n_servers
    grid = lay.by_server()
    parent_a, parent_b = nccl_dtree_parents(n_nodes)
    src, dst, pipe, phase = [], [], [], []
    for c in range(channels):
        chain = np.roll(grid, -c, axis=1)  # head of every server: local rank c
        for t, parent in enumerate((parent_a, parent_b)):
            child = np.flatnonzero(parent >= 0)
            up_src, up_dst = chain[child, 0], chain[parent[child], 0]
            src += [up_src, up_dst]  # reduce up, then broadcast down (pipelined together)
            dst += [up_dst, up_src]
            phase += [np.zeros(child.size), np.ones(child.size)]
            if with_chains:
                lo, hi = chain[:, 1:].ravel(), chain[:, :-1].ravel()
                src += [lo, hi]
                dst += [hi, lo]
                phase += [np.zeros(lo.size), np.ones(lo.size)]
            pipe += [np.full(sum(a.size for a in src) - sum(a.size for a in pipe), 2 * c + t)]
    s, d, share = flows(src, dst, 0.5 / channels)
    pipeline = Pipeline(
        np.concatenate(pipe).astype(np.int64), np.concatenate(phase).astype(np.int8)
    )
    # NCCL's tuner counts floor(log2 N) network steps each way (its trees are that deep
    # for a power of two); the path latency rides on the same count.
    depth = int(np.floor(np.log2(n_nodes))) if n_nodes > 1 else 0
    return s, d, share, depth, pipeline
