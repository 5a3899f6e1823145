"""One scenario in, one probe's answer out: the calls the front ends make for a single figure.

Each probe expands the scenario itself, so a caller never holds a `Fabric`; the CLI's
``validate``, ``collective``, ``train`` and ``cost`` commands are one call each. The engine
below computes plain dicts; each probe hands them back typed (`engine.analysis.results`).
"""

from __future__ import annotations

import numpy as np

from engine.analysis.results import CollectiveSummary, CostReport, TrainingResult
from engine.catalog.devices import Catalog
from engine.collectives.placement import placement
from engine.collectives.timing import CollectiveEngine
from engine.cost.report import cost_report
from engine.model.scenario import Scenario
from engine.topology.expand import expand
from engine.training.step import train_step


def fabric_size(scenario: Scenario, catalog: Catalog) -> dict[str, int]:
    """GPUs and directed links of the expanded scenario; raises `ScenarioError` if it cannot be built."""
    fabric = expand(scenario, catalog)
    return {"gpus": int(fabric.n_gpus), "directed_links": int(fabric.n_links)}


def collective_run(
    scenario: Scenario,
    catalog: Catalog,
    sizes: np.ndarray,
    op: str | None = None,
    ranks: int | None = None,
    algorithm: str | None = None,
    protocol: str | None = None,
) -> CollectiveSummary:
    """A collective at `sizes` bytes; each unset choice is the scenario workload's own."""
    fabric = expand(scenario, catalog)
    w = scenario.workload
    result = CollectiveEngine(fabric, catalog).run(
        op or w.op,
        placement(fabric, ranks if ranks is not None else w.ranks),
        sizes,
        algorithm or w.algorithm,
        protocol or w.protocol,
    )
    return CollectiveSummary.from_dict(result.to_dict())


def training_run(scenario: Scenario, catalog: Catalog) -> TrainingResult:
    """One step of the scenario's training job."""
    step = train_step(expand(scenario, catalog), scenario.workload.training, catalog)
    return TrainingResult.from_dict(step)


def cost_run(
    scenario: Scenario,
    catalog: Catalog,
    years: float = 5.0,
    usd_per_kwh: float | None = None,
    pue: float | None = None,
) -> CostReport:
    """The bill of materials, capex, power and energy cost over `years`."""
    report = cost_report(
        expand(scenario, catalog), catalog, years=years, usd_per_kwh=usd_per_kwh, pue=pue
    )
    return CostReport.from_dict(report)
