"""Spraying needs NICs that reorder; multi-vendor only names every single-source part."""

from __future__ import annotations

import dataclasses
import json

import pytest

from engine.catalog.devices import default_catalog, parse_catalog
from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.model.validation import check_structure
from engine.presets.scenarios import load_preset
from engine.runtime.resources import resource_path
from engine.topology.expand import expand
from engine.topology.generators import rail_optimized


def _roce(server: str, mode: str):
    scenario = rail_optimized(256, server, "th5-51t", speed_gbps=400)
    return apply_override(scenario, "routing.mode", mode)


def test_spraying_on_a_nic_without_reordering_is_refused_naming_group_and_nic():
    problems = check_structure(_roce("hgx-h100-thor2", "spray"), default_catalog())
    assert len(problems) == 1
    p = problems[0]
    assert (p.where, p.field) == ("routing", "mode")
    assert "thor2-400g" in p.message and "servers" in p.message
    with pytest.raises(ScenarioError, match="reorder"):
        expand(_roce("hgx-h100-thor2", "spray"))


@pytest.mark.parametrize(
    ("server", "mode"),
    [("hgx-h100-thor2", "ecmp"), ("hgx-h100-thor2", "adaptive"), ("hgx-h100", "spray")],
)
def test_an_in_order_nic_with_one_path_per_flow_or_a_reordering_nic_is_fine(server, mode):
    assert check_structure(_roce(server, mode), default_catalog()) == []


def test_spraying_on_a_reordering_nic_lifts_the_permutation_throughput_over_ecmp():
    from engine.analysis.evaluation import permutation_test

    ecmp = permutation_test(expand(_roce("hgx-h100", "ecmp")))["throughput_fraction"]["min"]
    spray = permutation_test(expand(_roce("hgx-h100", "spray")))["throughput_fraction"]["min"]
    assert spray > ecmp


def _multi_vendor(name: str):
    scenario = load_preset(name)
    return dataclasses.replace(
        scenario, constraints=dataclasses.replace(scenario.constraints, multi_vendor_only=True)
    )


def test_multi_vendor_only_names_every_single_source_part_of_an_infiniband_fabric():
    problems = check_structure(_multi_vendor("dgx-h100-ib-ndr-1k"), default_catalog())
    named = {(p.where, p.field) for p in problems}
    groups = {g.id: g for g in load_preset("dgx-h100-ib-ndr-1k").groups}
    expected = {(f"groups[{gid}]", "model") for gid in groups}
    assert named == expected
    assert all("single source" in p.message for p in problems)
    assert any("connectx-7" in p.message for p in problems)


def test_multi_vendor_only_accepts_a_fabric_of_second_sourced_parts():
    assert check_structure(_multi_vendor("hgx-h100-roce-ecmp-1k"), default_catalog()) == []
    # without the constraint, the single-source fabric is valid as before
    assert check_structure(load_preset("dgx-h100-ib-ndr-1k"), default_catalog()) == []


def test_multi_vendor_only_names_a_part_the_catalog_has_no_supply_data_for():
    data = json.loads(resource_path("catalog.json").read_text(encoding="utf-8"))
    del data["supply"]["th5-51t"]
    problems = check_structure(_multi_vendor("hgx-h100-roce-ecmp-1k"), parse_catalog(data))
    assert problems and all("no supply data for th5-51t" in p.message for p in problems)


def test_the_constraint_is_set_by_its_dotted_path():
    scenario = apply_override(
        load_preset("dgx-h100-ib-ndr-1k"), "constraints.multi_vendor_only", "true"
    )
    assert scenario.constraints.multi_vendor_only is True
