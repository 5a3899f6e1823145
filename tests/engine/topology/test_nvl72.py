"""GB200 NVL72 racks as the unit of scale-up: 4 and 8 racks build on folded rails (a few
leaves, not 72), expand with every NIC cabled once and every leaf port within its radix, and
run a training step; sizes beyond two tiers build pods under a core (test_nvl72_pods), while
a 128-port switch keeps 64 racks on two; the rail-optimized template's refusal names GPU
counts that really build."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.errors import ScenarioError
from engine.topology.expand import expand
from engine.topology.generators import rail_optimized
from engine.topology.templates import generate
from engine.training.step import train_step


@pytest.mark.parametrize(("racks", "leaves"), [(4, 9), (8, 18)])
def test_nvl72_racks_on_folded_rails_expand_and_train(racks, leaves, catalog):
    s = generate("nvl72", gpus=72 * racks, catalog=catalog)
    tiers = {g.tier: g.count for g in s.groups}
    # 72 rails folded onto L leaves: each leaf takes 72 / L NICs of every rack, 32 at most
    assert tiers["server"] == racks and tiers["leaf"] == leaves
    assert racks * 72 // leaves == 32
    fabric = expand(s, catalog)
    assert fabric.n_gpus == 72 * racks
    cables = int(fabric.bundle_cables[0])
    assert cables == 72 * racks  # one cable per NIC (per GPU)
    leaf_nodes = fabric.link_dst[(fabric.link_bundle == 0) & fabric.link_upward]
    per_leaf = np.bincount(leaf_nodes - leaf_nodes.min(), minlength=leaves)
    assert (per_leaf == 32).all()  # rails spread evenly: every leaf full, none over
    # NIC r of every rack lands on leaf r mod L: a folded rail
    gpu_of = fabric.link_src[(fabric.link_bundle == 0) & fabric.link_upward]
    assert np.array_equal(fabric.gpu_local[gpu_of] % leaves, leaf_nodes - leaf_nodes.min())
    step = train_step(fabric, catalog=catalog)
    assert step["step_s"] > 0 and 0 < step["gpu_utilization"] <= 1
    assert step["step_s"] == pytest.approx(
        step["compute_s"] + step["exposed_comm_s"] + step["bubble_s"] + step["optimizer_s"]
    )


def test_nvl72_beyond_two_tiers_builds_pods_and_a_wider_switch_stays_on_two(catalog):
    s = generate("nvl72", gpus=1152, catalog=catalog)  # 16 racks: the last 2-tier size
    assert {g.tier for g in s.groups} == {"server", "leaf", "spine"}
    s = generate("nvl72", gpus=72 * 32, catalog=catalog)  # past it: pods under a core
    assert "core" in {g.tier for g in s.groups}
    s = generate("nvl72", gpus=72 * 64, switch="sn5600", speed_gbps=400.0, catalog=catalog)
    assert {g.tier: g.count for g in s.groups}["leaf"] == 72


def test_the_rail_optimized_refusal_names_counts_that_build(catalog):
    with pytest.raises(ScenarioError) as refused:
        rail_optimized(72 * 130, "gb200-nvl72", "qm9700", catalog=catalog)
    message = refused.value.brief()
    assert "multiple of 1008" not in message
    assert "the nearest GPU counts that build are 9,216 or 13,824" in message
    for gpus in (9216, 13824):
        rail_optimized(gpus, "gb200-nvl72", "qm9700", catalog=catalog)
