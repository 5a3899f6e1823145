"""The decision frontier: cost against performance, and which designs are not beaten on both.

Over a sweep of one field (``frontier_sweep``), a set of scenarios (``frontier_scenarios``),
the scenarios of a library (``frontier_library``) or reports already evaluated (``frontier_of_reports``, the compare view's), each design is a
point: its cost (capex, network capex or capex per GPU) and its performance (training step
time, tokens/s, GPU utilization, all-reduce busbw, goodput). A point is *dominated* when
another costs no more and performs at least as well, better on one of the two; the others
form the Pareto front, the only designs worth choosing between. The front comes from
`engine.analysis.sweeps.pareto_front` (lower cost, higher performance): a figure where lower
is better (step time) enters it negated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from engine.analysis.results import EvaluationResult, JsonResult
from engine.analysis.sources import library_scenarios
from engine.analysis.sweeps import evaluate_metric, pareto_front, parse_values, sweep
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Scenario, to_json

# cost metric -> how an evaluated report holds it
COSTS: dict[str, Callable[[EvaluationResult], float | None]] = {
    "capex_usd": lambda r: r.cost.capex_usd if r.cost else None,
    "network_capex_usd": lambda r: r.cost.network_capex_usd if r.cost else None,
    "cost_per_gpu_usd": lambda r: r.cost.cost_per_gpu_usd if r.cost else None,
}
# performance metric -> which way is better
PERFORMANCE: dict[str, str] = {
    "step_s": "lower",
    "tokens_per_s": "higher",
    "gpu_utilization": "higher",
    "mfu": "higher",
    "busbw_GBps": "higher",
    "goodput_tokens_per_s": "higher",
}
_FROM_REPORT: dict[str, Callable[[EvaluationResult], float | None]] = {
    "step_s": lambda r: r.training.step_s if r.training else None,
    "tokens_per_s": lambda r: r.training.tokens_per_s if r.training else None,
    "gpu_utilization": lambda r: r.training.gpu_utilization if r.training else None,
    "mfu": lambda r: r.training.mfu if r.training else None,
    "busbw_GBps": lambda r: r.collective.rows[0].busbw_GBps if r.collective else None,
}

# what an evaluation report holds, so the compare view can offer it
REPORT_PERFORMANCE: tuple[str, ...] = tuple(_FROM_REPORT)


@dataclass(frozen=True)
class FrontierPoint(JsonResult):
    """One design: its label, cost and performance (None: not available) and whether it is
    on the front; `dominated_by` names a point that beats it (empty on the front)."""

    label: str
    cost: float | None
    performance: float | None
    on_front: bool
    dominated_by: str


@dataclass(frozen=True)
class Frontier(JsonResult):
    """The points of a frontier and the front itself (`front`: indices by rising cost).

    `better` says which way the performance metric is better (``lower`` for step time).
    `errors` holds why a point has no figure (by label)."""

    cost_metric: str
    performance_metric: str
    better: str
    points: tuple[FrontierPoint, ...]
    front: tuple[int, ...]
    errors: tuple[str, ...] = ()

    def front_labels(self) -> list[str]:
        """The labels of the front's points, cheapest first."""
        return [self.points[i].label for i in self.front]


def _check_metrics(cost_metric: str, performance_metric: str) -> str:
    if cost_metric not in COSTS:
        raise ScenarioError(
            Problem("--cost", f"unknown cost metric {cost_metric!r}; use one of {', '.join(COSTS)}")
        )
    if performance_metric not in PERFORMANCE:
        raise ScenarioError(
            Problem(
                "--performance",
                f"unknown performance metric {performance_metric!r}; use one of "
                f"{', '.join(PERFORMANCE)}",
            )
        )
    return PERFORMANCE[performance_metric]


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def frontier(
    labels: Sequence[str],
    costs: Sequence[float | None],
    performances: Sequence[float | None],
    cost_metric: str = "capex_usd",
    performance_metric: str = "step_s",
    errors: Sequence[str] = (),
) -> Frontier:
    """The frontier of points given by their figures (None or NaN: left off the front)."""
    better = _check_metrics(cost_metric, performance_metric)
    c = [_finite(v) for v in costs]
    p = [_finite(v) for v in performances]
    sign = -1.0 if better == "lower" else 1.0
    front = pareto_front(
        [math.nan if v is None else v for v in c],
        [math.nan if v is None else sign * v for v in p],
    )
    on = set(front)
    points = []
    for i, label in enumerate(labels):
        beaten_by = ""
        if i not in on and c[i] is not None and p[i] is not None:
            beaten_by = next(
                (
                    labels[j]
                    for j in front
                    if c[j] <= c[i] and sign * p[j] >= sign * p[i]  # type: ignore[operator]
                ),
                "",
            )
        points.append(FrontierPoint(label, c[i], p[i], i in on, beaten_by))
    front_sorted = tuple(sorted(front, key=lambda i: (c[i], -sign * p[i])))  # type: ignore[operator]
    return Frontier(
        cost_metric, performance_metric, better, tuple(points), front_sorted, tuple(errors)
    )


