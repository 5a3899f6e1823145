"""Sweeps: one or two scenario fields varied, one result metric collected, on any Executor.

A what-if is a curve. `sweep` applies each value (by the same dotted paths as ``--set``),
evaluates a named metric for every point and returns a table ready for plotting. Points run
on any `concurrent.futures.Executor`: a process pool sized to the machine by default, a
dask.distributed client's executor for a cluster, or inline. Progress is reported through a
callback as points finish; a cancel request stops the pending points and keeps the finished
ones. Every point is computed from the scenario's JSON alone, so results do not depend on
where or in which order they ran.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.analysis.results import (
    CollectiveRow,
    CollectiveSummary,
    CostReport,
    GoodputResult,
    TrainingResult,
)
from engine.model.errors import Problem, ScenarioError
from engine.model.overrides import apply_override
from engine.model.scenario import Scenario, from_json, to_json


def _permutation_mean(fabric, catalog) -> float:
    from engine.analysis.evaluation import permutation_test

    return permutation_test(fabric)["throughput_fraction"]["mean"]


def _collective_row(fabric, catalog) -> CollectiveRow:
    from engine.analysis.evaluation import collective_summary
    from engine.routing.router import Router

    return CollectiveSummary.from_dict(collective_summary(fabric, Router(fabric), catalog)).rows[0]


def _training(fabric, catalog) -> TrainingResult:
    from engine.training.step import train_step

    return TrainingResult.from_dict(train_step(fabric, fabric.scenario.workload.training, catalog))


def _cost(fabric, catalog) -> CostReport:
    from engine.cost.report import cost_report

    return CostReport.from_dict(cost_report(fabric, catalog))


def _goodput(fabric, catalog) -> GoodputResult:
    from engine.reliability.model import goodput_report
    from engine.reliability.parts import part_counts
    from engine.training.step import train_step

    step = train_step(fabric, fabric.scenario.workload.training, catalog)
    report = goodput_report(part_counts(fabric, catalog), step, catalog)
    scenario = fabric.scenario
    return GoodputResult.from_dict(
        {"technology": scenario.fabric.technology, "scenario": scenario.metadata.name, **report}
    )


# Metric name -> (probe, field of the probe's typed result, None: the probe's answer is the
# figure). Probes run on the expanded fabric.
METRICS: dict[str, tuple[Callable[..., Any], str | None]] = {
    "permutation_mean_throughput": (_permutation_mean, None),
    "busbw_GBps": (_collective_row, "busbw_GBps"),
    "algbw_GBps": (_collective_row, "algbw_GBps"),
    "collective_time_s": (_collective_row, "time_s"),
    "step_s": (_training, "step_s"),
    "gpu_utilization": (_training, "gpu_utilization"),
    "mfu": (_training, "mfu"),
    "tokens_per_s": (_training, "tokens_per_s"),
    "exposed_comm_s": (_training, "exposed_comm_s"),
    "capex_usd": (_cost, "capex_usd"),
    "network_capex_usd": (_cost, "network_capex_usd"),
    "cost_per_gpu_usd": (_cost, "cost_per_gpu_usd"),
    "power_w": (_cost, "power_w"),
    "network_power_w": (_cost, "network_power_w"),
    "interruptions_per_day": (_goodput, "interruptions_per_day"),
    "goodput_tokens_per_s": (_goodput, "goodput_tokens_per_s"),
    "goodput_share": (_goodput, "goodput_share"),
}


def evaluate_metric(scenario_json: str, metric: str) -> float:
    """The value of `metric` for one scenario given as JSON (runs in a worker process)."""
    from engine.catalog.devices import default_catalog
    from engine.topology.expand import expand

    probe, key = METRICS[metric]
    catalog = default_catalog()
    fabric = expand(from_json(scenario_json), catalog)
    result = probe(fabric, catalog)
    return float(result if key is None else getattr(result, key))


def parse_values(text: str) -> list[str]:
    """Sweep values from ``v1,v2,...`` or a range ``start:stop:count`` (evenly spaced)."""
    text = text.strip()
    if text.count(":") == 2 and "," not in text:
        start, stop, count = text.split(":")
        try:
            lo, hi, n = float(start), float(stop), int(count)
        except ValueError:
            raise ScenarioError(
                Problem("--values", f"cannot read range {text!r}; use start:stop:count")
            ) from None
        if n < 1:
            raise ScenarioError(Problem("--values", f"a range needs at least one point, not {n}"))
        return [f"{v:.12g}" for v in np.linspace(lo, hi, n)]
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        raise ScenarioError(Problem("--values", "no values given"))
    return values


@dataclass(frozen=True)
class SweepResult:
    """The points of a sweep: parameter values, metric per point (NaN: not run).

    `params` are the dotted paths varied, `values` each one's values, `points` every
    combination (one value per parameter), `results` the metric at each point, `errors`
    why a point failed (by its index). Its JSON form (`to_dict`, `to_json`) is the table
    with the metric's name and the errors, what ``sweep --json`` prints.
    """

    metric: str
    params: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]
    points: tuple[tuple[str, ...], ...]
    results: tuple[float, ...]
    cancelled: bool = False
    errors: Mapping[int, str] = field(default_factory=dict)

    def table(self) -> dict[str, list[Any]]:
        """Columns: one per parameter and the metric, one row per point."""
        columns: dict[str, list[Any]] = {
            p: [pt[i] for pt in self.points] for i, p in enumerate(self.params)
        }
        columns[self.metric] = [None if math.isnan(v) else float(v) for v in self.results]
        return columns

    def grid(self) -> np.ndarray:
        """The metric as an array shaped by the parameters' value counts."""
        return np.asarray(self.results, dtype=float).reshape([len(v) for v in self.values])

    def to_csv(self) -> str:
        """The table as CSV text."""
        columns = self.table()
        names = list(columns)
        rows = [",".join(names)]
        for i in range(len(self.points)):
            rows.append(
                ",".join("" if columns[n][i] is None else str(columns[n][i]) for n in names)
            )
        return "\n".join(rows) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """The metric's name, the table (`table`) and the errors by point index."""
        return {"metric": self.metric, "table": self.table(), "errors": dict(self.errors)}

    def to_json(self) -> str:
        """`to_dict` as JSON text (two-space indent; point indices become text keys)."""
        return json.dumps(self.to_dict(), indent=2)


