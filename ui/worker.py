"""Evaluation off the GUI thread: one QThreadPool job per request, newest request wins.

Superseding or cancelling a request makes it stale. A running job notices at the engine's
next checkpoint (`engine.runtime.progress`: after routing, per collective algorithm stage, per part)
and stops there (`discarded`); a queued stale job is skipped before it starts. Progress and
results reach the GUI thread through a QObject signal bridge (queued).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from engine.analysis import Progress, RunCancelledError, run_evaluation
from engine.catalog.devices import Catalog
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario


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
