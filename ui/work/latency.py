"""GPU utilization vs switch latency, computed off the GUI thread when the Training tab asks.

One point costs a whole training step (about 40 ms on the 1,024-GPU preset), so the curve
is not part of every evaluation (that would break the 0.2 s edit-to-plot budget). The
results panel asks for it by a key ("current", "pin:<label>") with the scenario document a
report carries; the job is one `engine.analysis.latency_rows` call on a `TaskWorker`, whose
rows so far arrive as partial results, so the curve grows on screen. A newer request for
the same key makes the older one stale: it stops before its next point and its outcome is
dropped.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Signal

from engine.analysis import latency_rows
from engine.catalog.devices import Catalog
from engine.model.errors import ScenarioError
from ui.work.tasks import Task, TaskWorker


def failure_text(error: object) -> str:
    """Why a latency curve could not be computed, in one line."""
    if isinstance(error, ScenarioError):
        return error.brief()
    return f"{type(error).__name__}: {error}"


class LatencyCurveWorker(QObject):
    """Computes latency curves by key on a private thread; newest request per key.

    Signals (GUI thread, current requests only): `point(key, rows_so_far)`,
    `finished(key, rows)`, `failed(key, message)`.
    """

    point = Signal(str, object)
    finished = Signal(str, object)
    failed = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tasks = TaskWorker(self)
        self.tasks.partial.connect(lambda key, _request, rows: self.point.emit(key, rows))
        self.tasks.finished.connect(self._on_finished)
        self.tasks.failed.connect(
            lambda key, _request, error: self.failed.emit(key, failure_text(error))
        )
        app = QCoreApplication.instance()
        if app is not None:  # quitting stops a running curve at its next point
            app.aboutToQuit.connect(self.shutdown)

    def request(self, key: str, scenario_doc: dict[str, Any], catalog: Catalog) -> None:
        """Compute the curve of `scenario_doc` for `key`; an older request for it goes stale."""

        def job(task: Task) -> object:
            return latency_rows(
                scenario_doc, catalog, on_row=task.partial, should_stop=task.should_stop
            )

        self.tasks.submit(key, job)

    def cancel(self, key: str) -> None:
        """Drop the request for `key` (it stops before its next point)."""
        self.tasks.cancel(key)

    def pending(self, key: str) -> bool:
        """Whether a request for `key` is queued or running."""
        return self.tasks.pending(key)

    def shutdown(self) -> None:
        """Drop every request and wait for a running point to end."""
        self.tasks.shutdown()

    def _on_finished(self, key: str, _request: int, rows: object) -> None:
        # latency_rows returns None when it stopped early: nothing to show then
        if rows is not None:
            self.finished.emit(key, rows)
