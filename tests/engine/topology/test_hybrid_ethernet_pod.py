"""The hybrid template with an Ethernet pod: an InfiniBand pod and a RoCE pod joined through
the InfiniBand pod's gateways and the Ethernet core.

Closed forms: the RoCE pod's spines reach the core directly, so a flow between the pods
crosses one gateway (the InfiniBand pod's) and its latency once; what crosses is bounded by
that pod's gateways' Ethernet ports x their forwarding rate x RoCE's header efficiency, each
way; traffic inside the RoCE pod never touches a gateway.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.model.errors import ScenarioError
from engine.model.scenario import RoutingPolicy
from engine.model.technology_checks import bundle_layers, group_layers
from engine.model.validation import check_structure
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.topology.templates import generate
from tests.engine.topology.test_hybrid import (
    GATEWAY,
    _cross_pairs,
    _gateway_links,
    _path_latency,
    _pod_gpus,
    cross_pod_rates,
    pod1_gateways_Bps,
)


@pytest.fixture
def mixed(catalog):
    """An InfiniBand pod (QM9700, two gateways) and a RoCE pod (SN5600) of 16 DGX H100."""
    return generate(
        "hybrid", gpus=256, server="dgx-h100", switch="qm9700", ethernet_pod="sn5600",
        catalog=catalog,
    )  # fmt: skip


def test_one_pod_is_infiniband_and_the_other_roce(mixed, catalog):
    assert check_structure(mixed, catalog) == []
    layers = group_layers(mixed, catalog)
    assert layers["p1-leaf"] == layers["p1-servers"] == "infiniband"
    assert layers["p2-leaf"] == layers["p2-servers"] == layers["p2-spine"] == "ethernet"
    ids = {g.id for g in mixed.groups}
    assert "p1-gw" in ids and "p2-gw" not in ids
    by_bundle = dict(zip([b.id for b in mixed.bundles], bundle_layers(mixed, catalog), strict=True))
    assert by_bundle["p2-spine-core"] == "ethernet" and by_bundle["p1-spine-gw"] == "infiniband"


def test_cross_pod_throughput_is_the_infiniband_pods_gateways(mixed, catalog):
    rates = cross_pod_rates(mixed, catalog)
    assert rates.sum() == pytest.approx(2 * pod1_gateways_Bps(mixed, catalog), rel=1e-9)


def test_a_cross_pod_path_pays_one_gateway(mixed, catalog):
    slow = dataclasses.replace(mixed, groups=[dataclasses.replace(g) for g in mixed.groups])
    for g in slow.groups:
        if g.model == GATEWAY:
            g.overrides = {"latency_ns": 7000.0}
    base, later = expand(mixed, catalog), expand(slow, catalog)
    src, dst = _cross_pairs(base)
    own = float(catalog.get(GATEWAY, "switch").value("latency_ns"))
    extra = _path_latency(later, src, dst) - _path_latency(base, src, dst)
    assert np.allclose(extra, (7000.0 - own) * 1e-9)


@pytest.mark.parametrize("mode", ["ecmp", "adaptive", "spray"])
def test_traffic_inside_the_roce_pod_never_touches_a_gateway(mixed, catalog, mode):
    fabric = expand(mixed, catalog)
    pod = _pod_gpus(fabric, 2)
    dst = (pod - pod[0] + 8) % pod.shape[0] + pod[0]  # the same rail, the next server
    routed = Router(fabric).route(pod, dst, RoutingPolicy(mode=mode), connection_bytes=1e9)
    assert routed.unreachable.size == 0
    assert not np.isin(routed.entry_link, _gateway_links(fabric)).any()


def test_an_ethernet_pod_needs_an_ethernet_switch(catalog):
    with pytest.raises(ScenarioError, match="Ethernet switch"):
        generate("hybrid", gpus=256, ethernet_pod="qm9700", catalog=catalog)
