"""The adaptive path search against its plain-Python twin, path by path.

The kernel skips a subtree it has already found barren under the same best path and the
same prefix (busiest utilization, links at it); the twin searches without that memo. Both
must pick the same path for every flow, including when loads tie exactly, differ within the
comparison tolerance, or only slightly beyond it.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.routing.adaptive import adaptive_path, search_scratch
from engine.routing.candidates import max_hops
from engine.routing.reference import ReferenceRouter, flow_hash_reference
from engine.routing.router import Router
from engine.topology import generators as gen
from engine.topology.expand import expand


@pytest.fixture(scope="module")
def fat_tree_fabric(catalog):
    """A 3-tier fat-tree: many equal-cost paths between pods, so subtrees are met again."""
    return expand(
        gen.fat_tree(2048, "dgx-h100", "qm9700", oversubscription=2.0, catalog=catalog), catalog
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_memoized_search_picks_the_reference_path(fat_tree_fabric, seed):
    fabric = fat_tree_fabric
    rng = np.random.default_rng(seed)
    router = Router(fabric)
    graph, capacity = router._t.graph, fabric.link_capacity
    ref = ReferenceRouter(fabric)
    net = np.flatnonzero(fabric.network_link_mask())
    nbytes = 1e6
    load = np.zeros(fabric.n_links)
    # Whole flows on most links (exact ties), some a hair apart (within and beyond the
    # 1e-12 tolerance of the comparisons), a few links idle.
    load[net] = rng.integers(0, 3, net.size) * nbytes
    jitter = rng.choice([1.0, 1 + 3e-13, 1 - 3e-13, 1 + 5e-12], net.size, p=[0.7, 0.1, 0.1, 0.1])
    load[net] *= jitter
    ref_load = {int(e): float(load[e]) for e in net if load[e] != 0.0}
    src = rng.choice(fabric.n_gpus, 40, replace=False)
    dst = (src + fabric.n_gpus // 2 + rng.integers(0, 64, src.size)) % fabric.n_gpus
    keys = router._t.attach_key[dst]
    rows, dist = router._distance_rows(keys)
    search = search_scratch(max_hops(dist), graph.max_degree, graph.out_ptr.shape[0] - 1)
    path = np.empty(max_hops(dist), dtype=np.int64)
    for f in range(src.size):
        s, d = int(src[f]), int(dst[f])
        h = flow_hash_reference(s, d, 0, seed)
        n = adaptive_path(
            s, d, rows[f], graph, dist, search, load, capacity, nbytes, np.uint64(h), path
        )
        assert path[:n].tolist() == ref.adaptive_search(s, d, h, ref_load, nbytes)
    assert search.memo_version.any()  # the memo was used
