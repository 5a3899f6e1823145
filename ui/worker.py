"""Evaluation off the GUI thread: one QThreadPool job per request, newest request wins.

Superseding or cancelling a request makes it stale. A running job notices at the engine's
next checkpoint (`engine.progress`: after routing, per collective algorithm stage, per part)
and stops there (`discarded`); a queued stale job is skipped before it starts. Progress and
results reach the GUI thread through a QObject signal bridge (queued).
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from engine.catalog import Catalog
from engine.collectives import DEFAULT_SIZES
from engine.cost import cost_report
from engine.errors import ScenarioError
from engine.evaluate import evaluate, training_summary
from engine.model import Scenario
from engine.progress import Progress, RunCancelledError
from engine.topology.expand import expand

PARTS = ("permutation", "collective", "training", "cost")


def _message(exc: ScenarioError) -> str:
    return "; ".join(p.message for p in exc.problems) or str(exc)


def run_evaluation(
    scenario: Scenario, catalog: Catalog, progress: Progress | None = None
) -> dict[str, Any]:
    """The engine's report for the UI (runs on a worker thread, never on the GUI thread).

    The `PARTS` of `evaluate` over the engine's default message sizes: the permutation test,
    the workload's collective, one training step and the cost report. A scenario that cannot
    be expanded raises `ScenarioError`; when only training or cost fail, their message goes
    to ``report["training_error"]`` / ``report["cost_error"]`` and the rest is kept.
    ``report["collective_sweep"]`` re-labels the collective for the plots (sizes, busbw and
    time per algorithm and of the best one); the engine names each hottest link's ``bundle``
    (``"nvlink"`` inside a server). ``report["scenario"]`` is the scenario's JSON document:
    GPU utilization vs switch latency (``ui.latency_worker``) is computed from it only when
    the Training tab asks, because it costs more than the 0.2 s edit-to-plot budget.
    ``ui_elapsed_s`` is the wall time of the whole run. `progress` hears how far the run got
    and stops it (`RunCancelledError`) when it says so.
    """
    from engine.model import scenario_to_dict

    t0 = time.perf_counter()
    try:
        report = evaluate(
            scenario, catalog, parts=PARTS, collective_sizes=DEFAULT_SIZES, progress=progress
        )
    except ScenarioError:
        # the base parts must work (else this raises); then training and cost one by one
        report = evaluate(
            scenario,
            catalog,
            parts=("permutation", "collective"),
            collective_sizes=DEFAULT_SIZES,
            progress=progress,
        )
        fabric = expand(scenario, catalog)
        try:
            report["training"] = training_summary(fabric, catalog)
        except ScenarioError as exc:
            report["training_error"] = _message(exc)
        try:
            rows = report["collective"]["rows"]
            report["cost"] = cost_report(
                fabric,
                catalog,
                busbw_GBps=rows[-1]["busbw_GBps"] if rows else None,
                tokens_per_s=(report.get("training") or {}).get("tokens_per_s"),
            )
        except ScenarioError as exc:
            report["cost_error"] = _message(exc)
    collective = report["collective"]
    report["collective_sweep"] = {
        "op": collective["op"],
        "ranks": collective["ranks"],
        "sizes": [float(row["bytes"]) for row in collective["rows"]],
        "busbw_GBps": collective["curves_busbw_GBps"],
        "best_busbw_GBps": [row["busbw_GBps"] for row in collective["rows"]],
        "time_s": collective["curves_time_s"],
        "best_time_s": [row["time_s"] for row in collective["rows"]],
    }
    # The scenario travels with its report, so a pinned or cached report can still have its
    # slower extras (GPU utilization vs switch latency) computed when a tab asks for them.
    report["scenario"] = scenario_to_dict(scenario)
    report["ui_elapsed_s"] = time.perf_counter() - t0
    return report


class _Bridge(QObject):
    """Carries a job's outcome from the pool thread to the GUI thread (queued signals)."""

    finished = Signal(int, object)
    failed = Signal(int, str, list)
    skipped = Signal(int)
    progress = Signal(int, float, str)


