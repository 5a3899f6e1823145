"""Routing: ECMP, adaptive and spraying against the reference and against known behaviour."""

from __future__ import annotations

import numpy as np
import pytest

from engine.analysis.evaluation import permutation_test
from engine.flows.solver import max_min_rates
from engine.flows.traffic import permutation
from engine.model.scenario import RoutingPolicy, SwitchFailure
from engine.routing import adaptive, kernels, route_cache
from engine.routing import router as routing
from engine.routing.reference import ReferenceRouter, flow_hash_reference
from engine.routing.router import Router
from engine.topology import generators as gen
from engine.topology.expand import NVLINK_BUNDLE, expand


@pytest.fixture(scope="module")
def tor_fabric(catalog):
    """512 GPUs on a non-blocking 2-tier leaf-spine, servers attached per ToR (4 per leaf)."""
    return expand(gen.leaf_spine(512, "dgx-h100", "qm9700", catalog=catalog), catalog)


def network_entries(routed, f, fabric):
    sl = slice(routed.flow_ptr[f], routed.flow_ptr[f + 1])
    links, weights = routed.entry_link[sl], routed.entry_weight[sl]
    keep = fabric.link_bundle[links] != NVLINK_BUNDLE
    return links[keep], weights[keep]


@pytest.mark.parametrize("mode", ["ecmp", "adaptive", "spray"])
def test_kernel_paths_match_the_reference_router(tor_fabric, mode, monkeypatch):
    monkeypatch.setattr(routing, "ADAPTIVE_PASSES", 0)  # check the greedy placement flow by flow
    src, dst = permutation(tor_fabric, seed=3)
    src, dst = src[:80], dst[:80]
    policy = RoutingPolicy(mode=mode, seed=11)
    routed = Router(tor_fabric).route(src, dst, policy)
    ref = ReferenceRouter(tor_fabric, policy.hash_scope)
    load: dict[int, float] = {}
    for f in range(routed.n_flows):
        links, weights = network_entries(routed, f, tor_fabric)
        s, d = int(routed.src_gpu[f]), int(routed.dst_gpu[f])
        h = flow_hash_reference(s, d, 0, policy.seed)
        if mode == "ecmp":
            assert list(links) == ref.ecmp(s, d, h)
        elif mode == "adaptive":
            allowed = ref.adaptive_optimal(s, d, load, 1.0)
            assert list(links) in allowed
            for e in links:
                load[int(e)] = load.get(int(e), 0.0) + 1.0
        else:
            expected = ref.spray(s, d)
            got = dict(zip(links.tolist(), weights.tolist(), strict=True))
            assert got.keys() == expected.keys()
            np.testing.assert_allclose(
                [got[k] for k in expected], list(expected.values()), rtol=1e-12
            )


def test_kernels_compile_one_signature_for_every_policy(tor_fabric):
    # The kernels take their arrays as named tuples built by the Router; every policy and
    # both passes must hit the same compiled (and cached) signature.
    src, dst = permutation(tor_fabric, seed=6)
    for mode in ("ecmp", "adaptive", "spray"):
        for scope in RoutingPolicy.HASH_SCOPES:
            Router(tor_fabric).route(src, dst, RoutingPolicy(mode=mode, hash_scope=scope), 1e6)
    assert len(kernels.route_flows.signatures) == 1
    assert len(adaptive.refine_adaptive.signatures) == 1


def test_adaptive_refinement_improves_balance(tor_fabric, monkeypatch):
    src, dst = permutation(tor_fabric, seed=4)
    means = []
    for passes in (0, 2):
        monkeypatch.setattr(routing, "ADAPTIVE_PASSES", passes)
        route_cache.clear()  # the cached route of the first pass count would come back
        routed = Router(tor_fabric).route(src, dst, RoutingPolicy(mode="adaptive"))
        rates = max_min_rates(
            routed.flow_ptr, routed.entry_link, routed.entry_weight, tor_fabric.link_capacity
        )
        means.append(
            (np.bincount(routed.connection, weights=rates) / tor_fabric.gpu_line_rate[src]).mean()
        )
    assert means[1] > means[0]


def test_single_paths_are_connected_shortest_and_end_at_the_destination(tor_fabric):
    src, dst = permutation(tor_fabric, seed=5)
    routed = Router(tor_fabric).route(src, dst, RoutingPolicy(mode="ecmp"))
    f = tor_fabric
    for i in range(routed.n_flows):
        links = routed.entry_link[routed.flow_ptr[i] : routed.flow_ptr[i + 1]]
        assert f.link_src[links[0]] == routed.src_gpu[i]
        assert f.link_dst[links[-1]] == routed.dst_gpu[i]
        np.testing.assert_array_equal(f.link_dst[links[:-1]], f.link_src[links[1:]])
        same_leaf = f.link_dst[links[0]] == f.link_src[links[-1]]
        assert len(links) == (2 if same_leaf else 4)


