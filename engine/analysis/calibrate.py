"""Calibration: fit a small, named set of factors of the collective model to measured runs.

An engineer who has run nccl-tests on their own cluster wants the what-ifs of *that* cluster:
its NICs may reach less of their rate than NCCL's model says (firmware, PCIe, tuning), its
software latency may be longer, its Simple protocol less efficient. `calibrate` times each
measured run on the scenario's fabric with NCCL's own choice per size, and fits the factors
of `engine.model.scenario.Calibration` (`FACTORS`) by least squares on the logarithm of
the times (so a 1 KB latency and a 16 GB transfer weigh alike). The catalog's defaults stay
as sourced; the fit is saved as a named, versioned calibration of the scenario.

The routed stages and their transport verdicts do not depend on the factors, so each step
of the fit only recombines them: the fit of one scenario on a few runs takes seconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from engine.analysis.results.measured import NcclTestsRun
from engine.catalog.devices import Catalog
from engine.collectives.placement import placement
from engine.collectives.timing import CollectiveEngine
from engine.model.calibration_checks import CALIBRATION_RANGES
from engine.model.catalogs import scenario_catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Calibration, Scenario
from engine.runtime.progress import Progress, checkpoint
from engine.topology.expand import Fabric, expand

#: The fitted factors, in the order of the fit's parameter vector, with what each means.
FACTORS: dict[str, str] = {
    "nic_efficiency": "share of NCCL's per-NIC rate the network stages reach",
    "latency_scale": "multiplier of NCCL's software latency per collective",
    "simple_efficiency": "multiplier of the Simple protocol's bandwidth share",
}
MAX_EVALUATIONS = 400
TOLERANCE = 1e-7  # stop when the simplex's objective values agree this closely


@dataclass(frozen=True)
class FitPoint:
    """One measured size beside the model's time before and after the fit."""

    run: str
    op: str
    ranks: int
    size_bytes: float
    measured_s: float
    default_s: float
    fitted_s: float

    @property
    def default_error(self) -> float:
        """Relative error of the uncalibrated model (+ means the model is slower)."""
        return self.default_s / self.measured_s - 1

    @property
    def fitted_error(self) -> float:
        """Relative error of the calibrated model."""
        return self.fitted_s / self.measured_s - 1


