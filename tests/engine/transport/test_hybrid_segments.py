"""The transport on a hybrid fabric: each segment keeps its technology's mechanisms.

On the InfiniBand pods' links the far end pushes back with credits and the egress queues
mark FECN (when IB CC runs); on the Ethernet core's links the far end pauses with PFC and
the egress queues mark ECN. A fabric of one technology keeps one mechanism everywhere.
"""

from __future__ import annotations

import numpy as np

from engine.flows.traffic import permutation
from engine.model.scenario import RoutingPolicy
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.topology.templates import generate
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.structures import CONTROL_CREDIT, CONTROL_NONE, CONTROL_PFC
from engine.transport.tables import build_tables, derive_links


def _network(scenario, catalog):
    fabric = expand(scenario, catalog)
    half = fabric.n_gpus // 2
    src = np.arange(fabric.n_gpus)
    dst = (src + half) % fabric.n_gpus  # every GPU to its twin in the other pod
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="ecmp"), connection_bytes=1e6)
    return scenario_network(fabric, routed, catalog)


def test_each_segment_has_its_own_flow_control_and_marking(catalog):
    s = generate("hybrid", gpus=256, server="dgx-h100", switch="qm9700", catalog=catalog)
    s.transport.ib_cc = True
    network = _network(s, catalog)
    links = network.links
    assert links.ethernet is not None and links.ethernet.any() and (~links.ethernet).any()
    config = scenario_transport_config(s, catalog)
    derived = derive_links(network, config)
    into = links.into_switch
    assert np.all(derived.control[into & links.ethernet] == CONTROL_PFC)
    assert np.all(derived.control[into & ~links.ethernet] == CONTROL_CREDIT)
    assert np.all(derived.control[~into] == CONTROL_NONE)
    # ECN only where an Ethernet switch's egress queue is (the core's, toward the gateways)
    marks = links.ecn_kmax_bytes > 0
    assert marks.any() and not (marks & ~links.ethernet).any()
    tables, _ = build_tables(network, config)
    fecn = np.isfinite(tables.links.fecn_threshold)
    assert fecn.any() and not (fecn & links.ethernet).any()


def test_a_fabric_of_one_technology_keeps_one_mechanism(catalog):
    s = generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700", catalog=catalog)
    fabric = expand(s, catalog)
    assert fabric.bundle_ethernet is None
    src, dst = permutation(fabric, 0)
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="ecmp"), connection_bytes=1e6)
    network = scenario_network(fabric, routed, catalog)
    assert network.links.ethernet is None
    derived = derive_links(network, scenario_transport_config(s, catalog))
    assert set(np.unique(derived.control[network.links.into_switch]).tolist()) == {CONTROL_CREDIT}
