"""Bill of materials: counts follow the expanded fabric, cables and optics follow the length."""

from __future__ import annotations

import numpy as np
import pytest

from engine.cost.bom import bill_of_materials
from engine.cost.bundle_ends import member_degrees
from engine.cost.report import cost_report
from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import DeviceGroup, LinkBundle, LinkFailure, Scenario
from engine.presets.scenarios import load_preset, preset_names
from engine.topology import generators as gen
from engine.topology.expand import expand, wire_bundle
from tests.engine.topology.test_topology import SUPERPOD_TABLE

# NVIDIA's DGX SuperPOD reference-architecture table, with its citation, lives in test_topology.
IB_1K = "dgx-h100-ib-ndr-1k"


def _fabric(name: str, catalog, *overrides: tuple[str, str]):
    scenario = load_preset(name)
    for path, value in overrides:
        scenario = apply_override(scenario, path, value)
    return expand(scenario, catalog)


def _switches_by_tier(bom) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in bom:
        if line.kind == "switch":
            counts[line.tier] = counts.get(line.tier, 0) + line.count
    return counts


def _links_by_tier(bom) -> dict[str, int]:
    """Links per tier pair: one DAC/AOC or one fiber cord per single-link cable."""
    counts: dict[str, int] = {}
    for line in bom:
        if line.kind in ("cable", "fiber"):
            counts[line.tier] = counts.get(line.tier, 0) + line.count
    return counts


def _lines(bom, kind: str, tier: str | None = None):
    return [ln for ln in bom if ln.kind == kind and (tier is None or ln.tier == tier)]


# --- counts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", preset_names())
def test_bom_counts_equal_the_expanded_fabric(name, catalog):
    fabric = _fabric(name, catalog)
    s = fabric.scenario
    bom = bill_of_materials(fabric, catalog)
    expected_switches: dict[str, int] = {}
    expected_links: dict[str, int] = {}
    # the compute fabric, and a storage network's on lines whose tier says "storage"
    for net, prefix in ((fabric, ""), (fabric.storage, "storage ")):
        if net is None:
            continue
        for g in net.scenario.groups:
            if g.kind == "switch":
                tier = prefix + g.tier
                expected_switches[tier] = expected_switches.get(tier, 0) + g.count
        for b, n in zip(net.scenario.bundles, net.bundle_cables, strict=True):
            tier = f"{prefix}{net.scenario.group(b.a).tier}->{net.scenario.group(b.b).tier}"
            expected_links[tier] = expected_links.get(tier, 0) + int(n)
    assert _switches_by_tier(bom) == expected_switches
    assert _links_by_tier(bom) == expected_links
    assert sum(ln.count for ln in _lines(bom, "server")) == fabric.n_servers
    nodes = 0 if fabric.storage is None else fabric.storage.n_servers - fabric.n_servers
    assert sum(ln.count for ln in _lines(bom, "storage")) == nodes
    nics = sum(ln.count for ln in _lines(bom, "nic"))
    assert nics == sum(
        g.count * catalog.get(g.model, "server").value("nics_per_server")
        for g in s.groups
        if g.kind == "server"
    )


@pytest.mark.parametrize("row", SUPERPOD_TABLE, ids=lambda r: f"{r[0]}SU")
def test_bom_matches_the_superpod_reference_architecture(row, catalog):
    _sus, nodes, gpus, leaf, spine, core, node_leaf, leaf_spine, spine_core = row
    fabric = expand(gen.rail_optimized(gpus, "dgx-h100", "qm9700", catalog=catalog), catalog)
    bom = bill_of_materials(fabric, catalog)
    assert sum(ln.count for ln in _lines(bom, "server")) == nodes
    switches = _switches_by_tier(bom)
    assert switches == ({"leaf": leaf, "spine": spine} | ({"core": core} if core else {}))
    links = _links_by_tier(bom)
    assert links["server->leaf"] == node_leaf
    assert links["leaf->spine"] == leaf_spine
    assert links.get("spine->core", 0) == spine_core


def test_per_member_degrees_equal_the_wiring(catalog):
    """The analytic per-switch counts agree with counting the expanded wiring, odd sizes too."""
    cases = [
        (LinkBundle("x", "a", "b", "full", blocks=3, links_per_pair=2), 10, 6, 0, 0),
        (LinkBundle("x", "a", "b", "full", blocks=1), 7, 5, 0, 0),
        (LinkBundle("x", "a", "b", "striped", blocks=4, links_per_pair=3), 10, 8, 0, 0),
        (LinkBundle("x", "a", "b", "one-to-one"), 9, 9, 0, 0),
        (LinkBundle("x", "a", "b", "rail"), 5 * 8, 16, 8, 5),
        (LinkBundle("x", "a", "b", "rail", links_per_pair=2), 33 * 8, 16, 8, 33),
    ]
    for bundle, n_a, n_b, rails, servers in cases:
        deg_a, deg_b = member_degrees(bundle, n_a, n_b, rails, servers)
        wiring = wire_bundle(bundle, n_a, n_b, rails, servers)
        np.testing.assert_array_equal(deg_a, np.bincount(wiring.a, minlength=n_a))
        np.testing.assert_array_equal(deg_b, np.bincount(wiring.b, minlength=n_b))


