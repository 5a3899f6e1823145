"""Templates at the template dialog's default size (1,024 GPUs) build, validate and evaluate,
each visibly what it is: the fat-tree has its core tier, the rail-only fabric's switch cards
say they are rails and nothing joins the rails."""

from __future__ import annotations

import pytest

from engine.analysis import generate, run_evaluation
from engine.model.validation import check_structure

MULTI_SWITCH = ("leaf-spine", "fat-tree", "rail-optimized", "rail-only")


@pytest.mark.parametrize("switch", ["qm9700", "sn5600"])
@pytest.mark.parametrize("template", MULTI_SWITCH)
def test_every_multi_switch_template_is_valid_at_1024_gpus(template, switch, catalog):
    scenario = generate(
        template, gpus=1024, server="dgx-h100", switch=switch, speed_gbps=400.0, catalog=catalog
    )
    assert check_structure(scenario, catalog) == []
    assert sum(g.count for g in scenario.groups if g.kind == "server") == 128


@pytest.mark.parametrize("template", MULTI_SWITCH)
def test_each_evaluates_cleanly(template, catalog):
    scenario = generate(template, gpus=1024, server="dgx-h100", switch="qm9700", catalog=catalog)
    report = run_evaluation(scenario, catalog)
    assert report.topology.gpus == 1024
    assert report.training_error is None and report.cost_error is None
    assert report.permutation.throughput_fraction.mean > 0


def test_the_fat_tree_at_one_pods_worth_of_leaves_gets_two_half_pods(catalog):
    s = generate("fat-tree", gpus=1024, server="dgx-h100", switch="qm9700", catalog=catalog)
    tiers = {g.tier: g.count for g in s.groups}
    assert tiers == {"server": 128, "leaf": 32, "spine": 64, "core": 32}
    leaf_spine = next(b for b in s.bundles if b.id == "leaf-spine")
    assert leaf_spine.blocks == 2  # two pods of 16 leaves
    # and where whole pods of k/2 leaves work, they are kept as before
    big = generate("fat-tree", gpus=4096, server="dgx-h100", switch="qm9700", catalog=catalog)
    assert next(b for b in big.bundles if b.id == "leaf-spine").blocks == 4


def test_the_rail_only_cards_name_their_rails(catalog):
    s = generate("rail-only", gpus=1024, server="dgx-h100", switch="qm9700", catalog=catalog)
    names = {g.tier: g.name for g in s.groups}
    assert names["leaf"] == "Rail leaves (8 rails)" and names["spine"] == "Rail spines (8 rails)"
    assert "8 rails of 4 leaf + 2 spine, no switch between rails" in s.metadata.description
