"""A NIC serves its flows (queue pairs) in turn: a class of k flows gets k shares of it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.catalog.devices import default_catalog
from engine.transport.defaults import transport_config
from engine.transport.network import TransportNetwork, group_into_classes, make_links
from engine.transport.params import EcnParams, Mechanisms
from engine.transport.simulate import simulate

NIC = 50e9  # bytes/s
SIZE = 4e6  # bytes per flow


def _one_nic_two_receivers() -> TransportNetwork:
    """One NIC (link 0) to a switch; two flows to receiver A (link 1), one to B (link 2)."""
    capacity = [NIC, NIC, NIC]
    links = make_links(
        capacity_Bps=capacity,
        propagation_s=[50e-9] * 3,
        latency_s=[350e-9] * 3,
        speed_gbps=[c * 8 / 1e9 for c in capacity],
        into_switch=[True, False, False],
        from_switch=[False, True, True],
        buffer_bytes=[10e6] * 3,
        egress_buffer_bytes=[10e6] * 3,
        ecn=[EcnParams(1e9, 2e9, 0.0)] * 3,
    )
    ptr = np.array([0, 2, 4, 6], dtype=np.int64)
    flat = np.array([0, 1, 0, 1, 0, 2], dtype=np.int64)
    classes, of_flow = group_into_classes(ptr, flat, np.full(3, SIZE), np.zeros(3), np.zeros(3))
    assert classes.n_classes == 2  # the two flows to A share their path: one class of two
    return TransportNetwork(links, classes, of_flow)


@pytest.mark.parametrize("lossless", ["credit", "pfc"])
def test_every_flow_gets_a_third_of_the_nic_and_all_end_together(lossless):
    base = transport_config(default_catalog(), "infiniband", "qm9700")
    config = replace(base, mechanisms=Mechanisms(lossless, False, False))
    result = simulate(_one_nic_two_receivers(), config)
    # Three flows of SIZE share the NIC: each at NIC / 3, all done at 3 SIZE / NIC (per
    # class, the class of two would end at 4 SIZE / NIC and the single flow at 2 SIZE / NIC).
    np.testing.assert_allclose(result.finish_s, 3 * SIZE / NIC, rtol=0.02)