def test_twin_port_switch_ports_take_one_module_per_two_ports(catalog):
    # 3 HGX servers on one TH5 leaf per rail: 3 ports per leaf -> ceil(3/2) = 2 modules each.
    scenario = Scenario(
        groups=[
            DeviceGroup("servers", "server", "hgx-h100", 3, "server"),
            DeviceGroup("leaf", "switch", "th5-51t", 8, "leaf"),
        ],
        bundles=[LinkBundle("servers-leaf", "servers", "leaf", "rail", length_m=40.0)],
    )
    scenario.fabric.technology = "roce"
    bom = bill_of_materials(expand(scenario, catalog), catalog)
    modules = {ln.item.rsplit(" at the ", 1)[1]: ln for ln in _lines(bom, "transceiver")}
    assert modules["leaf end"].count == 8 * 2
    assert modules["leaf end"].catalog_id == "xcvr-800g-osfp-2xsr4"  # twin-port 2x400G
    assert modules["server end"].count == 24  # one single-port module per NIC
    assert modules["server end"].catalog_id == "xcvr-400g-osfp-sr4"
    assert _lines(bom, "fiber")[0].count == 24


def test_qsfp112_nics_take_qsfp112_modules(catalog):
    fabric = _fabric("dgx-h100-roce-spectrumx-1k", catalog, ("bundles.servers-leaf.length_m", "80"))
    bom = bill_of_materials(fabric, catalog)
    server_end = [ln for ln in _lines(bom, "transceiver") if ln.item.endswith("server end")]
    assert [ln.catalog_id for ln in server_end] == ["xcvr-400g-qsfp112-dr4"]
    assert server_end[0].count == 1024


def test_failed_cables_and_switches_still_count(catalog):
    scenario = load_preset(IB_1K)
    healthy = bill_of_materials(expand(scenario, catalog), catalog)
    scenario.failures.links.append(LinkFailure("leaf-spine", 100))
    failed = bill_of_materials(expand(scenario, catalog), catalog)
    assert [ln.to_dict() for ln in failed] == [ln.to_dict() for ln in healthy]


# --- cable choice by length -------------------------------------------------------------------


def test_a_longer_bundle_moves_from_dac_to_aoc_to_optics_and_costs_more(catalog):
    kinds, capex = [], []
    for length in ("3", "10", "40", "80"):
        fabric = _fabric(IB_1K, catalog, ("bundles.servers-leaf.length_m", length))
        report = cost_report(fabric, catalog)
        bom = bill_of_materials(fabric, catalog)
        kinds.append(
            sorted({ln.kind for ln in bom if ln.tier == "server->leaf" and ln.kind != "nic"})
        )
        media = {ln.catalog_id for ln in _lines(bom, "fiber", "server->leaf")}
        kinds[-1].append(",".join(sorted(media)))
        capex.append(report["network_capex_usd"])
    assert kinds == [
        ["cable", ""],
        ["cable", ""],
        ["fiber", "transceiver", "fiber-mmf"],  # 40 m: within multimode reach
        ["fiber", "transceiver", "fiber-smf"],  # 80 m: beyond it, single-mode
    ]
    dac = _lines(bill_of_materials(_fabric(IB_1K, catalog), catalog), "cable", "server->leaf")
    assert dac[0].catalog_id == "dac-400g"
    assert capex == sorted(capex) and len(set(capex)) == 4


def test_power_with_optics_exceeds_power_without(catalog):
    copper = cost_report(_fabric(IB_1K, catalog), catalog)
    optics = cost_report(_fabric(IB_1K, catalog, ("bundles.servers-leaf.length_m", "80")), catalog)
    assert optics["network_power_w"] > copper["network_power_w"]
    assert optics["power_w"] > copper["power_w"]


def test_explicit_cable_ids_are_honored(catalog):
    def leaf_spine(cable: str, length: str):
        fabric = _fabric(
            IB_1K,
            catalog,
            ("bundles.leaf-spine.cable", cable),
            ("bundles.leaf-spine.length_m", length),
        )
        return [ln for ln in bill_of_materials(fabric, catalog) if ln.tier == "leaf->spine"]

    twin = leaf_spine("xcvr-800g-osfp-2xdr4", "30")
    assert {(ln.catalog_id, ln.count) for ln in _lines(twin, "transceiver")} == {
        ("xcvr-800g-osfp-2xdr4", 512)
    }
    assert _lines(twin, "fiber")[0].catalog_id == "fiber-smf"
    single = leaf_spine("xcvr-400g-osfp-dr4", "30")
    assert sum(ln.count for ln in _lines(single, "transceiver")) == 2 * 1024
    copper = leaf_spine("dac-800g-2x400", "2")
    assert [(ln.catalog_id, ln.count) for ln in copper] == [("dac-800g-2x400", 512)]
    mmf = leaf_spine("fiber-mmf", "30")
    assert {ln.catalog_id for ln in _lines(mmf, "transceiver")} == {"xcvr-800g-osfp-2xsr4"}


def test_a_bundle_beyond_every_optic_is_named(catalog):
    fabric = _fabric(IB_1K, catalog, ("bundles.servers-leaf.length_m", "2000"))
    with pytest.raises(ScenarioError, match=r"bundles\[servers-leaf\]") as err:
        bill_of_materials(fabric, catalog)
    assert err.value.problems[0].field == "cable"