def frontier_of_reports(
    labels: Sequence[str],
    reports: Sequence[EvaluationResult],
    cost_metric: str = "capex_usd",
    performance_metric: str = "step_s",
) -> Frontier:
    """The frontier of evaluated reports (the compare view's); the figures are read from
    them, never recomputed. Goodput is not part of a report: use `frontier_scenarios`."""
    _check_metrics(cost_metric, performance_metric)
    if performance_metric not in _FROM_REPORT:
        raise ScenarioError(
            Problem(
                "performance",
                f"{performance_metric} is not in an evaluation report; use one of "
                f"{', '.join(_FROM_REPORT)}",
            )
        )
    costs = [COSTS[cost_metric](r) for r in reports]
    performances = [_FROM_REPORT[performance_metric](r) for r in reports]
    return frontier(labels, costs, performances, cost_metric, performance_metric)


def frontier_scenarios(
    scenarios: Sequence[Scenario],
    labels: Sequence[str],
    cost_metric: str = "capex_usd",
    performance_metric: str = "step_s",
) -> Frontier:
    """The frontier of several scenarios, each evaluated for the two metrics; a scenario
    that cannot be evaluated is left off the front with its message in ``errors``."""
    _check_metrics(cost_metric, performance_metric)
    costs, performances, errors = [], [], []
    for scenario, label in zip(scenarios, labels, strict=True):
        doc = to_json(scenario, indent=None)
        try:
            costs.append(evaluate_metric(doc, cost_metric))
            performances.append(evaluate_metric(doc, performance_metric))
        except ScenarioError as exc:
            costs.append(None)
            performances.append(None)
            errors.append(f"{label}: {exc.brief()}")
    return frontier(labels, costs, performances, cost_metric, performance_metric, errors)


def frontier_library(
    path: str | None = None,
    query: str | None = None,
    cost_metric: str = "capex_usd",
    performance_metric: str = "step_s",
) -> Frontier:
    """The frontier of a library's scenarios (the default library without `path`), or of
    those its search matches `query`, each labelled by its name in the library."""
    _check_metrics(cost_metric, performance_metric)
    scenarios, names = library_scenarios(path, query)
    if not scenarios:
        where = f" matching {query!r}" if query else ""
        raise ScenarioError(Problem("--library", f"no scenario in the library{where}"))
    return frontier_scenarios(scenarios, names, cost_metric, performance_metric)


def frontier_sweep(
    scenario: Scenario,
    param: str,
    values_text: str,
    cost_metric: str = "capex_usd",
    performance_metric: str = "step_s",
    executor: Executor | None = None,
) -> Frontier:
    """The frontier over one field swept (`values_text`: ``v1,v2,...`` or
    ``start:stop:count``); each point is labelled ``param=value``."""
    _check_metrics(cost_metric, performance_metric)
    values = parse_values(values_text)
    cost = sweep(scenario, [(param, values)], cost_metric, executor)
    perf = sweep(scenario, [(param, values)], performance_metric, executor)
    labels = [f"{param}={v}" for v in values]
    errors = [f"{labels[i]}: {e}" for i, e in sorted({**cost.errors, **perf.errors}.items())]
    return frontier(
        labels, list(cost.results), list(perf.results), cost_metric, performance_metric, errors
    )
