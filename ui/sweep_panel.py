"""The Sweep tab: vary one scenario field, plot a metric as the points arrive.

The sweep runs on a private thread pool (one job per run): the job calls
`engine.analysis.sweep.sweep` inline (``executor=None``) one value at a time and sends each finished
point to the GUI thread through a queued signal, so the curve grows as points arrive.
Cancel stops after the point being computed and keeps the finished ones.
"""

from __future__ import annotations

import math
import threading

import pyqtgraph as pg
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import METRICS, parse_values, sweep
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Scenario, apply_override
from ui.document import ScenarioDocument
from ui.plot_export import ExportButton, ExportTarget, write_csv

DEFAULT_PARAM = "fabric.switch_latency_ns"
DEFAULT_VALUES = "100:20000:16"
DEFAULT_METRIC = "busbw_GBps"


def _message(exc: ScenarioError) -> str:
    return "; ".join(f"{p.where}: {p.message}" for p in exc.problems) or str(exc)


class _Bridge(QObject):
    """Carries a run's points and outcome from the pool thread to the GUI thread."""

    started = Signal(int, int)  # run id, point count
    point = Signal(int, int, str, float, str)  # run id, index, value, result, error
    finished = Signal(int, bool)  # run id, cancelled
    failed = Signal(int, str)


class _SweepJob(QRunnable):
    """One sweep run: checks every point, then evaluates them one after another."""

    def __init__(
        self,
        bridge: _Bridge,
        run_id: int,
        scenario: Scenario,
        param: str,
        values_text: str,
        metric: str,
        stop: threading.Event,
    ) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.bridge = bridge
        self.run_id = run_id
        self.scenario = scenario
        self.param = param
        self.values_text = values_text
        self.metric = metric
        self.stop = stop

    def run(self) -> None:
        """Evaluate the points in order, emitting each one; stop early when cancelled."""
        try:
            values = parse_values(self.values_text)
            for value in values:  # a bad path or value fails before any point runs
                apply_override(self.scenario, self.param, value)
            if self.metric not in METRICS:
                raise ScenarioError(Problem("metric", f"unknown metric {self.metric!r}"))
        except ScenarioError as exc:
            self.bridge.failed.emit(self.run_id, _message(exc))
            return
        self.bridge.started.emit(self.run_id, len(values))
        try:
            for i, value in enumerate(values):
                if self.stop.is_set():
                    self.bridge.finished.emit(self.run_id, True)
                    return
                result = sweep(
                    self.scenario,
                    [(self.param, [value])],
                    self.metric,
                    executor=None,
                    cancelled=self.stop.is_set,
                )
                if result.cancelled:
                    self.bridge.finished.emit(self.run_id, True)
                    return
                error = result.errors.get(0, "")
                self.bridge.point.emit(self.run_id, i, value, float(result.results[0]), error)
        except ScenarioError as exc:
            self.bridge.failed.emit(self.run_id, _message(exc))
            return
        except Exception as exc:
            self.bridge.failed.emit(self.run_id, f"{type(exc).__name__}: {exc}")
            return
        self.bridge.finished.emit(self.run_id, False)


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
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._bridge = _Bridge(self)
        self._bridge.started.connect(self._on_started)
        self._bridge.point.connect(self._on_point)
        self._bridge.finished.connect(self._on_finished)
        self._bridge.failed.connect(self._on_failed)
        self._run_id = 0
        self._stop = threading.Event()
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

        self.plot = pg.PlotWidget()
        self.plot.setObjectName("sweepPlot")
        self.plot.setBackground("w")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
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
        layout = QHBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.plot, 2)

        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)

    def run(self) -> int:
        """Start a sweep of the current scenario (a running one is cancelled); the run id."""
        self._stop.set()
        self._run_id += 1
        self._stop = threading.Event()
        self.points, self.errors, self._total = [], [], 0
        self.curve.setData([], [])
        param = self.param_edit.text().strip()
        metric = self.metric_combo.currentText()
        self.plot.setLabel("bottom", param)
        self.plot.setLabel("left", metric)
        self.message.setStyleSheet("")
        self.message.setText("Checking the points…")
        self.progress.setRange(0, 0)
        self._set_running(True)
        self._pool.start(
            _SweepJob(
                self._bridge,
                self._run_id,
                self.document.scenario,
                param,
                self.values_edit.text(),
                metric,
                self._stop,
            )
        )
        return self._run_id

    def export_csv(self, path: str) -> None:
        """The sweep's points as CSV: the parameter's value and the metric, sorted by value."""
        param = self.plot.getAxis("bottom").labelText or "value"
        metric = self.plot.getAxis("left").labelText or "metric"
        write_csv(path, [param, metric], [[x, y] for x, y in sorted(self.points)])

    def cancel(self) -> None:
        """Stop after the point being computed (the finished points stay)."""
        if self.running:
            self._stop.set()
            self.message.setText("Cancelling after the current point…")

    def shutdown(self) -> None:
        """Cancel any run and wait for its job to end (before the app quits)."""
        self._stop.set()
        self._pool.clear()
        self._pool.waitForDone()

    def _set_running(self, running: bool) -> None:
        self.running = running
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    @Slot(int, int)
    def _on_started(self, run_id: int, total: int) -> None:
        if run_id != self._run_id:
            return
        self._total = total
        self.progress.setRange(0, total)
        self.progress.setValue(0)
        self.message.setText(f"Running 0 / {total} points…")

    @Slot(int, int, str, float, str)
    def _on_point(self, run_id: int, index: int, value: str, result: float, error: str) -> None:
        if run_id != self._run_id:
            return
        try:
            x = float(value)
        except ValueError:
            x = float(index)
        if error:
            self.errors.append(f"{value}: {error.splitlines()[0]}")
        if not math.isnan(result):
            self.points.append((x, result))
            self.curve.setData([p[0] for p in self.points], [p[1] for p in self.points])
        self.progress.setValue(index + 1)
        self.message.setText(f"Running {index + 1} / {self._total} points…")

    @Slot(int, bool)
    def _on_finished(self, run_id: int, cancelled: bool) -> None:
        if run_id != self._run_id:
            return
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

    @Slot(int, str)
    def _on_failed(self, run_id: int, message: str) -> None:
        if run_id != self._run_id:
            return
        self._set_running(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.message.setStyleSheet("color: #d62728")
        self.message.setText(f"Sweep failed: {message}")
        self.runFailed.emit(message)
