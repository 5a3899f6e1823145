"""Calibration: the fit recovers factors that generated the measurements, and refuses bad runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.analysis.calibrate import FACTORS, calibrate
from engine.analysis.results.measured import NcclTestsPoint, NcclTestsRun, NcclTestsTiming
from engine.collectives.placement import placement
from engine.collectives.timing import CollectiveEngine
from engine.model.errors import ScenarioError
from engine.model.scenario import Calibration
from engine.model.validation import check_structure
from engine.topology import generators as gen
from engine.topology.expand import expand

SIZES = 8.0 * 4.0 ** np.arange(0, 16, 2)  # 8 B .. 2 GiB


@pytest.fixture(scope="module")
def scenario(catalog):
    return gen.rail_optimized(32, "dgx-h100", "qm9700", catalog=catalog)


def _measured(scenario, catalog, truth: Calibration, op: str, ranks: int) -> NcclTestsRun:
    """What the model says under `truth`, written as an nccl-tests run."""
    fabric = expand(replace(scenario, calibration=truth), catalog)
    rows = CollectiveEngine(fabric, catalog).run(op, placement(fabric, ranks), SIZES).rows
    points = tuple(
        NcclTestsPoint(
            size_bytes=int(r["bytes"]),
            count=int(r["bytes"]) // 4,
            out_of_place=NcclTestsTiming(r["time_s"], r["algbw_GBps"], r["busbw_GBps"], 0),
        )
        for r in rows
    )
    return NcclTestsRun(op, ranks, "H100", None, "float", points, source=f"{op}-{ranks}")


def test_the_fit_recovers_the_factors_that_made_the_measurements(scenario, catalog):
    truth = Calibration(nic_efficiency=0.8, latency_scale=1.6, simple_efficiency=1.0)
    runs = [
        _measured(scenario, catalog, truth, "all-reduce", 32),
        _measured(scenario, catalog, truth, "all-gather", 16),
    ]
    fit = calibrate(scenario, runs, name="lab", catalog=catalog)
    got = fit.calibration
    assert got.nic_efficiency == pytest.approx(0.8, rel=0.03)
    assert got.latency_scale == pytest.approx(1.6, rel=0.05)
    assert fit.fitted_median_error < 0.01 < fit.default_median_error
    assert got.name == "lab" and got.version == 1
    assert got.measured == ["all-reduce-32", "all-gather-16"]
    assert check_structure(replace(scenario, calibration=got), catalog) == []


def test_a_second_fit_under_the_same_name_is_the_next_version(scenario, catalog):
    truth = Calibration(nic_efficiency=0.9)
    runs = [_measured(scenario, catalog, truth, "all-reduce", 16)]
    first = calibrate(scenario, runs, name="lab", catalog=catalog).calibration
    again = calibrate(replace(scenario, calibration=first), runs, catalog=catalog).calibration
    assert (first.version, again.version, again.name) == (1, 2, "lab")


def test_the_report_names_every_factor_beside_its_default(scenario, catalog):
    runs = [_measured(scenario, catalog, Calibration(), "all-reduce", 16)]
    report = calibrate(scenario, runs, catalog=catalog).to_dict()
    assert [f["name"] for f in report["factors"]] == list(FACTORS)
    assert all(f["default"] == 1.0 for f in report["factors"])
    assert len(report["points"]) == SIZES.shape[0]
    assert report["fitted_median_error"] < 0.01


def test_runs_the_scenario_cannot_hold_are_refused(scenario, catalog):
    run = _measured(scenario, catalog, Calibration(), "all-reduce", 16)
    too_many = replace(run, ranks=4096)
    with pytest.raises(ScenarioError, match="4096 ranks"):
        calibrate(scenario, [too_many], catalog=catalog)
    with pytest.raises(ScenarioError, match="no measured run"):
        calibrate(scenario, [], catalog=catalog)
    with pytest.raises(ScenarioError, match="no timed message size"):
        calibrate(scenario, [replace(run, points=())], catalog=catalog)


def test_out_of_range_factors_are_a_validation_problem(scenario, catalog):
    bad = replace(scenario, calibration=Calibration(name="x", nic_efficiency=0.0))
    problems = check_structure(bad, catalog)
    assert [(p.where, p.field) for p in problems] == [("calibration", "nic_efficiency")]
