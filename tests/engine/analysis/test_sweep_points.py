"""One field swept point by point (the Sweep tab's one engine call) and `sweep`'s `on_point`."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.analysis.sweep_points import SweepPoint, sweep_points
from engine.analysis.sweeps import parse_values, sweep
from engine.model.errors import ScenarioError
from engine.presets.scenarios import load_preset

PARAM = "fabric.switch_latency_ns"


@pytest.fixture(scope="module")
def scenario():
    s = load_preset("dgx-h100-ib-ndr-1k")
    s.workload.message_bytes = 2.0**20
    s.workload.ranks = 64
    return s


def test_points_arrive_in_order_after_the_count(scenario):
    heard: list[object] = []
    result = sweep_points(
        scenario, PARAM, "100,1000,5000", "busbw_GBps", on_start=heard.append, on_point=heard.append
    )
    assert heard[0] == 3
    points = heard[1:]
    assert all(isinstance(p, SweepPoint) for p in points)
    assert [(p.index, p.total, p.value, p.x) for p in points] == [
        (0, 3, "100", 100.0),
        (1, 3, "1000", 1000.0),
        (2, 3, "5000", 5000.0),
    ]
    assert [p.result for p in points] == list(result.results)
    assert all(p.error == "" and p.result > 0 for p in points)
    assert not result.cancelled


def test_the_points_are_those_of_one_sweep_call(scenario):
    values = parse_values("100:20000:4")
    result = sweep_points(scenario, PARAM, "100:20000:4", "busbw_GBps")
    reference = sweep(scenario, [(PARAM, values)], "busbw_GBps")
    assert result.table() == reference.table()


def test_a_stop_request_keeps_the_finished_points(scenario):
    points: list[SweepPoint] = []
    result = sweep_points(
        scenario,
        PARAM,
        "100,1000,5000",
        "busbw_GBps",
        on_point=points.append,
        should_stop=lambda: len(points) >= 1,
    )
    assert result.cancelled
    assert len(points) == 1 and points[0].index == 0
    assert not math.isnan(result.results[0])
    assert np.isnan(result.results[1:]).all()


@pytest.mark.parametrize(
    ("param", "values", "metric", "message"),
    [
        ("fabric.nope", "1,2", "busbw_GBps", "fabric"),
        (PARAM, "1:2", "busbw_GBps", "cannot read"),
        (PARAM, "", "busbw_GBps", "no values"),
        (PARAM, "1,2", "no_such_metric", "metric: unknown metric 'no_such_metric'"),
    ],
)
def test_a_bad_sweep_fails_before_any_point(scenario, param, values, metric, message):
    heard: list[object] = []
    with pytest.raises(ScenarioError) as caught:
        sweep_points(scenario, param, values, metric, on_start=heard.append, on_point=heard.append)
    text = "; ".join(f"{p.where}: {p.message}" for p in caught.value.problems)
    assert message in text
    assert heard == []


def test_a_value_that_is_no_number_sits_at_its_index():
    point = SweepPoint(index=2, total=3, value="spray", result=1.0, error="")
    assert point.x == 2.0
    assert SweepPoint(0, 1, "1e3", 1.0, "").x == 1000.0


def test_on_point_hears_every_point_of_a_sweep(scenario):
    heard: list[tuple[int, float, str]] = []
    values = ["100", "2000"]
    result = sweep(
        scenario,
        [(PARAM, values), ("routing.mode", ["ecmp", "spray"])],
        "busbw_GBps",
        on_point=lambda i, r, e: heard.append((i, r, e)),
    )
    assert [i for i, _, _ in heard] == [0, 1, 2, 3]
    assert [r for _, r, _ in heard] == list(result.results)
    assert all(e == "" for _, _, e in heard)
