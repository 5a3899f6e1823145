"""The endpoint kernel against its numpy reference, on fabrics with and without NIC gaps."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.scenario import SwitchFailure
from engine.routing.endpoints import endpoints, endpoints_reference
from engine.routing.router import Router
from engine.topology import generators as gen
from engine.topology.expand import expand


def tables(fabric):
    t = Router(fabric)._t
    f = fabric
    return f.gpu_server, f.gpu_local, f.server_first_gpu, t.has_net, t.net_label


@pytest.mark.parametrize("failed_leaves", [0, 2])
@pytest.mark.parametrize("pxn", [False, True])
def test_kernel_matches_reference(catalog, failed_leaves, pxn):
    scenario = gen.rail_optimized(256, "dgx-h100", "qm9700", catalog=catalog)
    leaf = next(g for g in scenario.groups if g.tier == "leaf")
    scenario.failures.switches = [SwitchFailure(leaf.id, i) for i in range(failed_leaves)]
    fabric = expand(scenario, catalog)
    rng = np.random.default_rng(7)
    src = rng.integers(0, fabric.n_gpus, 5000)
    dst = rng.integers(0, fabric.n_gpus, 5000)
    got = endpoints(src, dst, pxn, *tables(fabric))
    want = endpoints_reference(src, dst, pxn, *tables(fabric))
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    if failed_leaves:
        cut_off = ~tables(fabric)[3]  # GPUs without a NIC of their own
        assert cut_off.any()
        moved = cut_off[src] & (got[0] >= 0)
        assert moved.any() and np.all(got[0][moved] != src[moved])  # entered via a neighbour
