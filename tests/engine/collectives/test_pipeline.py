"""Which flows of a ring or a tree pass on which flows' data (the transport's pacing)."""

from __future__ import annotations

import numpy as np

from engine.collectives.pipeline import _through, forwarding_edges
from engine.collectives.schedules import build_schedule
from engine.collectives.stages import layout
from engine.collectives.trees import nccl_dtree_parents


def _pairs(stage) -> set[tuple[tuple[int, int], tuple[int, int]]]:
    i, j = forwarding_edges(stage)
    s, d = stage.src, stage.dst
    return {((int(s[a]), int(d[a])), (int(s[b]), int(d[b]))) for a, b in zip(i, j, strict=True)}


def test_a_ring_passes_each_hop_on_to_the_next():
    # Four single-GPU servers: one channel, the ring 0 -> 1 -> 2 -> 3 -> 0.
    lay = layout(np.arange(4), np.arange(4))
    (stage,) = build_schedule("all-reduce", "ring", lay)
    hops = [(r, (r + 1) % 4) for r in range(4)]
    assert _pairs(stage) == {(hops[r], hops[(r + 1) % 4]) for r in range(4)}


def test_a_tree_passes_up_to_the_root_then_down_to_the_leaves():
    # Six single-GPU servers: one channel, NCCL's two binary trees.
    n = 6
    lay = layout(np.arange(n), np.arange(n))
    (stage,) = build_schedule("all-reduce", "tree", lay)
    expected = set()
    for parent in nccl_dtree_parents(n):
        root = int(np.flatnonzero(parent < 0)[0])
        for child in np.flatnonzero(parent >= 0).tolist():
            p = int(parent[child])
            up, down = (child, p), (p, child)
            grand = int(parent[p])
            if grand >= 0:
                expected.add((up, (p, grand)))  # reduced data goes on up
                expected.add(((grand, p), down))  # broadcast comes down
            else:
                assert p == root  # the root turns every reduction into the broadcast
                for other in np.flatnonzero(parent == root).tolist():
                    expected.add((up, (root, other)))
    assert _pairs(stage) == expected


def test_flows_off_the_network_are_looked_through():
    # 0 -> 1 -> 2 -> 3 -> 0, where 1 and 2 stay inside a server (NVLink): 0 passes on to 3.
    i = np.array([0, 1, 2, 3])
    j = np.array([1, 2, 3, 0])
    on_network = np.array([True, False, False, True])
    a, b = _through(i, j, on_network)
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [(0, 3), (3, 0)]
