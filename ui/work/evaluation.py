"""Evaluation off the GUI thread: `engine.analysis.run_evaluation` as a `TaskWorker` job.

Only the newest request counts. Superseding or cancelling a request makes it stale: a
running job notices at the engine's next checkpoint (after routing, per collective algorithm
stage, per part) and stops there (`discarded`); a queued stale job is skipped before it
starts. This module only words the outcomes the way the window and the library session read
them (request ids, the message of a failure, the problems of a scenario that cannot expand).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engine.analysis import run_evaluation
from engine.catalog.devices import Catalog
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario
from ui.work.tasks import Task, TaskWorker

KEY = "evaluation"


class EvaluationWorker(QObject):
    """Runs `run_evaluation` on a private thread; only the newest request counts.

    Signals: `started(id)`, `progress(id, fraction, stage)` for the current request,
    `finished(id, report)` (an `AppReport`), `failed(id, message)`, `invalid(id, problems)`
    (the scenario cannot be expanded), `cancelled(id)`, and `discarded(id)` when a stale
    request stops at a checkpoint or its outcome arrives and is dropped.
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
        self.tasks = TaskWorker(self)
        self.tasks.started.connect(lambda _key, request: self.started.emit(request))
        self.tasks.progress.connect(
            lambda _key, request, fraction, stage: self.progress.emit(request, fraction, stage)
        )
        self.tasks.finished.connect(
            lambda _key, request, report: self.finished.emit(request, report)
        )
        self.tasks.failed.connect(self._on_failed)
        self.tasks.cancelled.connect(lambda _key, request: self.cancelled.emit(request))
        self.tasks.discarded.connect(lambda _key, request: self.discarded.emit(request))

    @property
    def current_request(self) -> int | None:
        """The id of the request waiting for its result, ``None`` when there is none."""
        return self.tasks.current(KEY)

    @property
    def running(self) -> bool:
        """Whether a current (not stale) request is waiting for its result."""
        return self.current_request is not None

    def submit(self, scenario: Scenario) -> int:
        """Queue an evaluation of `scenario`; earlier requests become stale. Returns its id."""
        catalog = self.catalog

        def job(task: Task) -> object:
            return run_evaluation(scenario, catalog, task.progress)

        return self.tasks.submit(KEY, job)

    def cancel(self) -> None:
        """Make the current request stale: it stops at its next checkpoint."""
        self.tasks.cancel(KEY)

    def shutdown(self) -> None:
        """Drop every request and wait for a running job to end (before the app quits)."""
        self.tasks.shutdown()

    def _on_failed(self, _key: str, request: int, error: object) -> None:
        if isinstance(error, ScenarioError):
            if error.problems:
                self.invalid.emit(request, list(error.problems))
            self.failed.emit(request, str(error))
        else:
            self.failed.emit(request, f"{type(error).__name__}: {error}")
