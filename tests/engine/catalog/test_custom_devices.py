"""User-defined devices: checked like the shipped ones, merged per scenario, saved with it."""

from __future__ import annotations

import json
import math

import pytest

from engine.analysis import cost_run, evaluate, fabric_size, open_library, sweep
from engine.catalog.custom import (
    DeviceEntryError,
    merge_devices,
    read_user_catalog,
    user_catalog_path,
    write_user_catalog,
)
from engine.catalog.devices import default_catalog
from engine.catalog.errors import CatalogError
from engine.catalog.schema import check_device
from engine.model.catalogs import scenario_catalog
from engine.model.devices import CustomDevice
from engine.model.errors import ScenarioError
from engine.model.scenario import (
    DeviceGroup,
    LinkBundle,
    Metadata,
    Scenario,
    Workload,
    from_json,
    to_json,
)
from engine.model.validation import check_structure

HOST_PRICE = 41_000.0
SWITCH_PRICE = 9_000.0


def _host(**fields) -> CustomDevice:
    return CustomDevice(
        id="host-1x400",
        kind="server",
        name="1-GPU host",
        based_on="dgx-h100",
        note="a packet simulator's host",
        fields={"gpus_per_server": 1, "nics_per_server": 1, "price_usd": HOST_PRICE, **fields},
    )


def _switch(latency_ns: float = 300.0) -> CustomDevice:
    return CustomDevice(
        id="tor-8",
        kind="switch",
        name="8-port ToR",
        based_on="qm9700",
        fields={"port_modes": {"400": 8}, "latency_ns": latency_ns, "price_usd": SWITCH_PRICE},
    )


def _scenario(hosts: int = 8, latency_ns: float = 300.0) -> Scenario:
    return Scenario(
        metadata=Metadata(name="custom"),
        groups=[
            DeviceGroup("hosts", "server", "host-1x400", hosts, "server"),
            DeviceGroup("tor", "switch", "tor-8", 1, "leaf"),
        ],
        bundles=[LinkBundle("hosts-tor", "hosts", "tor", "full", speed_gbps=400.0)],
        workload=Workload(kind="permutation"),
        devices=[_host(), _switch(latency_ns)],
    )


def test_every_shipped_server_switch_and_nic_passes_the_check_custom_ones_get():
    catalog = default_catalog()
    kinds = {d.id: d.kind for d in catalog.devices.values()}
    checked = 0
    for device in catalog.devices.values():
        if device.kind in ("server", "switch", "nic"):
            values = {name: fig.value for name, fig in device.fields.items()}
            check_device(device.id, device.kind, values, kinds)
            checked += 1
    assert checked == len([d for d in catalog.devices.values() if d.kind != "gpu"]) - len(
        catalog.of_kind("cable") + catalog.of_kind("transceiver") + catalog.of_kind("storage")
    )


def test_a_scenario_with_its_own_devices_round_trips_through_json_and_the_library(tmp_path):
    scenario = _scenario()
    assert from_json(to_json(scenario)) == scenario
    library = open_library(tmp_path / "shared.fabriclab")
    try:
        library.save(scenario)
        loaded = library.load("custom")
    finally:
        library.close()
    assert loaded == scenario
    assert loaded.devices[0].fields["gpus_per_server"] == 1
    assert check_structure(loaded, default_catalog()) == []


def test_the_merge_is_per_scenario_and_marks_the_devices_user_defined():
    shipped = default_catalog()
    merged = scenario_catalog(_scenario(), shipped)
    host = merged.get("host-1x400", "server")
    assert host.user_defined and not merged.get("dgx-h100").user_defined
    assert "host-1x400" not in shipped.devices  # the shipped catalog is untouched
    assert host.value("gpus_per_server") == 1
    # unset fields come from the entry it is based on, with their sources
    assert host.fields["nvlink_bw_GBps"] is shipped.get("dgx-h100").fields["nvlink_bw_GBps"]
    assert host.fields["price_usd"].assumption.startswith("user-defined")
    assert scenario_catalog(_scenario(), merged) is merged  # asking again on the way down
    assert scenario_catalog(Scenario(), merged) is shipped  # another scenario: none of them


