"""One scenario field swept point by point, for a curve that grows while the points arrive.

The app's Sweep tab varies one field over values typed as text (``v1,v2,...`` or
``start:stop:count``) and plots a metric against them as the points finish. `sweep_points`
is that whole run as one engine call: it reads the values and checks every point first (a
bad path, value or metric fails before any point runs), then evaluates the points inline, in
order, through `engine.analysis.sweeps.sweep`, handing each finished one over as a
`SweepPoint`. A stop request ends the run after the point being computed and keeps the
finished ones (the result says it was cancelled), which is why it takes a `should_stop`
predicate rather than a `Progress`: a `Progress` ends a run with `RunCancelledError` and
no result at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.analysis.sweeps import METRICS, SweepResult, parse_values, sweep
from engine.model.errors import Problem, ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import Scenario


@dataclass(frozen=True)
class SweepPoint:
    """One finished point of a `sweep_points` run: the `index`-th of `total` values."""

    index: int
    total: int
    value: str
    result: float  # the metric; NaN when the point failed
    error: str  # why the point failed, "" when it did not

    @property
    def x(self) -> float:
        """Where the point sits on a plot's x axis: its value as a number, else its index."""
        try:
            return float(self.value)
        except ValueError:
            return float(self.index)


def sweep_points(
    scenario: Scenario,
    param: str,
    values_text: str,
    metric: str,
    on_start: Callable[[int], None] | None = None,
    on_point: Callable[[SweepPoint], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SweepResult:
    """Evaluate `metric` with the field `param` set to each value of `values_text`, in order.

    Every point is checked before any runs: unreadable values, a bad path or value, or an
    unknown metric raise `ScenarioError`. Then `on_start(count)` hears how many points
    follow, `on_point(point)` hears each one as it finishes (a failed point carries NaN and
    its message), and `should_stop()`, asked before each point, ends the run early; the
    finished points stay in the returned result, whose ``cancelled`` says so.
    """
    values = parse_values(values_text)
    for value in values:
        apply_override(scenario, param, value)
    if metric not in METRICS:
        raise ScenarioError(Problem("metric", f"unknown metric {metric!r}"))
    if on_start is not None:
        on_start(len(values))

    def finished(index: int, result: float, error: str) -> None:
        if on_point is not None:
            on_point(SweepPoint(index, len(values), values[index], result, error))

    return sweep(
        scenario,
        [(param, values)],
        metric,
        executor=None,
        cancelled=should_stop,
        on_point=finished,
    )
