"""The decision frontier: closed-form fronts, the dominance rule as a property, and a sweep."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.analysis import frontier, frontier_of_reports, frontier_sweep
from engine.model.errors import ScenarioError
from engine.topology.generators import single_switch


def test_a_single_point_is_the_front():
    f = frontier(["only"], [10.0], [2.0], "capex_usd", "step_s")
    assert f.front == (0,) and f.points[0].on_front and f.points[0].dominated_by == ""


def test_dominated_points_are_never_on_the_front_and_are_named_with_a_point_that_beats_them():
    # cost, step time (lower is better): b is beaten by a (cheaper and faster), d by c.
    f = frontier(["a", "b", "c", "d"], [10, 20, 15, 30], [5, 6, 3, 4], "capex_usd", "step_s")
    assert f.front_labels() == ["a", "c"]
    assert [p.on_front for p in f.points] == [True, False, True, False]
    assert f.points[1].dominated_by == "a" and f.points[3].dominated_by == "c"


def test_higher_is_better_performance_is_not_negated():
    # tokens/s, higher is better: the expensive fast design stays on the front.
    f = frontier(["slow", "fast"], [10, 20], [100, 300], "capex_usd", "tokens_per_s")
    assert f.front_labels() == ["slow", "fast"]
    g = frontier(["slow", "fast"], [10, 20], [100, 300], "capex_usd", "step_s")
    assert g.front_labels() == ["slow"]


def test_equal_cost_keeps_only_the_better_performer_and_missing_figures_stay_off():
    f = frontier(["x", "y", "z"], [10, 10, None], [2.0, 3.0, 1.0], "capex_usd", "step_s")
    assert f.front_labels() == ["x"]
    assert not f.points[2].on_front and f.points[2].cost is None
    nan = frontier(["x", "y"], [10, 12], [math.nan, 1.0], "capex_usd", "step_s")
    assert nan.front_labels() == ["y"] and nan.points[0].performance is None


def test_unknown_metrics_are_refused_by_option():
    with pytest.raises(ScenarioError, match="--cost"):
        frontier(["a"], [1], [1], "price", "step_s")
    with pytest.raises(ScenarioError, match="--performance"):
        frontier(["a"], [1], [1], "capex_usd", "speed")


points = st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=25)


@given(points)
def test_the_front_is_exactly_the_points_no_other_point_beats(pts):
    labels = [str(i) for i in range(len(pts))]
    f = frontier(labels, [c for c, _ in pts], [p for _, p in pts], "capex_usd", "tokens_per_s")

    def beaten(i):
        ci, pi = pts[i]
        return any(
            (c <= ci and p >= pi) and (c < ci or p > pi) for j, (c, p) in enumerate(pts) if j != i
        )

    on = set(f.front)
    for i in range(len(pts)):
        if beaten(i):
            assert i not in on
    # every undominated figure pair is represented on the front exactly once
    assert {pts[i] for i in on} == {pts[i] for i in range(len(pts)) if not beaten(i)}
    assert len(on) == len({pts[i] for i in on})
    costs = [pts[i][0] for i in f.front]
    assert costs == sorted(costs)


def test_a_sweep_of_switch_latency_keeps_the_faster_of_two_equal_cost_designs():
    scenario = single_switch(16, "dgx-h100", "qm9700")
    f = frontier_sweep(scenario, "fabric.switch_latency_ns", "100,20000", "capex_usd", "step_s")
    slow, fast = f.points[1], f.points[0]
    assert fast.cost == slow.cost  # latency costs nothing to buy
    assert slow.performance > fast.performance  # but it lengthens the step
    assert f.front_labels() == ["fabric.switch_latency_ns=100"]
    assert slow.dominated_by == "fabric.switch_latency_ns=100"


def test_goodput_is_not_read_from_a_report():
    with pytest.raises(ScenarioError, match="not in an evaluation report"):
        frontier_of_reports(["a"], [], "capex_usd", "goodput_tokens_per_s")
