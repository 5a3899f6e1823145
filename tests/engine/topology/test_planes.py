"""Multi-plane and dual-ToR fabrics: planes are what they say (one link of every NIC on each,
no switch shared), and the closed forms of their failures hold: with one plane's spines all
down a flow between two leaves keeps exactly half its rate; with one ToR down, its servers'
flows go on over the other ToR at half the rate."""

from __future__ import annotations

import numpy as np
import pytest

from engine.analysis import evaluate
from engine.collectives.stage_rates import route_rates
from engine.flows.traffic import permutation
from engine.model.errors import ScenarioError
from engine.model.scenario import SwitchFailure
from engine.model.validation import check_structure
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.topology.templates import generate

B300 = {"server": "hgx-b300", "switch": "sn5600"}


def _connection_rates(scenario, catalog):
    """Bytes/s of each connection of the scenario's permutation, and its source GPUs."""
    fabric = expand(scenario, catalog)
    src, dst = permutation(fabric, 0)
    cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
    src, dst = src[cross], dst[cross]
    routed = Router(fabric).route(src, dst, scenario.routing, connection_bytes=1e9)
    rates = route_rates(
        routed.flow_ptr, routed.entry_link, routed.entry_weight, fabric.link_capacity, routed.key
    )
    per_conn = np.bincount(routed.connection, weights=rates, minlength=routed.n_connections)
    return fabric, src, dst, per_conn


def test_each_plane_has_its_own_switches_and_one_link_of_every_nic(catalog):
    s = generate("multi-plane", gpus=512, planes=2, catalog=catalog, **B300)
    assert check_structure(s, catalog) == []
    names = {g.id: g.name for g in s.groups}
    assert names["p1-leaf"] == "Plane 1 leaves" and names["p2-spine"] == "Plane 2 spines"
    for p in (1, 2):
        up = next(b for b in s.bundles if b.id == f"servers-p{p}-leaf")
        assert up.pattern == "rail" and up.speed_gbps == 400.0  # 800G split in two
        spine_side = next(b for b in s.bundles if b.a == f"p{p}-leaf")
        assert spine_side.b == f"p{p}-spine"  # no bundle crosses planes
    fabric = expand(s, catalog)
    # every GPU: two 400G links, one per plane, 800G in all (its ConnectX-8's rate)
    eff = fabric.link_capacity[fabric.gpu_nvlink_up.shape[0] * 2]  # a cable's bytes/s
    assert np.allclose(fabric.gpu_line_rate, 2 * eff)
    xs = [g.position[0] for g in s.groups if g.id.startswith("p1-")]
    assert all(x < 0 for x in xs)  # plane 1 to the left of plane 2 on the canvas


def test_one_planes_spines_down_keep_half_the_bandwidth_between_leaves(catalog):
    s = generate("multi-plane", gpus=256, planes=2, catalog=catalog, **B300)
    s.routing.mode = "spray"
    healthy = evaluate(s, catalog, parts=("permutation",)).permutation
    assert healthy.throughput_fraction.min == pytest.approx(1.0)
    s.failures.switches = [SwitchFailure("p1-spine", i) for i in range(s.group("p1-spine").count)]
    failed = evaluate(s, catalog, parts=("permutation",)).permutation
    # between leaves only plane 2 is left: exactly half of each NIC's two links
    assert failed.cross_leaf_throughput_fraction.max == pytest.approx(0.5)
    assert failed.cross_leaf_throughput_fraction.min == pytest.approx(0.5)
    # within a leaf both planes still work; the aggregate follows: 1/2 (1 + same-leaf share)
    same_leaf = 1 - failed.cross_leaf_connections / failed.connections
    ratio = failed.aggregate_throughput_Bps / healthy.aggregate_throughput_Bps
    assert ratio == pytest.approx(0.5 * (1 + same_leaf))
    assert 0.5 < ratio < 0.6


def test_a_failed_tor_leaves_its_servers_half_the_rate_on_the_other(catalog):
    s = generate("dual-tor", gpus=256, catalog=catalog, **B300)
    s.routing.mode = "spray"
    names = {g.id: g.name for g in s.groups}
    assert names["p1-leaf"] == "ToR A (plane 1)" and names["p2-leaf"] == "ToR B (plane 2)"
    fabric, src, _, healthy = _connection_rates(s, catalog)
    full = fabric.gpu_line_rate[0]
    assert np.allclose(healthy, full)
    s.failures.switches = [SwitchFailure("p1-leaf", 0)]
    fabric, src, dst, rates = _connection_rates(s, catalog)
    # the servers of ToR A 0 (a ToR holds 64 / 8 = 8 servers) lost one of two links
    behind = fabric.gpu_server[src] < 8
    assert behind.any() and (~behind).any()
    assert np.allclose(fabric.gpu_line_rate[: 8 * 8], full / 2)
    assert np.allclose(rates[behind], full / 2)  # failover: on ToR B, at half rate
    into = fabric.gpu_server[dst] < 8
    assert np.allclose(rates[~behind & ~into], full)  # the rest as before


def test_a_nic_that_cannot_split_is_refused_by_name(catalog):
    with pytest.raises(ScenarioError, match="connectx-7 makes 1 link"):
        generate("multi-plane", gpus=512, server="dgx-h100", switch="qm9700", catalog=catalog)
    with pytest.raises(ScenarioError, match="at least 2"):
        generate("multi-plane", gpus=512, planes=1, catalog=catalog, **B300)
    with pytest.raises(ScenarioError, match="makes 2 link"):
        generate("multi-plane", gpus=512, planes=4, catalog=catalog, **B300)


def test_a_split_port_takes_no_more_than_its_rate(catalog):
    s = generate("dual-tor", gpus=256, catalog=catalog, **B300)
    for b in s.bundles:
        if b.a == "servers":
            b.speed_gbps = 800.0  # two 800G links from one 800G port
    s.groups[1].model = "sn5600"
    with pytest.raises(ScenarioError, match="each split into at most 2 links"):
        expand(s, catalog)
