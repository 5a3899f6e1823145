"""The Sweep tab: vary one scenario field, plot a metric as the points arrive.

A run is one `engine.analysis.sweep_points` call on the panel's `TaskWorker`: the engine
checks every point, then evaluates them one after another and hands each finished point
over (a partial result), so the curve grows as points arrive. Cancel asks the run to stop
after the point being computed and keeps the finished ones; a new run makes a running one
stale. The Frontier tab beside the curve (`sweep_frontier`) puts the same sweep's points at
their cost with the Pareto front marked.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import METRICS, SweepPoint, SweepResult, sweep_points
from engine.model.errors import ScenarioError
from ui.document.document import ScenarioDocument
from ui.results.plot_axes import axis_title
from ui.results.plot_export import ExportButton, ExportTarget, write_csv
from ui.results.scrolling import scrolling
from ui.results.sweep_frontier import SweepFrontier
from ui.work.tasks import Task, TaskWorker

DEFAULT_PARAM = "fabric.switch_latency_ns"
DEFAULT_VALUES = "100:20000:16"
DEFAULT_METRIC = "busbw_GBps"
KEY = "sweep"


def failure_text(error: object) -> str:
    """Why a sweep could not run, in one line (``where: message`` for a scenario error)."""
    if isinstance(error, ScenarioError):
        return "; ".join(f"{p.where}: {p.message}" for p in error.problems) or str(error)
    return f"{type(error).__name__}: {error}"


class SweepPanel(QWidget):
    """Parameter path, values, metric, Run / Cancel, a progress bar and the metric's curve.

    Runs on the document's current scenario. `points` holds the finished ``(x, y)`` points of
    the latest run (x: the value, or its index when not a number; NaN results are left out of
    the curve). Signals: `runFinished(cancelled)` and `runFailed(message)`.
    """

    runFinished = Signal(bool)
    runFailed = Signal(str)

    def __init__(self, document: ScenarioDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sweepTab")
        self.document = document
        self.worker = TaskWorker(self)
        self.worker.partial.connect(self._on_partial)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.running = False
        self.points: list[tuple[float, float]] = []
        self.errors: list[str] = []
        self._total = 0

        self.param_edit = QLineEdit(DEFAULT_PARAM)
        self.param_edit.setObjectName("sweepParamEdit")
        self.values_edit = QLineEdit(DEFAULT_VALUES)
        self.values_edit.setObjectName("sweepValuesEdit")
        self.values_edit.setToolTip("v1,v2,... or start:stop:count")
        self.metric_combo = QComboBox()
        self.metric_combo.setObjectName("sweepMetricCombo")
        self.metric_combo.addItems(list(METRICS))
        self.metric_combo.setCurrentText(DEFAULT_METRIC)
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("sweepRunButton")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("sweepCancelButton")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setObjectName("sweepProgress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.message = QLabel("Set a parameter and values, then Run")
        self.message.setObjectName("sweepMessage")
        self.message.setWordWrap(True)

        self._columns = ("value", "metric")  # the CSV header, set by each run
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("sweepPlot")
        self.plot.setBackground("w")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        for side in ("bottom", "left"):
            # Plain numbers on the ticks; a "(x0.001)" scale beside a title reads as noise.
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        self.curve = self.plot.plot(
            pen=pg.mkPen("#1f77b4", width=2), symbol="o", symbolSize=6, symbolBrush="#1f77b4"
        )

        form = QFormLayout()
        form.addRow("Parameter", self.param_edit)
        form.addRow("Values", self.values_edit)
        form.addRow("Metric", self.metric_combo)
        self.export_button = ExportButton(
            "sweepExport",
            [ExportTarget("sweep plot", "sweep", self.export_csv, self.plot)],
            on_error=self.message.setText,
            on_saved=lambda path: self.message.setText(f"Saved {path}"),
        )
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress, 1)
        buttons.addWidget(self.export_button)
        controls = QVBoxLayout()
        controls.addLayout(form)
        controls.addLayout(buttons)
        controls.addWidget(self.message)
        controls.addStretch(1)
        self.frontier = SweepFrontier(self._inputs)
        self.views = QTabWidget()
        self.views.setObjectName("sweepViews")
        self.views.addTab(self.plot, "Curve")
        self.views.addTab(scrolling(self.frontier), "Frontier")
        layout = QHBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.views, 2)

        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)

    def run(self) -> int:
        """Start a sweep of the current scenario (a running one is cancelled); the run id."""
        self.points, self.errors, self._total = [], [], 0
        self.curve.setData([], [])
        param = self.param_edit.text().strip()
        metric = self.metric_combo.currentText()
        self._columns = (param, metric)  # the CSV's header: the names a script reads back
        self.plot.setLabel("bottom", axis_title(param))
        self.plot.setLabel("left", axis_title(metric))
        self.message.setStyleSheet("")
        self.message.setText("Checking the points…")
        self.progress.setRange(0, 0)
        self._set_running(True)
        scenario, values = self.document.scenario, self.values_edit.text()

        def job(task: Task) -> SweepResult:
            return sweep_points(
                scenario,
                param,
                values,
                metric,
                on_start=task.partial,
                on_point=task.partial,
                should_stop=task.should_stop,
            )

        return self.worker.submit(KEY, job)

    def _inputs(self) -> tuple:
        """What the frontier sweeps: the scenario, parameter, values text and metric."""
        return (
            self.document.scenario,
            self.param_edit.text().strip(),
            self.values_edit.text(),
            self.metric_combo.currentText(),
        )

    def export_csv(self, path: str) -> None:
        """The sweep's points as CSV: the parameter's value and the metric, sorted by value,
        under their field names (the plot's axes show them as words)."""
        param, metric = self._columns
        write_csv(path, [param, metric], [[x, y] for x, y in sorted(self.points)])

    def cancel(self) -> None:
        """Stop after the point being computed (the finished points stay)."""
        if self.running:
            self.worker.stop(KEY)
            self.message.setText("Cancelling after the current point…")

    def shutdown(self) -> None:
        """Cancel any run and wait for its job to end (before the app quits)."""
        self.worker.shutdown()
        self.frontier.shutdown()

    def _set_running(self, running: bool) -> None:
        self.running = running
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    def _on_partial(self, _key: str, _request: int, payload: object) -> None:
        if isinstance(payload, SweepPoint):
            self._show_point(payload)
        else:  # the point count, once every point has been checked
            self._show_started(int(payload))

    def _show_started(self, total: int) -> None:
        self._total = total
        self.progress.setRange(0, total)
        self.progress.setValue(0)
        self.message.setText(f"Running 0 / {total} points…")

    def _show_point(self, point: SweepPoint) -> None:
        if point.error:
            self.errors.append(f"{point.value}: {point.error.splitlines()[0]}")
        if not math.isnan(point.result):
            self.points.append((point.x, point.result))
            self.curve.setData([p[0] for p in self.points], [p[1] for p in self.points])
        self.progress.setValue(point.index + 1)
        self.message.setText(f"Running {point.index + 1} / {self._total} points…")

    def _on_finished(self, _key: str, _request: int, result: SweepResult) -> None:
        cancelled = result.cancelled
        self._set_running(False)
        done = self.progress.value()
        if self.progress.maximum() == 0:
            self.progress.setRange(0, 1)
        note = f"; {len(self.errors)} point(s) failed: {self.errors[0]}" if self.errors else ""
        if cancelled:
            self.message.setText(f"Sweep cancelled after {done} / {self._total} points{note}")
        else:
            self.message.setText(f"Sweep done: {done} point(s){note}")
        self.runFinished.emit(cancelled)

    def _on_failed(self, _key: str, _request: int, error: object) -> None:
        message = failure_text(error)
        self._set_running(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.message.setStyleSheet("color: #d62728")
        self.message.setText(f"Sweep failed: {message}")
        self.runFailed.emit(message)