def test_ecmp_is_deterministic_for_a_seed_and_changes_with_it(tor_fabric):
    src, dst = permutation(tor_fabric, seed=1)
    router = Router(tor_fabric)
    a = router.route(src, dst, RoutingPolicy(mode="ecmp", seed=7))
    b = Router(tor_fabric).route(src, dst, RoutingPolicy(mode="ecmp", seed=7))
    c = router.route(src, dst, RoutingPolicy(mode="ecmp", seed=8))
    np.testing.assert_array_equal(a.entry_link, b.entry_link)
    assert not np.array_equal(a.entry_link, c.entry_link)


def test_spray_weights_sum_to_one_per_hop(tor_fabric):
    src, dst = permutation(tor_fabric, seed=2)
    routed = Router(tor_fabric).route(src, dst, RoutingPolicy(mode="spray"))
    per_flow = np.add.reduceat(routed.entry_weight, routed.flow_ptr[:-1])
    # Every flow crosses 2 (same leaf) or 4 (via a spine) network hops, each carrying weight 1.
    assert set(np.round(per_flow, 9)) <= {2.0, 4.0}


def _uplink_usage(fabric, routed):
    """Per leaf: cross-leaf flows leaving it and distinct uplinks they were hashed onto."""
    s = fabric.scenario
    leaf_first = fabric.group_first_node[s.groups.index(s.group("leaf"))]
    n_leaf = s.group("leaf").count
    flows_per_leaf = np.zeros(n_leaf, dtype=int)
    used = [set() for _ in range(n_leaf)]
    for i in range(routed.n_flows):
        links = routed.entry_link[routed.flow_ptr[i] : routed.flow_ptr[i + 1]]
        if len(links) == 4:
            leaf = int(fabric.link_src[links[1]]) - leaf_first
            flows_per_leaf[leaf] += 1
            used[leaf].add(int(links[1]))
    return flows_per_leaf, np.array([len(u) for u in used])


def test_ecmp_collisions_match_random_balls_in_bins(tor_fabric):
    # k flows hashed uniformly onto m uplinks leave m (1 - 1/m)^k of them idle on average
    # (balls in bins). Each leaf of this fabric has m = 32 uplinks (16 spines x 2 cables).
    m = 32
    measured, expected, variance = 0.0, 0.0, 0.0
    for seed in range(8):
        src, dst = permutation(tor_fabric, seed=seed)
        routed = Router(tor_fabric).route(src, dst, RoutingPolicy(mode="ecmp", seed=seed))
        k, used = _uplink_usage(tor_fabric, routed)
        measured += used.sum()
        p1, p2 = (1 - 1 / m) ** k, (1 - 2 / m) ** k
        expected += (m * (1 - p1)).sum()
        variance += (m * p1 + m * (m - 1) * p2 - (m * p1) ** 2).sum()
    assert abs(measured - expected) < 4 * np.sqrt(variance), (measured, expected, np.sqrt(variance))
    # About 63% of the uplinks carry a flow when as many flows as uplinks are hashed.
    assert 0.58 < measured / (8 * 16 * m) < 0.68


def test_ecmp_permutation_shows_collisions_and_spray_adaptive_reach_line_rate(tor_fabric):
    results = {}
    for mode in ("ecmp", "adaptive", "spray"):
        tor_fabric.scenario.routing = RoutingPolicy(mode=mode)
        results[mode] = permutation_test(tor_fabric)["throughput_fraction"]["mean"]
    tor_fabric.scenario.routing = RoutingPolicy()
    assert results["ecmp"] < 0.75  # hash collisions: well under line rate
    assert results["adaptive"] >= 0.95
    assert results["spray"] >= 0.95


def test_more_flows_per_connection_add_hash_entropy(tor_fabric):
    means = []
    for q in (1, 4):
        tor_fabric.scenario.routing = RoutingPolicy(mode="ecmp", flows_per_connection=q)
        means.append(permutation_test(tor_fabric)["throughput_fraction"]["mean"])
    tor_fabric.scenario.routing = RoutingPolicy()
    assert means[1] > means[0] + 0.05


@pytest.mark.parametrize("mode", ["spray", "adaptive"])
def test_two_to_one_oversubscription_halves_cross_leaf_throughput(catalog, mode):
    # 8 leaves of 40 GPUs with 20 uplinks each; every GPU sends to the same position one leaf
    # over, so all traffic crosses the spines and each flow gets half of its line rate.
    fabric = expand(
        gen.leaf_spine(320, "dgx-h100", "qm9700", oversubscription=2.0, catalog=catalog), catalog
    )
    src = np.arange(320)
    dst = (src + 40) % 320
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode=mode))
    rates = max_min_rates(
        routed.flow_ptr, routed.entry_link, routed.entry_weight, fabric.link_capacity
    )
    fraction = np.bincount(routed.connection, weights=rates) / fabric.gpu_line_rate[src]
    assert fraction.mean() == pytest.approx(0.5, rel=0.05)
    non_blocking = expand(gen.leaf_spine(320, "dgx-h100", "qm9700", catalog=catalog), catalog)
    routed = Router(non_blocking).route(src, dst, RoutingPolicy(mode=mode))
    rates = max_min_rates(
        routed.flow_ptr, routed.entry_link, routed.entry_weight, non_blocking.link_capacity
    )
    full = np.bincount(routed.connection, weights=rates) / non_blocking.gpu_line_rate[src]
    assert fraction.mean() / full.mean() == pytest.approx(0.5, rel=0.05)


