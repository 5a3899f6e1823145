"""GB200 NVL72 racks past two tiers: pods of one scalable unit (8 racks, NVIDIA's DGX GB200
SuperPOD reference architecture) with their own leaves and spines, joined by a core.

Closed forms on Quantum-2 QM9700 (64 ports at 400G, 32 down and 32 up at 1:1): a pod holds
8 x 72 = 576 NICs; folded onto 24 leaves (3 NICs of each rack a leaf) a leaf has 24 down
and 24 up, 24 spines take one cable from each leaf and send 24 up; P pods put 576 P spine
cables on the core. Every NIC reaches every other rack's NIC over the fabric alone, a
permutation across the pods runs every flow at its NIC's rate at 1:1 (and at half of it at
2:1), a size past the core's ports is refused with the largest that builds, and every size
that built two tiers before the pods builds exactly as it did.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.collectives.stage_rates import route_rates
from engine.model.errors import ScenarioError
from engine.model.scenario import RoutingPolicy, to_json
from engine.presets.scenarios import load_preset
from engine.routing.router import Router
from engine.topology.expand import NODE_SWITCH, NVLINK_BUNDLE, expand
from engine.topology.graph_kernels import component_labels
from engine.topology.nvl72_pods import plan_pods
from engine.topology.templates import generate

FIXTURE = Path(__file__).parents[2] / "fixtures" / "nvl72_two_tier.json"


def _switches(scenario) -> dict[str, int]:
    counts: dict[str, int] = {}
    for g in scenario.groups:
        if g.kind == "switch":
            counts[g.tier] = counts.get(g.tier, 0) + g.count
    return counts


@pytest.mark.parametrize(
    ("racks", "leaves", "spines", "cores"),
    [
        # 16 racks still fold onto 2 tiers: 72 / 36 = 2 NICs a rack a leaf, 16 x 2 = 32 down;
        # 36 leaves x 32 up over spines that divide 32 and take <= 64 leaf cables: 32 spines
        (16, 36, 32, 0),
        # 4 pods of 24 leaves and 24 spines; a spine's 24 core cables go 12 each to 2 core
        # switches (4 pods x 12 = 48 ports a core switch): 24 spine planes x 2 = 48 cores
        (32, 4 * 24, 4 * 24, 48),
        # 8 pods: 8 x 24 x 24 = 4,608 core cables fill 4,608 / 64 = 72 core switches
        (64, 8 * 24, 8 * 24, 72),
        # 16 pods (9,216 GPUs, the reference architecture's 128 racks): 9,216 / 64 = 144
        (128, 16 * 24, 16 * 24, 144),
    ],
)
def test_switch_counts_in_closed_form(racks, leaves, spines, cores, catalog):
    s = generate("nvl72", gpus=72 * racks, catalog=catalog)
    assert _switches(s) == {"leaf": leaves, "spine": spines} | ({"core": cores} if cores else {})
    fabric = expand(s, catalog)
    assert fabric.n_gpus == 72 * racks
    if racks > 16:
        pods = [g for g in s.groups if g.kind == "server"]
        assert len(pods) == racks // 8 and all(g.count == 8 for g in pods)  # one SU a pod
    # every switch within its 64 ports; leaves and spines send up what they take in (1:1)
    network = fabric.link_bundle != NVLINK_BUNDLE
    up = np.bincount(fabric.link_src[network & fabric.link_upward], minlength=fabric.n_nodes)
    down = np.bincount(fabric.link_dst[network & fabric.link_upward], minlength=fabric.n_nodes)
    tier_of = np.array([g.tier for g in s.groups])[fabric.node_group]
    switch = fabric.node_kind == NODE_SWITCH
    for tier in ("leaf", "spine"):
        nodes = np.flatnonzero(switch & (tier_of == tier))
        if tier == "spine" and not cores:  # the top tier of 2: all its ports face down
            assert (up[nodes] == 0).all() and (down[nodes] <= 64).all()
            continue
        assert (up[nodes] == down[nodes]).all() and (up[nodes] + down[nodes] <= 64).all()
    core_nodes = np.flatnonzero(tier_of == "core")
    assert (down[core_nodes] <= 64).all()
    assert int(down[core_nodes].sum()) == (72 * racks if cores else 0)


def test_every_nic_reaches_every_other_racks_nic_over_the_fabric(catalog):
    s = generate("nvl72", gpus=72 * 64, catalog=catalog)
    fabric = expand(s, catalog)
    # the network links alone (no NVLink): every GPU's own NIC in one component
    network = fabric.link_bundle != NVLINK_BUNDLE
    labels = component_labels(fabric.n_nodes, fabric.link_src[network], fabric.link_dst[network])
    assert np.unique(labels[: fabric.n_gpus]).shape[0] == 1
    # routed: each NIC of rack 0 to the NIC of the same index in every other rack leaves by
    # its own NIC; into another pod through one core switch, inside its pod through none
    racks = fabric.n_gpus // 72
    src = np.tile(np.arange(72), racks - 1)
    dst = src + 72 * np.repeat(np.arange(1, racks), 72)
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="ecmp"), connection_bytes=1e9)
    assert routed.unreachable.size == 0
    first = routed.entry_link[routed.flow_ptr[:-1]]
    assert np.array_equal(fabric.link_src[first], routed.src_gpu)
    assert not np.isin(fabric.link_bundle[first], [NVLINK_BUNDLE]).any()
    tier_of = np.array([g.tier for g in s.groups])[fabric.node_group]
    owner = np.repeat(np.arange(routed.n_flows), np.diff(routed.flow_ptr))
    into_core = np.bincount(
        owner, weights=(tier_of[fabric.link_dst[routed.entry_link]] == "core"), minlength=len(first)
    )
    other_pod = (routed.dst_gpu // 72) // 8 != 0
    assert np.array_equal(into_core, other_pod.astype(float))


def _cross_pod_permutation(fabric, pods: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Every GPU to a GPU of the next pod, in a random order within that pod."""
    rng = np.random.default_rng(seed)
    per_pod = fabric.n_gpus // pods
    src = np.arange(fabric.n_gpus)
    dst = np.empty_like(src)
    for p in range(pods):
        nxt = (p + 1) % pods
        dst[p * per_pod : (p + 1) * per_pod] = nxt * per_pod + rng.permutation(per_pod)
    return src, dst


