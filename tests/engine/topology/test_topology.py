"""Topology templates and expansion: counts against NVIDIA's published reference designs."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.errors import ScenarioError
from engine.topology import generators as gen
from engine.topology.expand import NODE_GPU, NODE_SWITCH, expand
from engine.topology.graph_kernels import component_labels, distances_to_targets
from engine.topology.graph_reference import component_labels_reference, distances_reference

# NVIDIA DGX SuperPOD reference architecture (DGX B200, same Quantum-2 QM9700 rail-optimized
# fabric at 8 x 400G per node; scalable unit = 32 nodes), "DGX SuperPOD architecture" table:
# docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/latest/
# dgx-superpod-architecture.html (accessed 2026). Columns: SUs, nodes, GPUs, leaf, spine,
# core, node-leaf cables, leaf-spine cables, spine-core cables.
SUPERPOD_TABLE = [
    (2, 64, 512, 16, 8, 0, 512, 512, 0),
    (4, 128, 1024, 32, 16, 0, 1024, 1024, 0),
    (8, 256, 2048, 64, 32, 0, 2048, 2048, 0),
    (16, 512, 4096, 128, 128, 64, 4096, 4096, 4096),
    (32, 1024, 8192, 256, 256, 128, 8192, 8192, 8192),
    (64, 2048, 16384, 512, 512, 256, 16384, 16384, 16384),
]


@pytest.mark.parametrize("row", SUPERPOD_TABLE, ids=lambda r: f"{r[0]}SU")
def test_rail_optimized_matches_superpod_reference_architecture(row, catalog):
    _sus, nodes, gpus, leaf, spine, core, node_leaf, leaf_spine, spine_core = row
    scenario = gen.rail_optimized(gpus, "dgx-h100", "qm9700", catalog=catalog)
    fabric = expand(scenario, catalog)
    counts = {g.tier: g.count for g in scenario.groups}
    assert counts["server"] == nodes
    assert counts["leaf"] == leaf
    assert counts["spine"] == spine
    assert counts.get("core", 0) == core
    cables = {b.id: int(n) for b, n in zip(scenario.bundles, fabric.bundle_cables, strict=True)}
    assert cables["servers-leaf"] == node_leaf
    assert cables["leaf-spine"] == leaf_spine
    assert cables.get("spine-core", 0) == spine_core
    assert fabric.n_gpus == gpus
    # A full-duplex cable is two directed links; NVLink adds two per GPU.
    assert fabric.n_links == 2 * (node_leaf + leaf_spine + spine_core) + 2 * gpus


def test_every_switch_port_is_used_exactly_on_a_full_superpod(catalog):
    fabric = expand(gen.rail_optimized(16384, "dgx-h100", "qm9700", catalog=catalog), catalog)
    switches = fabric.node_kind == NODE_SWITCH
    degree = np.bincount(fabric.link_src[fabric.network_link_mask()], minlength=fabric.n_nodes)
    assert np.all(degree[switches] == 64)  # QM9700: 64 ports at 400G


def test_rail_wiring_puts_nic_r_on_the_rail_r_leaf_of_its_scalable_unit(catalog):
    scenario = gen.rail_optimized(1024, "dgx-h100", "qm9700", catalog=catalog)
    fabric = expand(scenario, catalog)
    to_leaf = fabric.network_link_mask() & (fabric.link_src < fabric.n_gpus)
    gpu = fabric.link_src[to_leaf]
    leaf = fabric.node_member[fabric.link_dst[to_leaf]]
    server, rail = fabric.gpu_server[gpu], fabric.gpu_local[gpu]
    np.testing.assert_array_equal(leaf, (server // 32) * 8 + rail)


def test_three_tier_is_chosen_only_past_two_tier_reach(catalog):
    two = gen.rail_optimized(2048, "dgx-h100", "qm9700", catalog=catalog)
    three = gen.rail_optimized(4096, "dgx-h100", "qm9700", catalog=catalog)
    assert {g.tier for g in two.groups} == {"server", "leaf", "spine"}
    assert {g.tier for g in three.groups} == {"server", "leaf", "spine", "core"}


@pytest.mark.parametrize(
    ("factory", "kwargs", "largest"),
    [
        (gen.single_switch, {"gpus": 72}, "64 GPUs"),
        # k = 64 at 400G: 3-tier fat-tree reaches k^3/4 = 65,536 endpoints.
        (gen.rail_optimized, {"gpus": 65536 * 2}, "65536 GPUs"),
        (gen.leaf_spine, {"gpus": 4096}, "2048 GPUs"),
    ],
)
def test_templates_refuse_sizes_beyond_the_radix_and_say_the_largest(
    factory, kwargs, largest, catalog
):
    with pytest.raises(ScenarioError) as info:
        factory(server="dgx-h100", switch="qm9700", catalog=catalog, **kwargs)
    assert largest in str(info.value)


def test_leaf_spine_oversubscription_is_exact(catalog):
    # 2:1 on radix 64 with whole servers: 40 down (5 servers), 20 up; 8 full leaves.
    scenario = gen.leaf_spine(320, "dgx-h100", "qm9700", oversubscription=2.0, catalog=catalog)
    fabric = expand(scenario, catalog)
    leaf = scenario.group("leaf")
    first = fabric.group_first_node[scenario.groups.index(leaf)]
    net = fabric.network_link_mask()
    for node in range(first, first + leaf.count):
        down = np.count_nonzero(net & (fabric.link_src == node) & (fabric.link_dst < fabric.n_gpus))
        up = np.count_nonzero(
            net & (fabric.link_src == node) & (fabric.node_kind[fabric.link_dst] == NODE_SWITCH)
        )
        assert down == 2 * up


def test_rail_only_has_no_path_between_rails_except_nvlink(catalog):
    fabric = expand(
        gen.rail_only(1024, "hgx-h100", "th5-51t", speed_gbps=400, catalog=catalog), catalog
    )
    net = fabric.network_link_mask()
    labels = component_labels(fabric.n_nodes, fabric.link_src[net], fabric.link_dst[net])
    gpu_labels = labels[fabric.node_kind == NODE_GPU]
    # One network per rail: as many components among GPUs as rails.
    assert np.unique(gpu_labels).size == 8
    # The 8 GPUs of server 0 sit on 8 different networks; GPU r of every server shares rail r's.
    assert np.unique(gpu_labels[:8]).size == 8
    np.testing.assert_array_equal(gpu_labels.reshape(-1, 8), np.tile(gpu_labels[:8], (128, 1)))


def test_expansion_is_fast_enough_to_hold_131k_gpus(catalog):
    fabric = expand(
        gen.rail_optimized(131072, "hgx-h100", "th5-51t", speed_gbps=400, catalog=catalog), catalog
    )
    assert fabric.n_gpus == 131072
    assert np.count_nonzero(fabric.node_kind == NODE_SWITCH) == 2048 + 2048 + 1024


def _random_graph(rng, n, m):
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    return src.astype(np.int64), dst.astype(np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_graph_kernels_match_reference(seed):
    rng = np.random.default_rng(seed)
    n = 40
    src, dst = _random_graph(rng, n, 45)
    assert list(component_labels(n, src, dst)) == component_labels_reference(n, src, dst)
    transit = rng.random(n) < 0.7
    targets = [3, 17]
    order = np.argsort(dst, kind="stable")
    in_ptr = np.zeros(n + 1, dtype=np.int64)
    in_ptr[1:] = np.cumsum(np.bincount(dst, minlength=n))
    local = np.arange(n, dtype=np.int64)
    out = np.empty((1, n), dtype=np.int16)
    distances_to_targets(
        in_ptr, src[order], transit, np.array([0, 2]), np.array(targets, dtype=np.int64), local, out
    )
    assert list(out[0]) == distances_reference(n, src, dst, transit, targets)


@pytest.mark.parametrize("seed", range(3))
def test_distances_in_batches_of_sets_match_the_reference(seed):
    # 70 target sets: more than the 64 the kernel advances together
    rng = np.random.default_rng(100 + seed)
    n = 60
    src, dst = _random_graph(rng, n, 150)
    transit = rng.random(n) < 0.8
    sets = [list(rng.choice(n, size=rng.integers(1, 4), replace=False)) for _ in range(70)]
    order = np.argsort(dst, kind="stable")
    in_ptr = np.zeros(n + 1, dtype=np.int64)
    in_ptr[1:] = np.cumsum(np.bincount(dst, minlength=n))
    target_ptr = np.zeros(len(sets) + 1, dtype=np.int64)
    target_ptr[1:] = np.cumsum([len(t) for t in sets])
    targets = np.array([x for t in sets for x in t], dtype=np.int64)
    out = np.empty((len(sets), n), dtype=np.int16)
    local = np.arange(n, dtype=np.int64)
    distances_to_targets(in_ptr, src[order], transit, target_ptr, targets, local, out)
    for k, t in enumerate(sets):
        assert list(out[k]) == distances_reference(n, src, dst, transit, t), k
