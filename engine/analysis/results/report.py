"""The whole evaluation of a scenario, and the report the desktop app shows and keeps.

`EvaluationResult` is what `engine.analysis.evaluate` returns: the topology always, then
each part that was asked for (permutation test, collective, training step, cost report),
with a failing training or cost part kept as its reason (``training_error``,
``cost_error``) when the caller asked to keep going, and the storage network's summary
(`StorageSummary`) when the design has one. Parts not asked for are ``None`` and left out
of the JSON form, as the CLI has always printed it.

`AppReport` is the same evaluation with what the app adds: the collective laid out for its
plots, the scenario's JSON document (so a pinned or cached report can have its slower
extras computed later) and the wall time of the whole run. Its JSON form is the evaluation's
with those three keys after it; the app keeps that form in the library and rebuilds the
report with `from_dict`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.analysis.results.codec import OMIT_WHEN_NONE, JsonResult
from engine.analysis.results.collective import CollectiveSummary, CollectiveSweep
from engine.analysis.results.cost import CostReport
from engine.analysis.results.fabric import PermutationResult, TopologySummary
from engine.analysis.results.storage import StorageSummary
from engine.analysis.results.training import TrainingResult


@dataclass(frozen=True)
class EvaluationResult(JsonResult):
    """The topology summary and each evaluated part; `warnings` come from the expansion,
    `expand_s` is its wall-clock seconds."""

    topology: TopologySummary
    permutation: PermutationResult | None = field(default=None, metadata=OMIT_WHEN_NONE)
    collective: CollectiveSummary | None = field(default=None, metadata=OMIT_WHEN_NONE)
    training: TrainingResult | None = field(default=None, metadata=OMIT_WHEN_NONE)
    training_error: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
    cost: CostReport | None = field(default=None, metadata=OMIT_WHEN_NONE)
    cost_error: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
    storage: StorageSummary | None = field(default=None, metadata=OMIT_WHEN_NONE)
    warnings: tuple[str, ...] = ()
    expand_s: float = 0.0


@dataclass(frozen=True)
class AppReport(EvaluationResult):
    """An evaluation as the app shows it: `collective_sweep` for the Collective tab's plots,
    `scenario` (its JSON document, ``None`` in a report kept without it),
    `ui_elapsed_s`, the wall time of the whole run, and `reused`, what the run took from the
    engine's caches instead of computing (``"routes 11 of 11"``; empty when nothing)."""

    collective_sweep: CollectiveSweep | None = field(default=None, metadata=OMIT_WHEN_NONE)
    scenario: Mapping[str, Any] | None = field(default=None, metadata=OMIT_WHEN_NONE)
    ui_elapsed_s: float = 0.0
    reused: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        evaluation: EvaluationResult,
        scenario: Mapping[str, Any] | None,
        ui_elapsed_s: float,
        reused: tuple[str, ...] = (),
    ) -> AppReport:
        """`evaluation` with the app's additions (the collective's plots come from it)."""
        parts = {f.name: getattr(evaluation, f.name) for f in dataclasses.fields(evaluation)}
        sweep = CollectiveSweep.of(evaluation.collective) if evaluation.collective else None
        return cls(
            **parts,
            collective_sweep=sweep,
            scenario=scenario,
            ui_elapsed_s=ui_elapsed_s,
            reused=reused,
        )
