"""ECMP hash scopes: which switches share a hash function, and the polarization that follows.

The kernels are held to the reference router for every scope; then, on a small 3-tier
fat-tree, switches sharing one hash function are shown to repeat at the spine the choice a
flow got at its leaf, while switches hashing independently spread it again.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.flows.traffic import permutation
from engine.model.scenario import DeviceGroup, LinkBundle, RoutingPolicy, Scenario
from engine.routing import router as routing
from engine.routing.hashing import mix64_all, node_salts, text_key
from engine.routing.reference import (
    ReferenceRouter,
    flow_hash_reference,
    mix64_reference,
    node_salt_reference,
    text_key_reference,
)
from engine.routing.router import Router
from engine.topology import generators as gen
from engine.topology.expand import NODE_SWITCH, NVLINK_BUNDLE, Fabric, expand

SCOPES = RoutingPolicy.HASH_SCOPES
PODS, LEAVES_PER_POD, SPINES_PER_POD, CORES_PER_PLANE = 2, 2, 4, 4
SUB_FLOWS = 32  # sub-flows per connection: many independently hashed flows on 32 GPUs


def three_tier(leaf_model: str = "th5-51t", upper_model: str = "th5-51t") -> Scenario:
    """2 pods of 2 leaves (one 8-NIC server each) and 4 spines; 4 planes of 4 cores.

    Leaf l of pod p has one uplink to each of its pod's 4 spines; spine j of a pod (plane j)
    has one uplink to each of the 4 cores of plane j. A flow between pods is hashed twice
    over 4 equal-cost links, at its leaf and at the spine it reaches; from the core down
    its path is fixed.
    """
    leaves = PODS * LEAVES_PER_POD
    scenario = Scenario(
        groups=[
            DeviceGroup("servers", "server", "hgx-h100", leaves, "server"),
            DeviceGroup("leaf", "switch", leaf_model, leaves, "leaf"),
            DeviceGroup("spine", "switch", upper_model, PODS * SPINES_PER_POD, "spine"),
            DeviceGroup("core", "switch", upper_model, SPINES_PER_POD * CORES_PER_PLANE, "core"),
        ],
        bundles=[
            LinkBundle("servers-leaf", "servers", "leaf", "full", blocks=leaves),
            LinkBundle("leaf-spine", "leaf", "spine", "full", blocks=PODS, length_m=30.0),
            LinkBundle(
                "spine-core", "spine", "core", "striped", blocks=SPINES_PER_POD, length_m=30.0
            ),
        ],
    )
    scenario.fabric.technology = "roce"
    return scenario


@pytest.fixture(scope="module")
def fat_tree(catalog) -> Fabric:
    """The small 3-tier fat-tree of `three_tier`, one switch model throughout."""
    return expand(three_tier(), catalog)


@pytest.fixture(scope="module")
def tor_fabric(catalog) -> Fabric:
    """512 GPUs on a 2-tier leaf-spine with 2 cables per leaf-spine pair."""
    return expand(gen.leaf_spine(512, "dgx-h100", "qm9700", catalog=catalog), catalog)


def cross_pod_connections(fabric: Fabric) -> tuple[np.ndarray, np.ndarray]:
    """Every GPU of pod 0 to every GPU of pod 1 and back (one connection each)."""
    per_pod = fabric.n_gpus // PODS
    a = np.arange(per_pod)
    src = np.concatenate([np.repeat(a, per_pod), np.repeat(a + per_pod, per_pod)])
    dst = np.concatenate([np.tile(a + per_pod, per_pod), np.tile(a, per_pod)])
    return src, dst


def member(fabric: Fabric, node: np.ndarray | int) -> np.ndarray:
    """Member index of a node within its group."""
    return fabric.node_member[node]


def two_stage_choices(fabric: Fabric, scope: str) -> tuple[np.ndarray, np.ndarray]:
    """Per cross-pod flow: the spine its leaf chose (index within the pod) and the core its
    spine chose (index within the plane), as the relative ports of the two hashings."""
    src, dst = cross_pod_connections(fabric)
    policy = RoutingPolicy(mode="ecmp", flows_per_connection=SUB_FLOWS, hash_scope=scope)
    routed = Router(fabric).route(src, dst, policy)
    spine_port, core_port = [], []
    for f in range(routed.n_flows):
        links = routed.entry_link[routed.flow_ptr[f] : routed.flow_ptr[f + 1]]
        links = links[fabric.link_bundle[links] != NVLINK_BUNDLE]
        assert len(links) == 6  # GPU-leaf, leaf-spine, spine-core, core-spine, spine-leaf, leaf-GPU
        spine, core = fabric.link_dst[links[1]], fabric.link_dst[links[2]]
        spine_port.append(member(fabric, spine) % SPINES_PER_POD)
        core_port.append(member(fabric, core) % CORES_PER_PLANE)
    return np.array(spine_port), np.array(core_port)


def spine_uplink_load(fabric: Fabric, scope: str) -> np.ndarray:
    """Flows on each spine-to-core link (all of them, idle ones as 0) under `scope`."""
    src, dst = cross_pod_connections(fabric)
    policy = RoutingPolicy(mode="ecmp", flows_per_connection=SUB_FLOWS, hash_scope=scope)
    routed = Router(fabric).route(src, dst, policy)
    s = fabric.scenario
    spine_core = s.bundles.index(s.bundle("spine-core"))
    up = np.flatnonzero((fabric.link_bundle == spine_core) & fabric.link_upward)
    counts = np.bincount(routed.entry_link, minlength=fabric.n_links)
    return counts[up]


# ---- salts -----------------------------------------------------------------------------------


def test_switch_scope_salts_each_node_by_its_id_as_before(fat_tree):
    # Scope "switch" is the placement of earlier versions bit for bit: salt = mix64(node).
    salts = Router(fat_tree).node_salt("switch")
    np.testing.assert_array_equal(salts, mix64_all(np.arange(fat_tree.n_nodes, dtype=np.uint64)))
    assert all(int(salts[v]) == mix64_reference(v) for v in range(0, fat_tree.n_nodes, 7))


@pytest.mark.parametrize("scope", SCOPES)
def test_node_salts_match_the_reference(fat_tree, scope):
    salts = Router(fat_tree).node_salt(scope)
    assert salts.dtype == np.uint64 and salts.shape == (fat_tree.n_nodes,)
    for v in range(fat_tree.n_nodes):
        assert int(salts[v]) == node_salt_reference(fat_tree, v, scope)


def test_scopes_share_salts_by_tier_by_model_or_everywhere(catalog):
    # Leaves of one model, spines and cores of another: which switches hash alike.
    fabric = expand(three_tier("th5-51t", "sn5600"), catalog)
    router = Router(fabric)
    s = fabric.scenario
    switches = fabric.node_kind == NODE_SWITCH

    def salts_of(scope: str, group: str) -> set[int]:
        nodes = np.flatnonzero(switches & (fabric.node_group == s.groups.index(s.group(group))))
        return {int(x) for x in router.node_salt(scope)[nodes]}

    for group in ("leaf", "spine", "core"):
        assert len(salts_of("switch", group)) == s.group(group).count
        assert len(salts_of("tier", group)) == 1
        assert len(salts_of("model", group)) == 1
    assert (
        len({*salts_of("tier", "leaf"), *salts_of("tier", "spine"), *salts_of("tier", "core")}) == 3
    )
    assert salts_of("model", "spine") == salts_of("model", "core") != salts_of("model", "leaf")
    assert len(set(router.node_salt("fabric")[switches].tolist())) == 1


def test_shared_salts_are_keyed_by_a_fixed_hash_of_the_text():
    # Not Python's str hash, which changes from one process to the next: FNV-1a, whose
    # published test vectors it reproduces, so placements are the same in every run.
    for text, key in (("", 0xCBF29CE484222325), ("a", 0xAF63DC4C8601EC8C)):
        assert text_key(text) == text_key_reference(text) == key
    assert text_key("foobar") == 0x85944171F73967E8
    groups = np.array([0, 0, 1], dtype=np.int32)
    salts = node_salts("model", groups, ["leaf", "spine"], ["th5-51t", "sn5600"])
    assert int(salts[0]) == int(salts[1]) == mix64_reference(text_key_reference("model:th5-51t"))
    # Under "model" the tier does not matter, under "tier" the model does not.
    again = node_salts("model", groups, ["core", "leaf"], ["th5-51t", "sn5600"])
    np.testing.assert_array_equal(salts, again)
    by_tier = node_salts("tier", groups, ["leaf", "spine"], ["a", "b"])
    np.testing.assert_array_equal(
        by_tier, node_salts("tier", groups, ["leaf", "spine"], ["c", "d"])
    )


def test_an_unknown_scope_is_refused_by_name(fat_tree):
    with pytest.raises(ValueError, match="hash_scope 'vendor'"):
        Router(fat_tree).route(
            np.array([0]), np.array([20]), RoutingPolicy(mode="ecmp", hash_scope="vendor")
        )


# ---- kernels against the reference ------------------------------------------------------------


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("fabric_name", ["fat_tree", "tor_fabric"])
def test_ecmp_paths_match_the_reference_for_every_scope(request, fabric_name, scope):
    fabric = request.getfixturevalue(fabric_name)
    src, dst = permutation(fabric, seed=9)
    src, dst = src[:64], dst[:64]
    policy = RoutingPolicy(mode="ecmp", seed=13, flows_per_connection=2, hash_scope=scope)
    routed = Router(fabric).route(src, dst, policy)
    ref = ReferenceRouter(fabric, scope)
    for f in range(routed.n_flows):
        links = routed.entry_link[routed.flow_ptr[f] : routed.flow_ptr[f + 1]]
        links = links[fabric.link_bundle[links] != NVLINK_BUNDLE]
        s, d = int(routed.src_gpu[f]), int(routed.dst_gpu[f])
        h = flow_hash_reference(s, d, f % 2, policy.seed)
        assert list(links) == ref.ecmp(s, d, h)


@pytest.mark.parametrize("scope", SCOPES)
def test_hop_by_hop_adaptive_paths_match_the_reference_for_every_scope(
    fat_tree, scope, monkeypatch
):
    # Past the search limit adaptive routing chooses hop by hop: the same hashed pick, among
    # the least-loaded next links, each flow booked on its links in flow order.
    monkeypatch.setattr(routing, "ADAPTIVE_PATH_SEARCH_MAX_FLOWS", 0)
    src, dst = cross_pod_connections(fat_tree)
    policy = RoutingPolicy(mode="adaptive", seed=3, hash_scope=scope)
    routed = Router(fat_tree).route(src, dst, policy, 1.0)
    ref = ReferenceRouter(fat_tree, scope)
    load: dict[int, float] = {}
    for f in range(routed.n_flows):
        sl = slice(routed.flow_ptr[f], routed.flow_ptr[f + 1])
        links = routed.entry_link[sl]
        links = links[fat_tree.link_bundle[links] != NVLINK_BUNDLE]
        s, d = int(routed.src_gpu[f]), int(routed.dst_gpu[f])
        h = flow_hash_reference(s, d, 0, policy.seed)
        assert list(links) == ref.adaptive_local(s, d, h, load, float(routed.flow_bytes[f]))


def test_the_default_scope_is_a_seed_per_switch_and_the_reference_follows_it(fat_tree):
    assert RoutingPolicy().hash_scope == "switch"
    assert ReferenceRouter(fat_tree).hash_scope == "switch"


# ---- polarization ----------------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["fabric", "model"])
def test_one_hash_function_repeats_the_leaf_choice_at_the_spine(fat_tree, scope):
    # Leaf and spine offer 4 equal-cost uplinks each and, with one model everywhere, hash
    # alike: a flow on uplink k of its leaf (spine k of the pod) takes uplink k of that spine
    # (core k of the plane), every flow without exception.
    spine_port, core_port = two_stage_choices(fat_tree, scope)
    assert spine_port.size == 2 * 16 * 16 * SUB_FLOWS
    assert len(set(spine_port.tolist())) == SPINES_PER_POD  # the leaves spread the flows
    np.testing.assert_array_equal(core_port, spine_port)


@pytest.mark.parametrize("scope", ["switch", "tier"])
def test_independent_hash_functions_spread_the_flows_again_at_the_spine(fat_tree, scope):
    # Each switch (or each tier) its own function: the spine's choice is independent of the
    # leaf's, so each of the 4 core ports follows about a quarter of each leaf port's flows.
    spine_port, core_port = two_stage_choices(fat_tree, scope)
    joint = np.zeros((SPINES_PER_POD, CORES_PER_PLANE))
    np.add.at(joint, (spine_port, core_port), 1)
    assert np.all(joint > 0)
    same = np.mean(core_port == spine_port)
    n = spine_port.size
    assert abs(same - 1 / CORES_PER_PLANE) < 5 * np.sqrt(0.25 * 0.75 / n)


def test_polarization_idles_spine_uplinks_and_piles_flows_on_the_others(fat_tree):
    polarized = spine_uplink_load(fat_tree, "fabric")
    spread = spine_uplink_load(fat_tree, "switch")
    assert polarized.sum() == spread.sum()  # the same flows cross the spine-core links
    spines = PODS * SPINES_PER_POD
    # One hash function: each spine sends all its upward flows on one of its 4 uplinks.
    assert np.count_nonzero(polarized) == spines
    assert np.count_nonzero(spread) == spines * CORES_PER_PLANE
    assert polarized.max() > 2 * spread.max()


def test_model_scope_keeps_tiers_of_different_models_apart(catalog):
    # Leaves of one model and spines of another hash differently: no polarization between
    # them although every switch runs its model's default.
    fabric = expand(three_tier("th5-51t", "sn5600"), catalog)
    spine_port, core_port = two_stage_choices(fabric, "model")
    assert 0.1 < np.mean(core_port == spine_port) < 0.4