def test_the_engine_expands_costs_and_times_a_fabric_of_user_defined_devices():
    hosts = 6
    scenario = _scenario(hosts)
    assert fabric_size(scenario, default_catalog())["gpus"] == hosts
    report = cost_run(scenario, default_catalog())
    rows = {row.kind: row for row in report.bom}
    assert rows["server"].count == hosts
    assert rows["server"].unit_price_usd == HOST_PRICE
    assert "[user-defined]" in rows["server"].item
    assert rows["switch"].unit_price_usd == SWITCH_PRICE and "[user-defined]" in rows["switch"].item
    assert "assumption: user-defined" in rows["switch"].provenance


def test_a_custom_switch_latency_reaches_the_paths_and_no_cache_mixes_two_scenarios():
    # every permutation flow crosses the one ToR once, so its path grows by the latency added
    runs = [
        evaluate(_scenario(8, latency), default_catalog(), parts=("permutation",))
        for latency in (300.0, 1300.0, 300.0)
    ]
    means = [r.permutation.mean_path_latency_s for r in runs]
    assert math.isclose(means[1] - means[0], 1e-6, rel_tol=1e-9)
    assert means[2] == means[0]


@pytest.mark.parametrize(
    ("device", "field", "words"),
    [
        (_host(gpus_per_server=0), "gpus_per_server", "whole number of at least 1"),
        (_host(nic="no-such-nic"), "nic", "catalog NIC"),
        (_host(nic_port_gbps=float("inf")), None, "past"),
        (CustomDevice("x", "server", fields={"gpus_per_server": 1}), "gpu", "missing"),
        (CustomDevice("dgx-h100", "server", based_on="dgx-h100"), "id", "catalog device"),
        (CustomDevice("x", "switch", based_on="dgx-h100"), "based_on", "no switch"),
        (CustomDevice("x", "gpu"), "kind", "may define"),
        (
            CustomDevice("x", "nic", based_on="connectx-7", technology="token-ring"),
            "technology",
            "use",
        ),
    ],
)
def test_a_bad_entry_is_a_problem_naming_the_entry_and_the_field(device, field, words):
    scenario = _scenario()
    scenario.devices = [device, *scenario.devices]
    problems = check_structure(scenario, default_catalog())
    assert len(problems) == 1
    assert problems[0].where.startswith("devices[0]")
    assert problems[0].field == field
    assert words in problems[0].message
    with pytest.raises(ScenarioError):
        evaluate(scenario, default_catalog(), parts=("permutation",))


def test_a_non_finite_figure_in_a_scenario_file_is_refused_with_its_path():
    data = json.loads(to_json(_scenario()))
    data["devices"][0]["fields"]["price_usd"] = 1e400
    with pytest.raises(ScenarioError) as err:
        from_json(json.dumps(data).replace("1e400", "Infinity"))
    assert "devices[0].fields.price_usd" in str(err.value)


def test_a_user_catalog_beside_the_library_round_trips_and_is_checked(tmp_path):
    path = user_catalog_path(tmp_path / "library.fabriclab")
    assert path.parent == tmp_path
    assert read_user_catalog(path, default_catalog()) == []  # none yet
    entries = [_host().entry(), _switch().entry()]
    write_user_catalog(path, entries)
    assert read_user_catalog(path, default_catalog()) == entries
    write_user_catalog(path, [_host(nics_per_server=-1).entry()])
    with pytest.raises(CatalogError, match="nics_per_server"):
        read_user_catalog(path, default_catalog())


def test_two_entries_with_one_id_are_refused():
    with pytest.raises(DeviceEntryError) as err:
        merge_devices(default_catalog(), [_host().entry(), _host().entry()])
    assert err.value.index == 1 and err.value.field == "id"


def test_a_sweep_runs_every_metric_family_on_user_defined_devices():
    scenario = _scenario(4)
    capex = sweep(scenario, [("groups.hosts.count", ["4", "6"])], "capex_usd")
    assert capex.errors == {}
    for count, value in zip((4, 6), capex.results, strict=True):
        assert value == cost_run(_scenario(count), default_catalog()).capex_usd
    # two more hosts add two host prices and their cables: at least the hosts themselves
    assert capex.results[1] - capex.results[0] >= 2 * HOST_PRICE
    flows = sweep(scenario, [("fabric.switch_latency_ns", ["300", "900"])], "busbw_GBps")
    assert flows.errors == {} and all(v > 0 for v in flows.results)
    perm = sweep(scenario, [("routing.seed", ["0", "1"])], "permutation_mean_throughput")
    assert perm.errors == {} and all(0 < v <= 1.0 + 1e-9 for v in perm.results)