class _Job(QRunnable):
    """One evaluation request."""

    def __init__(
        self, worker: EvaluationWorker, request_id: int, scenario: Scenario, catalog: Catalog
    ) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.worker = worker
        self.bridge = worker._bridge
        self.request_id = request_id
        self.scenario = scenario
        self.catalog = catalog

    def run(self) -> None:
        """Evaluate unless already stale; report the outcome through the bridge."""
        if self.worker.current_request != self.request_id:
            self.bridge.skipped.emit(self.request_id)
            return
        progress = Progress(
            report=lambda fraction, stage: self.bridge.progress.emit(
                self.request_id, fraction, stage
            ),
            should_stop=lambda: self.worker.current_request != self.request_id,
        )
        try:
            report = run_evaluation(self.scenario, self.catalog, progress)
        except RunCancelledError:
            self.bridge.skipped.emit(self.request_id)
        except ScenarioError as exc:
            self.bridge.failed.emit(self.request_id, str(exc), list(exc.problems))
        except Exception as exc:
            self.bridge.failed.emit(self.request_id, f"{type(exc).__name__}: {exc}", [])
        else:
            self.bridge.finished.emit(self.request_id, report)


class EvaluationWorker(QObject):
    """Runs `run_evaluation` on a private thread pool; only the newest request counts.

    Signals: `started(id)`, `progress(id, fraction, stage)` for the current request,
    `finished(id, report)`, `failed(id, message)`, `invalid(id, problems)` (the scenario
    cannot be expanded), `cancelled(id)`, and `discarded(id)` when a stale request stops
    at a checkpoint or its outcome arrives and is dropped.
    """

    started = Signal(int)
    finished = Signal(int, object)
    failed = Signal(int, str)
    invalid = Signal(int, list)
    cancelled = Signal(int)
    discarded = Signal(int)
    progress = Signal(int, float, str)

    def __init__(self, catalog: Catalog, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._bridge = _Bridge(self)
        self._bridge.finished.connect(self._on_finished)
        self._bridge.failed.connect(self._on_failed)
        self._bridge.skipped.connect(self.discarded)
        self._bridge.progress.connect(self._on_progress)
        self._next_id = 0
        self.current_request: int | None = None

    @property
    def running(self) -> bool:
        """Whether a current (not stale) request is waiting for its result."""
        return self.current_request is not None

    def submit(self, scenario: Scenario) -> int:
        """Queue an evaluation of `scenario`; earlier requests become stale. Returns its id."""
        self._next_id += 1
        self.current_request = self._next_id
        self._pool.start(_Job(self, self._next_id, scenario, self.catalog))
        self.started.emit(self._next_id)
        return self._next_id

    def cancel(self) -> None:
        """Make the current request stale: it stops at its next checkpoint."""
        request = self.current_request
        if request is None:
            return
        self.current_request = None
        self.cancelled.emit(request)

    def shutdown(self) -> None:
        """Drop every request and wait for a running job to end (before the app quits)."""
        self.current_request = None
        self._pool.clear()
        self._pool.waitForDone()

    @Slot(int, float, str)
    def _on_progress(self, request_id: int, fraction: float, stage: str) -> None:
        if request_id == self.current_request:
            self.progress.emit(request_id, fraction, stage)

    @Slot(int, object)
    def _on_finished(self, request_id: int, report: object) -> None:
        if request_id != self.current_request:
            self.discarded.emit(request_id)
            return
        self.current_request = None
        self.finished.emit(request_id, report)

    @Slot(int, str, list)
    def _on_failed(self, request_id: int, message: str, problems: list) -> None:
        if request_id != self.current_request:
            self.discarded.emit(request_id)
            return
        self.current_request = None
        if problems:
            self.invalid.emit(request_id, problems)
        self.failed.emit(request_id, message)
