"""A fabric speaks one link layer: InfiniBand switches and NICs for InfiniBand, Ethernet
ones for RoCE (a mix would need a gateway, which is not modelled)."""

from __future__ import annotations

from engine.model.overrides import apply_override
from engine.model.validation import check_structure
from engine.presets.scenarios import PRESETS, load_preset


def test_every_preset_speaks_one_link_layer(catalog):
    for name in PRESETS:
        assert check_structure(load_preset(name), catalog) == [], name


def test_roce_on_infiniband_switches_is_refused_naming_each_switch_group(catalog):
    scenario = apply_override(load_preset("dgx-h100-ib-ndr-1k"), "fabric.technology", "roce")
    problems = check_structure(scenario, catalog)
    assert [p.where for p in problems] == ["groups[leaf]", "groups[spine]"]
    assert all(p.field == "model" for p in problems)
    assert "qm9700 switch speaks InfiniBand" in problems[0].message
    assert (
        "choose an Ethernet switch or set fabric.technology to 'infiniband'" in problems[0].message
    )


def test_an_infiniband_leaf_under_an_ethernet_spine_is_refused(catalog):
    scenario = apply_override(load_preset("hgx-h100-roce-ecmp-1k"), "groups.leaf.model", "qm9700")
    problems = [p for p in check_structure(scenario, catalog) if p.field == "model"]
    assert [p.where for p in problems] == ["groups[leaf]"]
    assert "gateway" in problems[0].message


def test_a_nic_for_either_layer_serves_both(catalog):
    # the Spectrum-X preset's BlueField-3 NICs serve InfiniBand as well as RoCE
    scenario = load_preset("dgx-h100-roce-spectrumx-1k")
    scenario = apply_override(scenario, "groups.leaf.model", "qm9700")
    scenario = apply_override(scenario, "groups.spine.model", "qm9700")
    scenario = apply_override(scenario, "fabric.technology", "infiniband")
    assert [p for p in check_structure(scenario, catalog) if "speaks" in p.message] == []