def default_executor(workers: int | None = None) -> Executor:
    """A process pool with one worker per core (or `workers`)."""
    return ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1)


def sweep(
    scenario: Scenario,
    params: Sequence[tuple[str, Sequence[str]]],
    metric: str,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    on_point: Callable[[int, float, str], None] | None = None,
) -> SweepResult:
    """Evaluate `metric` at every combination of the parameters' values.

    `params` holds one or two ``(dotted path, values)`` pairs; values are text as on the
    command line. All points are checked before any runs (a bad path or value fails at once).
    `progress(done, total)` is called as points finish; when `cancelled()` turns true, points
    not yet started are dropped and the result says so. `on_point(index, result, error)`
    hears each finished point as it finishes (NaN and the message when it failed, else
    ``""``), so a caller can draw the curve while it grows. Without an executor the points
    run inline, one after another.
    """
    if metric not in METRICS:
        raise ScenarioError(
            Problem("--metric", f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
        )
    if not 1 <= len(params) <= 2:
        raise ScenarioError(Problem("--param", "a sweep varies one or two parameters"))
    names = [p for p, _ in params]
    values = [list(v) for _, v in params]
    points = list(itertools.product(*values))
    documents = []
    for point in points:
        s = scenario
        for name, value in zip(names, point, strict=True):
            s = apply_override(s, name, value)
        documents.append(to_json(s, indent=None))
    results = np.full(len(points), np.nan)
    errors: dict[int, str] = {}
    was_cancelled = False
    done = 0
    if executor is None:
        for i, doc in enumerate(documents):
            if cancelled is not None and cancelled():
                was_cancelled = True
                break
            results[i] = _run_point(doc, metric, errors, i)
            done += 1
            if on_point is not None:
                on_point(i, float(results[i]), errors.get(i, ""))
            if progress:
                progress(done, len(points))
    else:
        futures: dict[Future, int] = {
            executor.submit(evaluate_metric, doc, metric): i for i, doc in enumerate(documents)
        }
        for future in as_completed(futures):
            i = futures[future]
            try:
                results[i] = future.result()
            except ScenarioError as exc:
                errors[i] = str(exc)
            except Exception as exc:  # a cancelled future or a worker that died
                if not future.cancelled():
                    errors[i] = f"{type(exc).__name__}: {exc}"
            done += 1
            if on_point is not None:
                on_point(i, float(results[i]), errors.get(i, ""))
            if progress:
                progress(done, len(points))
            if cancelled is not None and cancelled() and not was_cancelled:
                was_cancelled = True
                for other in futures:
                    other.cancel()
    return SweepResult(
        metric,
        tuple(names),
        tuple(tuple(v) for v in values),
        tuple(points),
        tuple(float(r) for r in results),
        was_cancelled,
        errors,
    )


def _run_point(doc: str, metric: str, errors: dict[int, str], index: int) -> float:
    try:
        return evaluate_metric(doc, metric)
    except ScenarioError as exc:
        errors[index] = str(exc)
        return float("nan")


def pareto_front(cost: Sequence[float], performance: Sequence[float]) -> list[int]:
    """Indices of the points no other point beats on both cost (lower) and performance (higher)."""
    c = np.asarray(cost, dtype=float)
    p = np.asarray(performance, dtype=float)
    order = np.lexsort((-p, c))  # by cost, then best performance first
    front, best = [], -np.inf
    for i in order:
        if np.isnan(c[i]) or np.isnan(p[i]):
            continue
        if p[i] > best:
            front.append(int(i))
            best = p[i]
    return front
