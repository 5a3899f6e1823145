"""Vendor concentration beside the price, and the host cores NIC offload saves."""

from __future__ import annotations

import json

import pytest

from engine.catalog.devices import default_catalog, parse_catalog
from engine.cost.report import cost_report
from engine.presets.scenarios import load_preset
from engine.runtime.resources import resource_path
from engine.topology.expand import expand
from engine.topology.generators import single_switch


def _shipped():
    return json.loads(resource_path("catalog.json").read_text(encoding="utf-8"))


def test_an_all_nvidia_single_switch_cluster_has_one_vendor_and_closed_form_shares():
    cat = default_catalog()
    fabric = expand(single_switch(16, "dgx-h100", "qm9700"), cat)
    report = cost_report(fabric, cat)
    supply = report["supply"]
    server = cat.get("dgx-h100").value("price_usd")
    switch = cat.get("qm9700").value("price_usd")
    capex = report["capex_usd"]
    # 2 servers and 1 switch have no second source; the 16 DACs have several.
    assert [v["vendor"] for v in supply["by_vendor"]] == ["NVIDIA"]
    assert supply["top_vendor_share"] == pytest.approx(1.0)
    assert supply["single_source_share"] == pytest.approx((2 * server + switch) / capex)
    network = report["network_capex_usd"]
    assert supply["network_single_source_share"] == pytest.approx(switch / network)
    assert supply["single_source_parts"] == ["connectx-7", "dgx-h100", "qm9700"]
    assert supply["missing_supply"] == [] and supply["notes"] == []


def test_shares_per_vendor_add_up_to_the_capex():
    cat = default_catalog()
    report = cost_report(expand(load_preset("hgx-h100-roce-ecmp-1k"), cat), cat)
    rows = report["supply"]["by_vendor"]
    assert sum(r["capex_usd"] for r in rows) == pytest.approx(report["capex_usd"])
    assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    assert rows == sorted(rows, key=lambda r: -r["capex_usd"])
    network = report["supply"]["network_by_vendor"]
    assert sum(r["capex_usd"] for r in network) == pytest.approx(report["network_capex_usd"])


def test_an_infiniband_network_is_more_single_sourced_than_an_ethernet_one():
    cat = default_catalog()
    ib = cost_report(expand(load_preset("dgx-h100-ib-ndr-1k"), cat), cat)["supply"]
    roce = cost_report(expand(load_preset("hgx-h100-roce-ecmp-1k"), cat), cat)["supply"]
    assert ib["network_single_source_share"] > roce["network_single_source_share"]
    assert ib["network_open_standard_share"] < roce["network_open_standard_share"]


def test_a_part_without_supply_data_is_a_note_not_a_crash():
    data = _shipped()
    del data["supply"]["qm9700"]
    cat = parse_catalog(data)
    report = cost_report(expand(single_switch(16, "dgx-h100", "qm9700"), cat), cat)
    supply = report["supply"]
    assert supply["missing_supply"] == ["qm9700"]
    assert "qm9700" in supply["notes"][0]
    line = next(b for b in report["bom"] if b["catalog_id"] == "qm9700")
    assert line["vendor"] == "NVIDIA" and line["second_sources"] is None


def test_host_cores_saved_are_the_nics_times_the_cores_each_offloads():
    data = _shipped()
    cx7 = next(d for d in data["devices"] if d["id"] == "connectx-7")
    cx7["fields"]["host_cores_saved"]["value"] = 6
    cat = parse_catalog(data)
    fabric = expand(single_switch(16, "hgx-h100", "qm9700"), cat)
    assert cost_report(fabric, cat)["host_cores_saved"] == 2 * 8 * 6
    # the shipped baseline: RDMA already offloaded, no further cores saved
    base = default_catalog()
    assert (
        cost_report(expand(single_switch(16, "hgx-h100", "qm9700"), base), base)["host_cores_saved"]
        == 0
    )
    # a DPU offloads more than the SuperNIC of the same silicon
    dpu, supernic = base.get("bluefield-3-dpu"), base.get("bluefield-3-b3140h")
    assert dpu.value("host_cores_saved") > supernic.value("host_cores_saved")