@dataclass(frozen=True)
class CalibrationFit:
    """The fitted calibration, the factors beside their defaults, and the error per point."""

    calibration: Calibration
    points: tuple[FitPoint, ...]
    evaluations: int

    @property
    def default_median_error(self) -> float:
        """Median absolute error of the uncalibrated model over every point."""
        return float(np.median([abs(p.default_error) for p in self.points]))

    @property
    def fitted_median_error(self) -> float:
        """Median absolute error of the calibrated model over every point."""
        return float(np.median([abs(p.fitted_error) for p in self.points]))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: factors (default, fitted, range, meaning), points and median errors."""
        return {
            "name": self.calibration.name,
            "version": self.calibration.version,
            "measured": list(self.calibration.measured),
            "factors": [
                {
                    "name": name,
                    "default": 1.0,
                    "fitted": getattr(self.calibration, name),
                    "range": list(CALIBRATION_RANGES[name]),
                    "meaning": meaning,
                }
                for name, meaning in FACTORS.items()
            ],
            "points": [
                {
                    "run": p.run,
                    "op": p.op,
                    "ranks": p.ranks,
                    "size_bytes": p.size_bytes,
                    "measured_s": p.measured_s,
                    "default_s": p.default_s,
                    "fitted_s": p.fitted_s,
                    "default_error": p.default_error,
                    "fitted_error": p.fitted_error,
                }
                for p in self.points
            ],
            "default_median_error": self.default_median_error,
            "fitted_median_error": self.fitted_median_error,
            "evaluations": self.evaluations,
        }


@dataclass(frozen=True)
class _Run:
    name: str
    op: str
    ranks: np.ndarray
    sizes: np.ndarray
    measured_s: np.ndarray


def _runs(runs: Sequence[NcclTestsRun], fabric: Fabric) -> list[_Run]:
    out = []
    for i, run in enumerate(runs):
        name = run.source or f"run {i + 1}"
        if run.ranks > fabric.n_gpus:
            raise ScenarioError(
                Problem(
                    "calibration",
                    f"{name}: {run.ranks} ranks measured, but the scenario has {fabric.n_gpus} "
                    "GPUs; calibrate a scenario of the measured cluster (at least as many GPUs)",
                    "measured",
                )
            )
        pts = [p for p in run.points if p.out_of_place.time_s > 0 and p.size_bytes > 0]
        if not pts:
            raise ScenarioError(
                Problem(
                    "calibration",
                    f"{name}: no timed message size to fit (every row has a zero size or "
                    "time); import a complete nccl-tests run",
                    "measured",
                )
            )
        out.append(
            _Run(
                name,
                run.op,
                placement(fabric, run.ranks),
                np.array([float(p.size_bytes) for p in pts]),
                np.array([p.out_of_place.time_s for p in pts]),
            )
        )
    return out


def _times(engine: CollectiveEngine, runs: list[_Run], factors: np.ndarray) -> list[np.ndarray]:
    engine.calibration = Calibration(
        nic_efficiency=float(factors[0]),
        latency_scale=float(factors[1]),
        simple_efficiency=float(factors[2]),
    )
    return [
        np.array([r["time_s"] for r in engine.run(run.op, run.ranks, run.sizes).rows])
        for run in runs
    ]


def _bounds() -> tuple[np.ndarray, np.ndarray]:
    lo = np.log([CALIBRATION_RANGES[n][0] for n in FACTORS])
    hi = np.log([CALIBRATION_RANGES[n][1] for n in FACTORS])
    return lo, hi


def _minimize(objective, start: np.ndarray, lo: np.ndarray, hi: np.ndarray, progress):
    """Nelder-Mead on a box (points clipped into it): few parameters, a cheap objective."""
    n = start.shape[0]
    simplex = [np.clip(start, lo, hi)]
    for i in range(n):
        x = start.copy()
        x[i] += 0.3 if x[i] + 0.3 <= hi[i] else -0.3
        simplex.append(np.clip(x, lo, hi))
    values = [objective(x) for x in simplex]
    evaluations = n + 1
    while evaluations < MAX_EVALUATIONS:
        checkpoint(progress, evaluations / MAX_EVALUATIONS, "fitting")
        order = np.argsort(values, kind="stable")
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if values[-1] - values[0] <= TOLERANCE * (1 + abs(values[0])):
            break
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]

        def at(t: float, c=centroid, w=worst) -> np.ndarray:
            return np.clip(c + t * (c - w), lo, hi)

        reflected = at(1.0)
        f_r = objective(reflected)
        evaluations += 1
        if f_r < values[0]:
            expanded = at(2.0)
            f_e = objective(expanded)
            evaluations += 1
            simplex[-1], values[-1] = (expanded, f_e) if f_e < f_r else (reflected, f_r)
        elif f_r < values[-2]:
            simplex[-1], values[-1] = reflected, f_r
        else:
            contracted = at(0.5 if f_r < values[-1] else -0.5)
            f_c = objective(contracted)
            evaluations += 1
            if f_c < min(f_r, values[-1]):
                simplex[-1], values[-1] = contracted, f_c
            else:
                best = simplex[0]
                simplex = [best] + [best + 0.5 * (x - best) for x in simplex[1:]]
                values = [values[0]] + [objective(x) for x in simplex[1:]]
                evaluations += n
    i = int(np.argmin(values))
    return simplex[i], evaluations


def calibrate(
    scenario: Scenario,
    runs: Sequence[NcclTestsRun],
    name: str = "",
    catalog: Catalog | None = None,
    progress: Progress | None = None,
) -> CalibrationFit:
    """Fit `FACTORS` of the scenario's collective model to measured `runs`.

    Each run is placed on the scenario's first GPUs, packed by server, and timed with NCCL's
    own choice of algorithm and protocol per size. The calibration returned carries `name`
    (default: the scenario's, or "calibration") and the next version of that name.
    """
    if not runs:
        raise ScenarioError(
            Problem(
                "calibration",
                "no measured run to fit; give nccl-tests output files (--measured FILE...)",
                "measured",
            )
        )
    catalog = scenario_catalog(scenario, catalog)
    fabric = expand(replace(scenario, calibration=Calibration()), catalog)
    engine = CollectiveEngine(fabric, catalog)
    measured = _runs(runs, fabric)
    logs = np.concatenate([np.log(r.measured_s) for r in measured])

    def objective(x: np.ndarray) -> float:
        model = np.concatenate(_times(engine, measured, np.exp(x)))
        return float(np.mean((np.log(model) - logs) ** 2))

    lo, hi = _bounds()
    best, evaluations = _minimize(objective, np.zeros(len(FACTORS)), lo, hi, progress)
    defaults = _times(engine, measured, np.ones(len(FACTORS)))
    fitted = _times(engine, measured, np.exp(best))
    points = tuple(
        FitPoint(run.name, run.op, int(run.ranks.shape[0]), float(s), float(m), float(d), float(f))
        for run, dts, fts in zip(measured, defaults, fitted, strict=True)
        for s, m, d, f in zip(run.sizes, run.measured_s, dts, fts, strict=True)
    )
    previous = scenario.calibration
    label = name or previous.name or scenario.metadata.name or "calibration"
    version = previous.version + 1 if previous.name == label else 1
    values = np.exp(best)
    errors = [abs(p.fitted_error) for p in points]
    calibration = Calibration(
        name=label,
        version=version,
        nic_efficiency=_round(values[0]),
        latency_scale=_round(values[1]),
        simple_efficiency=_round(values[2]),
        measured=[run.name for run in measured],
        fit_error=float(np.median(errors)),
    )
    return CalibrationFit(calibration, points, evaluations)


def _round(value: float) -> float:
    """Four significant digits: the fit is no more certain than that, and files stay readable."""
    return float(f"{value:.4g}") if math.isfinite(value) else value