def test_random_permutation_cross_leaf_traffic_is_capped_by_uplink_capacity(catalog):
    # A random permutation keeps some flows on their leaf, so cross-leaf flows share 20
    # uplinks among fewer than 40 and get a bit more than half; together they can never
    # exceed the 8 x 20 uplinks' capacity.
    fabric = expand(
        gen.leaf_spine(320, "dgx-h100", "qm9700", oversubscription=2.0, catalog=catalog), catalog
    )
    fabric.scenario.routing = RoutingPolicy(mode="spray")
    result = permutation_test(fabric)
    cross = result["cross_leaf_throughput_fraction"]
    assert cross["mean"] * result["cross_leaf_connections"] <= 8 * 20 * (1 + 1e-9)
    assert 0.5 < cross["mean"] < 0.6


def test_failed_spine_is_routed_around(catalog):
    scenario = gen.rail_optimized(1024, "dgx-h100", "qm9700", catalog=catalog)
    scenario.failures.switches = [SwitchFailure("spine", 0)]
    fabric = expand(scenario, catalog)
    src, dst = permutation(fabric)
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="spray"))
    assert routed.unreachable.size == 0
    spine0 = fabric.group_first_node[scenario.groups.index(scenario.group("spine"))]
    touched = np.concatenate(
        [fabric.link_src[routed.entry_link], fabric.link_dst[routed.entry_link]]
    )
    assert spine0 not in touched


def test_gpu_whose_leaf_failed_reaches_the_fabric_over_nvlink(catalog):
    scenario = gen.rail_optimized(1024, "dgx-h100", "qm9700", catalog=catalog)
    scenario.failures.switches = [SwitchFailure("leaf", 0)]  # rail 0 of the first unit
    fabric = expand(scenario, catalog)
    assert fabric.gpu_line_rate[0] == 0  # GPU 0's NIC lost its only cable
    routed = Router(fabric).route(np.array([0]), np.array([1000]), RoutingPolicy(mode="ecmp"))
    assert routed.unreachable.size == 0
    links = routed.entry_link
    assert fabric.link_bundle[links[0]] == NVLINK_BUNDLE  # first to a server-local GPU
    assert fabric.link_dst[links[-1]] == 1000


def test_rail_only_cross_rail_traffic_goes_over_nvlink_to_the_destination_rail(catalog):
    fabric = expand(
        gen.rail_only(1024, "hgx-h100", "th5-51t", speed_gbps=400, catalog=catalog), catalog
    )
    # GPU 0 (server 0, rail 0) to GPU 8 * 5 + 3 (server 5, rail 3).
    routed = Router(fabric).route(np.array([0]), np.array([43]), RoutingPolicy(mode="ecmp"))
    links = routed.entry_link
    assert routed.unreachable.size == 0
    assert fabric.link_bundle[links[0]] == NVLINK_BUNDLE
    assert fabric.link_dst[links[1]] == 3  # handed to GPU 3 of server 0, whose NIC is on rail 3
    assert np.all(fabric.link_bundle[links[2:]] != NVLINK_BUNDLE)


def test_pxn_forwards_over_nvlink_even_when_the_own_nic_could_reach(catalog):
    fabric = expand(gen.rail_optimized(1024, "dgx-h100", "qm9700", catalog=catalog), catalog)
    plain = Router(fabric).route(np.array([0]), np.array([43]), RoutingPolicy(mode="ecmp"))
    pxn = Router(fabric).route(np.array([0]), np.array([43]), RoutingPolicy(mode="ecmp", pxn=True))
    assert fabric.link_bundle[plain.entry_link[0]] != NVLINK_BUNDLE
    assert fabric.link_bundle[pxn.entry_link[0]] == NVLINK_BUNDLE
    # On rail 3 from the start, the flow stays on one leaf: 2 NVLink + 2 network hops.
    assert pxn.entry_link.size == 4


def test_intra_server_traffic_uses_nvlink_only(catalog):
    fabric = expand(gen.rail_optimized(1024, "dgx-h100", "qm9700", catalog=catalog), catalog)
    routed = Router(fabric).route(np.array([0, 9]), np.array([7, 10]), RoutingPolicy(mode="spray"))
    assert np.all(fabric.link_bundle[routed.entry_link] == NVLINK_BUNDLE)
    assert routed.entry_link.size == 4
