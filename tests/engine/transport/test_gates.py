"""Pipeline gates: a class that passes on another's data keeps its pace, a buffer apart."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.catalog.devices import default_catalog
from engine.transport.defaults import transport_config
from engine.transport.gates import gates_from_edges
from engine.transport.network import TransportNetwork, group_into_classes, make_links
from engine.transport.params import EcnParams, Mechanisms
from engine.transport.simulate import simulate

NIC = 50e9  # bytes/s
SIZE = 8e6  # bytes per flow
SLACK = 2e6  # bytes a flow may lead its neighbour


def _nic_links(into_switch: list[bool], buffer_bytes: float):
    """Links of NIC rate, each into a switch or out of one, buffers of `buffer_bytes`,
    no ECN."""
    n = len(into_switch)
    return make_links(
        capacity_Bps=[NIC] * n,
        propagation_s=[50e-9] * n,
        latency_s=[350e-9] * n,
        speed_gbps=[NIC * 8 / 1e9] * n,
        into_switch=into_switch,
        from_switch=[not x for x in into_switch],
        buffer_bytes=[buffer_bytes] * n,
        egress_buffer_bytes=[buffer_bytes] * n,
        ecn=[EcnParams(1e15, 2e15, 0.0)] * n,
    )


def _relay(gated: bool) -> TransportNetwork:
    """A: x -> y (links 0, 1); B: y -> z (links 2, 3) passes A's data on; C: w -> z
    (links 4, 3) shares B's last link, so B runs at half the line rate."""
    links = _nic_links([True, False, True, False, True], 10e6)
    ptr = np.array([0, 2, 4, 6], dtype=np.int64)
    flat = np.array([0, 1, 2, 3, 4, 3], dtype=np.int64)
    classes, of_flow = group_into_classes(ptr, flat, np.full(3, SIZE))
    gates = gates_from_edges(3, np.array([0]), np.array([1]), np.full(3, SLACK)) if gated else None
    return TransportNetwork(links, classes, of_flow, gates=gates)


@pytest.mark.parametrize("lossless", ["credit", "pfc"])
def test_a_sender_leads_the_flow_that_passes_its_data_on_by_at_most_its_slack(lossless):
    base = transport_config(default_catalog(), "infiniband", "qm9700")
    config = replace(base, mechanisms=Mechanisms(lossless, False, False))
    free = simulate(_relay(False), config)
    paced = simulate(_relay(True), config)
    # Alone on its path A ends at SIZE / NIC; B and C share a link and end at 2 SIZE / NIC.
    np.testing.assert_allclose(
        free.finish_s, [SIZE / NIC, 2 * SIZE / NIC, 2 * SIZE / NIC], rtol=0.02
    )
    # Paced, A may not send more than SLACK beyond what B has delivered: it is done when B
    # has delivered SIZE - SLACK, at half the line rate; B and C are as before.
    expected = [2 * (SIZE - SLACK) / NIC, 2 * SIZE / NIC, 2 * SIZE / NIC]
    np.testing.assert_allclose(paced.finish_s, expected, rtol=0.02)


def test_a_gate_that_names_a_missing_class_is_refused():
    net = _relay(False)
    bad = gates_from_edges(4, np.array([0]), np.array([3]), np.full(4, SLACK))
    with pytest.raises(ValueError, match="sized for 4 classes"):
        replace(net, gates=bad)


def test_a_run_with_rates_at_rest_and_a_queue_still_filling_stops_after_as_long_again():
    # Two senders at line rate into one receiver link, behind a far-end buffer so large
    # that credits never hold them back: each delivers half the link while the queue at
    # the receiver's port fills at the line rate for as long as they send.
    links = _nic_links([True, True, False], 1e12)
    ptr = np.array([0, 2, 4], dtype=np.int64)
    classes, of_flow = group_into_classes(ptr, np.array([0, 2, 1, 2]), np.full(2, 1e9))
    net = TransportNetwork(links, classes, of_flow)
    base = transport_config(default_catalog(), "infiniband", "qm9700")
    config = replace(base, mechanisms=Mechanisms("credit", False, False))
    result = simulate(net, config, until_settled=True)
    assert not result.queues_at_rest
    start, end = result.settled_window_s
    assert end >= 2 * start
    np.testing.assert_allclose(result.mean_rate_Bps(start, end), NIC / 2, rtol=0.01)
    assert result.end_s < 1e9 / NIC  # long before the senders are done
