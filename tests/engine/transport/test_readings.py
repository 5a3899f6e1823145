"""The readings of NVIDIA's DCQCN registers: what each makes of the catalog's profile, and how a
scenario chooses one (engine.transport.readings)."""

from __future__ import annotations

import math

import pytest

from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.model.transport_checks import check_transport
from engine.presets.scenarios import load_preset
from engine.transport.defaults import dcqcn_params
from engine.transport.from_scenario import scenario_transport_config
from engine.transport.readings import DcqcnReadings


def test_the_default_readings_are_the_profile_s(catalog):
    d = dcqcn_params(catalog, "dcqcn-nvidia")
    assert d.alpha_gain == 5 / 1024  # DCE_TCP_G 1019 as the retention of the average
    assert d.byte_counter_bytes == 32767  # RPG_BYTE_RESET in bytes


def test_each_reading_of_the_registers(catalog):
    gain = dcqcn_params(catalog, "dcqcn-nvidia", DcqcnReadings(g_reading="gain"))
    assert gain.alpha_gain == 1019 / 1024
    wide = dcqcn_params(catalog, "dcqcn-nvidia", DcqcnReadings(byte_unit_bytes=64.0))
    assert wide.byte_counter_bytes == 32767 * 64
    none = dcqcn_params(catalog, "dcqcn-nvidia", DcqcnReadings(byte_counter=False))
    assert math.isinf(none.byte_counter_bytes)
    retune = dcqcn_params(catalog, "dcqcn-barre-retune", DcqcnReadings(g_reading="gain"))
    assert retune.alpha_gain == 1019 / 1024  # the retune keeps the register


def test_the_paper_s_profile_states_its_constants_and_ignores_the_readings(catalog):
    readings = DcqcnReadings(g_reading="gain", byte_unit_bytes=64.0)
    paper = dcqcn_params(catalog, "dcqcn-paper", readings)
    assert paper.alpha_gain == 1 / 256
    assert paper.byte_counter_bytes == dcqcn_params(catalog, "dcqcn-paper").byte_counter_bytes


def test_a_scenario_chooses_its_readings(catalog):
    scenario = load_preset("hgx-h100-roce-ecmp-1k")
    for path, value in (
        ("transport.dcqcn_g_reading", "gain"),
        ("transport.dcqcn_byte_unit_bytes", "64"),
    ):
        scenario = apply_override(scenario, path, value)
    d = scenario_transport_config(scenario, catalog).dcqcn
    assert d.alpha_gain == 1019 / 1024 and d.byte_counter_bytes == 32767 * 64


def test_a_reading_that_does_not_exist_or_sits_on_infiniband_is_refused(catalog):
    roce = load_preset("hgx-h100-roce-ecmp-1k")
    roce.transport.dcqcn_g_reading = "weight"
    assert [p.field for p in check_transport(roce, catalog)] == ["dcqcn_g_reading"]
    roce.transport.dcqcn_g_reading = None
    roce.transport.dcqcn_byte_unit_bytes = 0.5
    assert [p.field for p in check_transport(roce, catalog)] == ["dcqcn_byte_unit_bytes"]
    ib = load_preset("dgx-h100-ib-ndr-1k")
    ib.transport.dcqcn_byte_counter = False
    problems = check_transport(ib, catalog)
    assert [p.field for p in problems] == ["dcqcn_byte_counter"]
    assert "RoCE setting" in problems[0].message


def test_the_override_is_refused_by_name_when_it_does_not_parse():
    with pytest.raises(ScenarioError, match="dcqcn_byte_unit_bytes"):
        apply_override(load_preset("hgx-h100-roce-ecmp-1k"), "transport.dcqcn_byte_unit_bytes", "x")


def test_per_port_pacing_shares_a_port_s_cnps_among_the_flows_it_receives(catalog):
    from dataclasses import replace

    from engine.transport.tables import cnp_dead_time
    from engine.transport.workloads import incast, switch_spec

    d = dcqcn_params(catalog, "dcqcn-nvidia")
    assert d.cnp_pacing == "flow"  # the catalog's default, the paper's reading
    network = incast(8, switch_spec(catalog, "sn5600", 400), 1e6)
    per_flow = cnp_dead_time(network.classes, d)
    per_port = cnp_dead_time(network.classes, replace(d, cnp_pacing="port"))
    assert per_flow == pytest.approx([4e-6] * 8)  # the decrease period and the CNP interval
    assert per_port == pytest.approx([8 * 4e-6] * 8)  # one CNP per 4 us for 8 flows
    scenario = apply_override(
        load_preset("hgx-h100-roce-ecmp-1k"), "transport.dcqcn_cnp_pacing", "port"
    )
    assert scenario_transport_config(scenario, catalog).dcqcn.cnp_pacing == "port"
    scenario.transport.dcqcn_cnp_pacing = "per-qp"
    assert [p.field for p in check_transport(scenario, catalog)] == ["dcqcn_cnp_pacing"]
