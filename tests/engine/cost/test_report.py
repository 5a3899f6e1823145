"""Cost: money and power follow the bill of materials, with their sources."""

from __future__ import annotations

import copy
import json
import math
import time

import pytest

from engine.catalog.devices import parse_catalog
from engine.cost.bom import bill_of_materials
from engine.cost.report import cost_report
from engine.model.errors import ScenarioError
from engine.presets.scenarios import load_preset, preset_names
from engine.runtime.resources import resource_path
from engine.topology.expand import expand
from tests.engine.cost.test_bom import IB_1K, _fabric, _lines


@pytest.mark.parametrize("name", preset_names())
def test_capex_is_the_sum_of_the_lines_and_cost_per_gpu_divides_it(name, catalog):
    fabric = _fabric(name, catalog)
    report = cost_report(fabric, catalog)
    lines = report["bom"]
    assert report["capex_usd"] == pytest.approx(
        sum(ln["count"] * ln["unit_price_usd"] for ln in lines)
    )
    assert report["network_capex_usd"] == pytest.approx(
        sum(ln["price_usd"] for ln in lines if ln["network"])
    )
    assert report["power_w"] == pytest.approx(sum(ln["power_w"] for ln in lines))
    assert report["cost_per_gpu_usd"] == pytest.approx(report["capex_usd"] / fabric.n_gpus)
    assert report["network_share"] == pytest.approx(
        report["network_capex_usd"] / report["capex_usd"]
    )
    assert report["tco_usd"] == pytest.approx(report["capex_usd"] + report["opex_usd"])
    json.dumps(report)  # JSON-ready as it is


def test_servers_carry_gpus_and_nics_in_their_price(catalog):
    bom = bill_of_materials(_fabric(IB_1K, catalog), catalog)
    (server,) = _lines(bom, "server")
    (nic,) = _lines(bom, "nic")
    assert server.unit_price_usd == catalog.get("dgx-h100").value("price_usd")
    assert not server.network
    assert nic.count == 1024 and nic.unit_price_usd == 0 and nic.unit_power_w == 0
    assert "price_includes_nics" in nic.provenance


def test_nics_priced_outside_the_server_are_network_capex():
    data = json.loads(resource_path("catalog.json").read_text(encoding="utf-8"))
    dgx = next(d for d in data["devices"] if d["id"] == "dgx-h100")
    dgx["fields"]["price_includes_nics"]["value"] = False
    cat = parse_catalog(data)
    fabric = expand(load_preset(IB_1K), cat)
    bom = bill_of_materials(fabric, cat)
    (nic,) = _lines(bom, "nic")
    assert nic.unit_price_usd == cat.get("connectx-7").value("price_usd")
    assert nic.network and nic.unit_power_w > 0
    included = cost_report(expand(load_preset(IB_1K)), None)
    separate = cost_report(fabric, cat)
    assert separate["network_capex_usd"] - included["network_capex_usd"] == pytest.approx(
        nic.price_usd
    )


def test_group_overrides_of_price_and_power_are_used(catalog):
    fabric = _fabric(IB_1K, catalog, ("groups.spine.overrides.price_usd", "36000"))
    bom = bill_of_materials(fabric, catalog)
    spine = next(ln for ln in bom if ln.kind == "switch" and ln.tier == "spine")
    assert spine.unit_price_usd == 36000
    assert "group override" in spine.provenance


def test_opex_is_linear_in_years_price_and_pue(catalog):
    fabric = _fabric(IB_1K, catalog)
    base = cost_report(fabric, catalog, years=1.0, usd_per_kwh=0.1, pue=1.2)
    assert cost_report(fabric, catalog, years=3.0, usd_per_kwh=0.1, pue=1.2)[
        "opex_usd"
    ] == pytest.approx(3 * base["opex_usd"])
    assert cost_report(fabric, catalog, years=1.0, usd_per_kwh=0.25, pue=1.2)[
        "opex_usd"
    ] == pytest.approx(2.5 * base["opex_usd"])
    assert cost_report(fabric, catalog, years=1.0, usd_per_kwh=0.1, pue=1.5)[
        "opex_usd"
    ] == pytest.approx(1.25 * base["opex_usd"])
    assert cost_report(fabric, catalog, years=0.0)["opex_usd"] == 0
    # 1 year of the cluster's power at PUE 1.2 and 0.1 USD/kWh.
    assert base["opex_usd"] == pytest.approx(base["power_w"] / 1e3 * 8766 * 1.2 * 0.1)


def test_energy_defaults_come_from_the_catalog_with_sources(catalog):
    report = cost_report(_fabric(IB_1K, catalog), catalog)
    dc = catalog.technology("datacenter")
    assert report["usd_per_kwh"] == dc.value("usd_per_kwh") == 0.078
    assert report["pue"] == dc.value("pue")
    site = {s["catalog_id"]: s["provenance"] for s in report["sources"]}
    assert "semianalysis.com" in site["datacenter.usd_per_kwh"]
    assert "uptimeinstitute.com" in site["datacenter.pue"]


def test_every_line_traces_to_catalog_sources(catalog):
    fabric = _fabric("h100-ib-ndr-16k", catalog)
    report = cost_report(fabric, catalog)
    assert len(report["sources"]) == len(report["bom"]) + 2
    for line in report["bom"]:
        assert line["catalog_id"] in line["provenance"]
        assert "http" in line["provenance"] or "assumption" in line["provenance"]
    assert str(report["bom"][0]["count"]) in report["derivation"]["capex_usd"]


def test_cost_per_unit_of_performance(catalog):
    fabric = _fabric(IB_1K, catalog)
    report = cost_report(fabric, catalog, busbw_GBps=200.0, tokens_per_s=5e5)
    assert report["usd_per_busbw_GBps"] == pytest.approx(report["capex_usd"] / 200.0)
    assert report["network_usd_per_busbw_GBps"] == pytest.approx(
        report["network_capex_usd"] / 200.0
    )
    assert report["usd_per_token_per_s"] == pytest.approx(report["capex_usd"] / 5e5)
    bare = cost_report(fabric, catalog, busbw_GBps=0.0)
    assert bare["usd_per_busbw_GBps"] is None and bare["usd_per_token_per_s"] is None


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("years", -1.0),
        ("years", math.nan),
        ("usd_per_kwh", -0.05),
        ("usd_per_kwh", "cheap"),
        ("pue", 0.9),
        ("busbw_GBps", -3.0),
        ("tokens_per_s", math.inf),
    ],
)
def test_bad_inputs_raise_a_scenario_error_naming_the_argument(argument, value, catalog):
    fabric = _fabric(IB_1K, catalog)
    with pytest.raises(ScenarioError, match=argument) as err:
        cost_report(fabric, catalog, **{argument: value})
    assert err.value.problems[0].field == argument


def test_the_report_leaves_the_fabric_untouched(catalog):
    fabric = _fabric(IB_1K, catalog)
    before = copy.deepcopy(fabric.scenario)
    cost_report(fabric, catalog)
    assert fabric.scenario == before


def test_the_128k_preset_costs_in_well_under_a_second(catalog):
    fabric = _fabric("h100-roce-128k", catalog)
    t0 = time.perf_counter()
    report = cost_report(fabric, catalog)
    elapsed = time.perf_counter() - t0
    assert report["gpus"] == 131072
    assert elapsed < 0.25, f"cost_report took {elapsed:.3f} s"
