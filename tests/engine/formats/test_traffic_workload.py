"""A traffic matrix as a workload: validated flow by flow, kept through the scenario JSON,
run by the flow test and the transport study, and written by the exporters."""

from __future__ import annotations

import copy

import pytest

from engine.analysis import TransportWorkload, evaluate, generate, transport_study
from engine.formats import htsim, ns3
from engine.formats.export import export_texts
from engine.model.errors import ScenarioError
from engine.model.scenario import from_json, to_json
from engine.model.traffic import TrafficFlow
from engine.model.validation import check_structure


@pytest.fixture(scope="module")
def small():
    return generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700")


def _with(scenario, flows):
    s = copy.deepcopy(scenario)
    s.workload.kind = "traffic"
    s.workload.matrix = flows
    return s


def test_matrix_round_trips_through_json(small):
    s = _with(small, [TrafficFlow(0, 8, 1e6), TrafficFlow(9, 1, 4096.0, 1e-6)])
    back = from_json(to_json(s))
    assert back == s and back.workload.matrix[1].start_s == 1e-6


def test_each_flow_is_checked_by_name(small, catalog):
    s = _with(small, [TrafficFlow(0, 0, 10.0), TrafficFlow(1, 2, 0.0), TrafficFlow(-1, 2, 5.0)])
    problems = {(p.where, p.field) for p in check_structure(s, catalog)}
    assert ("workload.matrix[0]", "dst") in problems
    assert ("workload.matrix[1]", "bytes") in problems
    assert ("workload.matrix[2]", None) in problems
    empty = _with(small, [])
    assert ("workload", "matrix") in {(p.where, p.field) for p in check_structure(empty, catalog)}


def test_a_gpu_past_the_fabric_is_refused_naming_the_flow(small, catalog):
    s = _with(small, [TrafficFlow(0, 8, 1e6), TrafficFlow(3, 500, 1e6)])
    with pytest.raises(ScenarioError) as caught:
        evaluate(s, catalog, ("permutation",))
    assert caught.value.problems[0].where == "workload.matrix[1]"
    assert "GPU 500 does not exist" in caught.value.problems[0].message


def test_the_flow_test_runs_the_matrix(small, catalog):
    # two flows between servers, one inside a server (left out, NVLink)
    s = _with(small, [TrafficFlow(0, 8, 1e6), TrafficFlow(8, 0, 1e6), TrafficFlow(1, 2, 1e6)])
    report = evaluate(s, catalog, ("permutation",))
    assert report.permutation.connections == 2
    assert report.permutation.throughput_fraction.min == pytest.approx(1.0)
    # two flows into one GPU share its NIC: each gets half
    incast = _with(small, [TrafficFlow(0, 64, 1e6), TrafficFlow(8, 64, 1e6)])
    report = evaluate(incast, catalog, ("permutation",))
    assert report.permutation.throughput_fraction.max == pytest.approx(0.5)


def test_the_transport_study_runs_the_matrix_with_its_own_sizes(small, catalog):
    s = _with(small, [TrafficFlow(0, 64, 8 * 2**20), TrafficFlow(8, 72, 2 * 2**20)])
    study = transport_study(s, TransportWorkload(kind="traffic"), catalog)
    assert study.flows == 2
    without = copy.deepcopy(small)
    with pytest.raises(ScenarioError, match="traffic matrix"):
        transport_study(without, TransportWorkload(kind="traffic"), catalog)


def test_the_exporters_write_the_matrix(small):
    s = _with(small, [TrafficFlow(0, 8, 1e6, 2e-6), TrafficFlow(9, 1, 4096.0)])
    flows = ns3.read_flows(export_texts(s, "ns3")["flow.txt"])
    assert [(f.src, f.dst, f.size_bytes, f.start_s) for f in flows] == [
        (9, 1, 4096, 0.0),
        (0, 8, 1000000, 2e-6),
    ]
    _, cm = htsim.read_cm(export_texts(s, "htsim")["traffic.cm"])
    assert [(f.src, f.dst, f.size_bytes) for f in cm] == [(0, 8, 1000000), (9, 1, 4096)]
    assert cm[0].start_s == pytest.approx(2e-6)


def test_matrix_round_trips_through_the_library(small, tmp_path):
    from engine.library.store import Library

    s = _with(small, [TrafficFlow(0, 8, 1e6), TrafficFlow(9, 1, 4096.0, 1e-6)])
    s.metadata.name = "with traffic"
    lib = Library(tmp_path / "lib.fabriclab")
    try:
        lib.save(s, note="traffic")
        assert lib.load("with traffic") == s
    finally:
        lib.close()
