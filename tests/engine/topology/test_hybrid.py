"""Hybrid fabrics: InfiniBand pods joined by an Ethernet core through gateways.

Closed forms: traffic inside a pod never touches a gateway; what crosses between the pods is
bounded by the gateways' ports (their count x the forwarding rate per port, after the
Ethernet segment's headers); a gateway's own latency appears once per gateway crossed in a
path's latency. Validation: InfiniBand and Ethernet meet only at a gateway.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.analysis import collective_run
from engine.collectives.stage_rates import route_rates
from engine.model.errors import ScenarioError
from engine.model.scenario import DeviceGroup, LinkBundle, RoutingPolicy
from engine.model.technology_checks import bundle_layers, group_layers
from engine.model.validation import check_structure
from engine.routing.router import Router
from engine.topology.expand import expand, header_efficiency
from engine.topology.templates import generate

GATEWAY = "skyway-ga100"


@pytest.fixture
def hybrid(catalog):
    """Two pods of 16 DGX H100 (QM9700) joined by two SN5600 through two gateways a pod."""
    return generate("hybrid", gpus=256, server="dgx-h100", switch="qm9700", catalog=catalog)


def _pod_gpus(fabric, pod: int) -> np.ndarray:
    groups = [g.id for g in fabric.scenario.groups]
    gi = groups.index(f"p{pod}-servers")
    return np.flatnonzero(fabric.node_group[: fabric.n_gpus] == gi)


def _gateway_links(fabric) -> np.ndarray:
    bundles = [i for i, b in enumerate(fabric.scenario.bundles) if "-gw" in b.id]
    return np.flatnonzero(np.isin(fabric.link_bundle, bundles))


def _cross_pairs(fabric):
    """Every GPU of pod 1 to the same-rail GPU of a server of pod 2, and back."""
    a, b = _pod_gpus(fabric, 1), _pod_gpus(fabric, 2)
    return np.concatenate([a, b]), np.concatenate([b, a])


def test_the_template_is_hybrid_and_valid(hybrid, catalog):
    assert check_structure(hybrid, catalog) == []
    layers = group_layers(hybrid, catalog)
    assert layers["p1-leaf"] == layers["p1-servers"] == "infiniband"
    assert layers["eth-core"] == "ethernet" and layers["p2-gw"] == "gateway"
    by_bundle = dict(
        zip([b.id for b in hybrid.bundles], bundle_layers(hybrid, catalog), strict=True)
    )
    assert by_bundle["p1-spine-gw"] == "infiniband" and by_bundle["p1-gw-core"] == "ethernet"


@pytest.mark.parametrize("mode", ["ecmp", "adaptive", "spray"])
def test_traffic_inside_a_pod_never_touches_a_gateway(hybrid, catalog, mode):
    fabric = expand(hybrid, catalog)
    pod = _pod_gpus(fabric, 1)
    per = 8
    src = pod
    dst = (pod + per) % pod.shape[0] + pod[0]  # the same rail, the next server, same pod
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode=mode), connection_bytes=1e9)
    assert routed.unreachable.size == 0
    assert not np.isin(routed.entry_link, _gateway_links(fabric)).any()


def cross_pod_rates(scenario, catalog) -> np.ndarray:
    """Max-min rates of every GPU of pod 1 sending to its peer in pod 2 and back, sprayed."""
    fabric = expand(scenario, catalog)
    src, dst = _cross_pairs(fabric)
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="spray"), connection_bytes=1e9)
    return route_rates(
        routed.flow_ptr, routed.entry_link, routed.entry_weight, fabric.link_capacity, routed.key
    )


def pod1_gateways_Bps(scenario, catalog) -> float:  # noqa: N802 (Bps: bytes per second)
    """What pod 1's gateways forward: their Ethernet ports at the gateway's rate, less
    RoCE headers."""
    roce = catalog.technology("roce")
    eff = header_efficiency(
        float(roce.value("header_bytes_per_packet")), float(roce.value("mtu_bytes"))
    )
    device = catalog.get(GATEWAY, "switch")
    ports = scenario.group("p1-gw").count * int(device.value("ethernet_ports"))
    return ports * float(device.value("forwarding_gbps_per_port")) * 1e9 / 8 * eff


def test_cross_pod_throughput_is_the_gateways_ports(hybrid, catalog):
    # each pod's gateways: 2 x 8 Ethernet ports forwarding 100 Gb/s each, RoCE headers;
    # both directions cross the cut at once, each bounded by the gateways' ports
    rates = cross_pod_rates(hybrid, catalog)
    assert rates.sum() == pytest.approx(2 * pod1_gateways_Bps(hybrid, catalog), rel=1e-9)


def test_cross_pod_all_reduce_is_bounded_by_the_gateways(hybrid, catalog):
    hybrid.transport.model = "ideal"
    size = float(2**30)
    sizes = np.array([size])
    device = catalog.get(GATEWAY, "switch")
    ports = hybrid.group("p1-gw").count * int(device.value("ethernet_ports"))
    cut_Bps = ports * float(device.value("forwarding_gbps_per_port")) * 1e9 / 8
    # the reduced vector depends on both pods: at least S bytes cross the cut each way
    base = collective_run(hybrid, catalog, sizes, op="all-reduce", algorithm="ring").rows[0]
    assert base.time_s >= size / cut_Bps
    # twice the gateways' forwarding rate: the cross-pod bound halves and the time follows
    faster = dataclasses.replace(hybrid, groups=[dataclasses.replace(g) for g in hybrid.groups])
    for g in faster.groups:
        if g.model == GATEWAY:
            g.overrides = {"forwarding_gbps_per_port": 200.0}
    fast = collective_run(faster, catalog, sizes, op="all-reduce", algorithm="ring").rows[0]
    assert fast.time_s >= size / (2 * cut_Bps)
    assert fast.time_s < 0.6 * base.time_s


def _path_latency(fabric, src, dst) -> np.ndarray:
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="ecmp"), connection_bytes=1e9)
    owner = np.repeat(np.arange(routed.n_flows), np.diff(routed.flow_ptr))
    return np.bincount(owner, weights=fabric.link_latency[routed.entry_link])


def test_a_gateways_latency_is_in_every_cross_pod_path(hybrid, catalog):
    slow = dataclasses.replace(hybrid, groups=[dataclasses.replace(g) for g in hybrid.groups])
    for g in slow.groups:
        if g.model == GATEWAY:
            g.overrides = {"latency_ns": 7000.0}
    base, later = expand(hybrid, catalog), expand(slow, catalog)
    src, dst = _cross_pairs(base)
    own = float(catalog.get(GATEWAY, "switch").value("latency_ns"))
    # two gateways on the way: 2 x (7,000 ns - the catalog's) more, exactly
    extra = _path_latency(later, src, dst) - _path_latency(base, src, dst)
    assert np.allclose(extra, 2 * (7000.0 - own) * 1e-9)
    pod = _pod_gpus(base, 1)
    inside = _path_latency(later, pod, np.roll(pod, 8)) - _path_latency(base, pod, np.roll(pod, 8))
    assert np.allclose(inside, 0.0)


def test_the_fabric_wide_switch_latency_leaves_the_gateway_its_own(hybrid, catalog):
    hybrid.fabric.switch_latency_ns = 100.0
    fabric = expand(hybrid, catalog)
    into_gw = np.flatnonzero(
        np.isin(
            fabric.link_dst,
            fabric.group_first_node[[g.id for g in hybrid.groups].index("p1-gw")] + np.arange(2),
        )
    )
    own = float(catalog.get(GATEWAY, "switch").value("latency_ns")) * 1e-9
    assert np.all(fabric.link_latency[into_gw] > own)


def test_gateway_cables_carry_its_forwarding_rate_and_their_segments_headers(hybrid, catalog):
    fabric = expand(hybrid, catalog)
    ib, roce = catalog.technology("infiniband"), catalog.technology("roce")
    for bundle, tech, gbps in (
        ("p1-leaf-spine", ib, 400.0),
        ("p1-spine-gw", ib, 100.0),
        ("p1-gw-core", roce, 100.0),
    ):
        eff = header_efficiency(
            float(tech.value("header_bytes_per_packet")), float(tech.value("mtu_bytes"))
        )
        bi = [b.id for b in hybrid.bundles].index(bundle)
        caps = fabric.link_capacity[fabric.link_bundle == bi]
        assert np.allclose(caps, gbps * 1e9 / 8 * eff), bundle


def test_a_direct_infiniband_to_ethernet_bundle_is_refused_by_name(hybrid, catalog):
    hybrid.bundles.append(
        LinkBundle("p1-spine-core", "p1-spine", "eth-core", "full", speed_gbps=200.0)
    )
    problems = check_structure(hybrid, catalog)
    assert [p.where for p in problems] == ["bundles[p1-spine-core]"]
    assert "meet only at a gateway" in problems[0].message


def test_two_gateways_joined_directly_are_refused(hybrid, catalog):
    hybrid.bundles.append(LinkBundle("gw-gw", "p1-gw", "p2-gw", "one-to-one", speed_gbps=200.0))
    problems = check_structure(hybrid, catalog)
    assert [p.where for p in problems] == ["bundles[gw-gw]"]


def test_without_a_gateway_a_mixed_fabric_names_the_gateway_as_the_way(catalog):
    s = generate("leaf-spine", gpus=64, server="dgx-h100", switch="qm9700", catalog=catalog)
    s.groups.append(DeviceGroup("core", "switch", "sn5600", 1, "core"))
    problems = check_structure(s, catalog)
    assert [p.where for p in problems] == ["groups[core]"]
    assert "gateway" in problems[0].message


def test_a_gateway_side_with_too_many_cables_is_refused(hybrid, catalog):
    spine_gw = hybrid.bundle("p1-spine-gw")
    spine_gw.links_per_pair *= 2  # 16 InfiniBand cables on a gateway with 8 such ports
    with pytest.raises(ScenarioError) as err:
        expand(hybrid, catalog)
    assert any(
        p.where == "groups[p1-gw]" and "InfiniBand ports" in p.message for p in err.value.problems
    )


def test_the_template_refuses_pods_too_big_for_a_leaf(catalog):
    with pytest.raises(ScenarioError, match="down ports"):
        generate("hybrid", gpus=1024, server="dgx-h100", switch="qm9700", catalog=catalog)
    with pytest.raises(ScenarioError, match="at least 2"):
        generate("hybrid", gpus=256, server="dgx-h100", switch="qm9700", pods=1, catalog=catalog)