@pytest.mark.parametrize(
    ("racks", "oversubscription", "share"), [(32, 1.0, 1.0), (64, 1.0, 1.0), (32, 2.0, 0.5)]
)
def test_a_permutation_across_pods_runs_at_the_nic_rate_at_one_to_one(
    racks, oversubscription, share, catalog
):
    s = generate("nvl72", gpus=72 * racks, oversubscription=oversubscription, catalog=catalog)
    assert "core" in _switches(s)
    fabric = expand(s, catalog)
    src, dst = _cross_pod_permutation(fabric, pods=racks // 8)
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="spray"), connection_bytes=1e9)
    rates = route_rates(
        routed.flow_ptr, routed.entry_link, routed.entry_weight, fabric.link_capacity, routed.key
    )
    nic = fabric.gpu_line_rate[routed.src_gpu]
    # 1:1: neither spines nor core cap a flow below its NIC; 2:1: the leaves' uplinks halve it
    assert rates == pytest.approx(share * nic, rel=1e-9)


def test_a_size_past_the_core_is_refused_with_the_largest_that_builds(catalog):
    # a core switch takes one cable at least from each pod: 64 pods of 8 racks at most
    largest = 72 * 8 * 64
    with pytest.raises(ScenarioError, match=f"at most {largest:,} GPUs"):
        generate("nvl72", gpus=largest + 8 * 72, catalog=catalog)
    assert _switches(generate("nvl72", gpus=largest, catalog=catalog))["core"] > 0


def test_a_size_not_of_whole_scalable_units_names_the_nearest_that_build(catalog):
    with pytest.raises(ScenarioError) as refused:
        generate("nvl72", gpus=72 * 33, catalog=catalog)
    assert "the nearest GPU counts that build are 2,304 or 2,880" in refused.value.brief()
    for racks in (32, 40):
        generate("nvl72", gpus=72 * racks, catalog=catalog)
    with pytest.raises(ScenarioError, match="nearest GPU counts that build are 1,152 or 1,728"):
        generate("nvl72", gpus=72 * 17, catalog=catalog)


def test_a_server_without_a_scalable_unit_stays_on_two_tiers(catalog):
    # the DGX H100 has none in the catalog: no pods are guessed for it
    with pytest.raises(ScenarioError, match="no scalable unit"):
        generate("nvl72", gpus=8 * 180, server="dgx-h100", catalog=catalog)


def test_the_plan_refuses_what_does_not_divide():
    # 16-rack pods: no divisor of 72 gives leaves whose uplinks split evenly over spines
    # with at most 32 leaf cables each (36 leaves x 32 up need 36 spines, which divide no 32)
    assert plan_pods(32, 16, 72, (32, 32), 64) is None
    assert plan_pods(8, 8, 72, (32, 32), 64) is None  # one pod is no 3-tier fabric
    assert plan_pods(32, 8, 72, (32, 32), 64) is not None


def test_every_size_that_built_two_tiers_builds_as_before(catalog):
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))["sizes"]
    assert len(recorded) > 20
    for key, before in recorded.items():
        racks, ratio = key.split("-")
        s = generate("nvl72", gpus=72 * int(racks), oversubscription=float(ratio), catalog=catalog)
        now = json.loads(to_json(s))
        assert now["metadata"]["description"] == before["description"], key
        assert now["groups"] == before["groups"] and now["bundles"] == before["bundles"], key
    # the shipped 2-tier preset is one of them
    preset = json.loads(to_json(load_preset("gb200-nvl72-ib-576")))
    assert preset["groups"] == recorded["8-1"]["groups"]
    assert preset["bundles"] == recorded["8-1"]["bundles"]
