"""A calibration fit run off the GUI thread: the scenario and its measured runs in, the fit out.

`engine.analysis.calibrate` evaluates the collective model a few hundred times (seconds on a
large fabric), so it runs on a `TaskWorker` like every engine call of the window: progress
arrives as (fraction, stage), a cancel stops it at its next evaluation, and only the newest
request's outcome is reported.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication, QObject, Signal

from engine.analysis import NcclTestsRun, RunCancelledError, calibrate
from engine.catalog.devices import Catalog
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario
from ui.work.tasks import Task, TaskWorker

KEY = "calibration"


class CalibrationWorker(QObject):
    """Fits calibrations on a private thread, newest request only.

    Signals (GUI thread): `progress(fraction, stage)`, `finished(fit)` (a
    `CalibrationFit`), `failed(message)`; a cancelled fit reports nothing.
    """

    progress = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, catalog: Catalog | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self.tasks = TaskWorker(self)
        self.tasks.progress.connect(
            lambda _k, _r, fraction, stage: self.progress.emit(fraction, stage)
        )
        self.tasks.finished.connect(lambda _k, _r, fit: self.finished.emit(fit))
        self.tasks.failed.connect(self._on_failed)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    @property
    def running(self) -> bool:
        """Whether a fit is queued or running."""
        return self.tasks.pending(KEY)

    def request(self, scenario: Scenario, runs: Sequence[NcclTestsRun], name: str = "") -> None:
        """Fit `scenario`'s calibration to `runs`; a fit still running goes stale."""
        catalog, runs = self.catalog, list(runs)

        def job(task: Task) -> object:
            return calibrate(scenario, runs, name=name, catalog=catalog, progress=task.progress)

        self.tasks.submit(KEY, job)

    def cancel(self) -> None:
        """Stop the running fit at its next model evaluation."""
        self.tasks.cancel(KEY)

    def shutdown(self) -> None:
        """Drop every request and wait for a running evaluation to end."""
        self.tasks.shutdown()

    def _on_failed(self, _key: str, _request: int, error: object) -> None:
        if isinstance(error, RunCancelledError):
            return
        if isinstance(error, ScenarioError):
            self.failed.emit(error.brief())
        else:
            self.failed.emit(f"{type(error).__name__}: {error}")
