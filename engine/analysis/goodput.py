"""Goodput under failures for a scenario, alone or as InfiniBand and RoCE side by side.

The front ends' one call for the question "how much training survives the failures of this
fabric's parts?": expand the scenario, run its training step (as `training_run` does),
count its parts from the bill of materials and hand both to `engine.reliability`.
`goodput_by_technology` converts the same topology to the other technology
(`convert_technology`) and answers for both.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.analysis.comparison import convert_technology
from engine.analysis.results import GoodputComparison, GoodputResult
from engine.catalog.devices import Catalog
from engine.model.catalogs import scenario_catalog
from engine.model.scenario import Scenario
from engine.reliability.model import goodput_report
from engine.reliability.parts import part_counts
from engine.topology.expand import expand
from engine.training.step import train_step

TECHNOLOGIES = ("infiniband", "roce")


def goodput(
    scenario: Scenario,
    catalog: Catalog,
    checkpoint_interval_s: float | None = None,
    reliability: Mapping[str, float] | None = None,
    hot_spares: bool = False,
) -> GoodputResult:
    """Interruptions per day, their cost and effective goodput of the scenario's training job.

    `checkpoint_interval_s` (work between checkpoints) defaults to Young's optimum;
    `reliability` overrides figures of the catalog's ``reliability`` profile by field name.
    `hot_spares` restarts on a standby host instead of rescheduling the job.
    Raises `ScenarioError` naming the field for a bad figure or scenario.
    """
    catalog = scenario_catalog(scenario, catalog)
    fabric = expand(scenario, catalog)
    step = train_step(fabric, scenario.workload.training, catalog)
    report = goodput_report(
        part_counts(fabric, catalog), step, catalog, checkpoint_interval_s, reliability, hot_spares
    )
    return GoodputResult.from_dict(
        {
            "technology": scenario.fabric.technology,
            "scenario": scenario.metadata.name,
            **report,
        }
    )


def goodput_by_technology(
    scenario: Scenario,
    catalog: Catalog,
    checkpoint_interval_s: float | None = None,
    reliability: Mapping[str, float] | None = None,
    hot_spares: bool = False,
) -> GoodputComparison:
    """`goodput` of the scenario as InfiniBand and as RoCE, the same topology converted."""
    results = []
    for technology in TECHNOLOGIES:
        variant = (
            scenario
            if scenario.fabric.technology == technology
            else convert_technology(scenario, technology, catalog)
        )
        results.append(goodput(variant, catalog, checkpoint_interval_s, reliability, hot_spares))
    return GoodputComparison(results=tuple(results))
