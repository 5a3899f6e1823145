"""The report the desktop app shows: every part of `evaluate`, with a failing optional part
kept as a message instead of losing the rest, and the collective re-labelled for the plots."""

from __future__ import annotations

import time

from engine.analysis.caches import cache_counts, reused_since
from engine.analysis.evaluation import evaluate
from engine.analysis.results import AppReport
from engine.catalog.devices import Catalog
from engine.collectives.timing import DEFAULT_SIZES
from engine.model.scenario import Scenario
from engine.model.sizes import curve_sizes
from engine.runtime.progress import Progress

PARTS = ("permutation", "collective", "training", "cost")


def run_evaluation(
    scenario: Scenario, catalog: Catalog, progress: Progress | None = None
) -> AppReport:
    """The engine's report for the UI (runs on a worker thread, never on the GUI thread).

    The `PARTS` of `evaluate` over the workload's curve sizes (the engine's default range
    unless ``workload.sizes`` names one): the permutation test,
    the workload's collective, one training step and the cost report. A scenario that cannot
    be expanded raises `ScenarioError`; when only training or cost fail, their message goes
    to ``training_error`` / ``cost_error`` and the rest is kept. ``collective_sweep``
    re-labels the collective for the plots (sizes, busbw and time per algorithm and of the
    best one); the engine names each hottest link's ``bundle`` (``"nvlink"`` inside a
    server). ``scenario`` is the scenario's JSON document: GPU utilization vs switch latency
    (`engine.analysis.latency`) is computed from it only when the Training tab asks, because
    it costs more than the 0.2 s edit-to-plot budget. ``ui_elapsed_s`` is the wall time of
    the whole run, ``reused`` what the engine's caches saved it. `progress` hears how far
    the run got and stops it (`RunCancelledError`) when it says so. The training step runs
    beside the other probes on a second core where there is one (`evaluate`'s
    `side_by_side`).
    """
    from engine.model.scenario import scenario_to_dict

    t0 = time.perf_counter()
    before = cache_counts()
    evaluation = evaluate(
        scenario,
        catalog,
        parts=PARTS,
        collective_sizes=curve_sizes(scenario.workload.sizes, DEFAULT_SIZES),
        progress=progress,
        keep_going=True,
        side_by_side=True,
    )
    # The scenario travels with its report, so a pinned or cached report can still have its
    # slower extras (GPU utilization vs switch latency) computed when a tab asks for them.
    return AppReport.of(
        evaluation, scenario_to_dict(scenario), time.perf_counter() - t0, reused_since(before)
    )
