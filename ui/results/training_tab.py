"""The Training tab: one step's breakdown, and GPU utilization vs network latency.

The table splits the step into compute (and its kernel classes: matmuls, attention,
memory-bound kernels, output layer, recomputation), the exposed communication of each
parallelism kind, the pipeline bubble and the optimizer step. The plot shows the engine's GPU utilization at per-switch
latencies from 0.5 to 20 µs (log axis, 0–100 % so a flat curve looks flat), against the
per-switch figure or the end-to-end path latency it gives (what the field quotes), and says
which parts of the step the latency reaches (the exposed communication that grows); the
results panel supplies the points as the latency worker computes them. Pinned scenarios add a dashed
curve and a column of the comparison table.
"""

from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import LATENCIES_NS, AppReport, TrainingResult, latency_reach
from ui.document.document import ScenarioDocument
from ui.results.comparison import TRAINING_METRICS, comparison_rows
from ui.results.latency_curves import LatencyCurves
from ui.results.pins import Pin, PinnedCurves
from ui.results.plot_axes import result_plot
from ui.results.plot_export import ExportTarget, plotted_series, write_csv, write_series_csv
from ui.results.result_tab import ResultTab
from ui.results.tables import fill_table, make_table, set_header, table_header, table_rows
from ui.results.training_controls import TrainingControls

COMM_KINDS = ("tp", "cp", "ep", "pp", "dp")
# The compute's kernel classes, in words.
COMPUTE_PARTS = {
    "matmul": "matmuls",
    "attention": "attention",
    "memory_bound": "memory-bound kernels",
    "output_layer": "output layer",
    "recompute": "recomputation",
    "flat": "at a flat share of peak",
}
CURRENT_COLOR = "#1f77b4"
LATENCY_TITLE = "switch latency (s)"
UTILIZATION_TITLE = "GPU utilization (%)"


# The latency plot's x axes: (combo text, row key, axis title).
LATENCY_AXES = (
    ("per switch", "switch_latency_ns", LATENCY_TITLE),
    ("end-to-end path", "path_latency_ns", "path latency, one way (s)"),
)


def latency_points(
    rows: list[dict[str, Any]], key: str = "switch_latency_ns"
) -> tuple[list[float], list[float]]:
    """A latency curve's rows as plot data: latency (`key`) in seconds, utilization in %."""
    return (
        [1e-9 * r[key] for r in rows],
        [100.0 * r["gpu_utilization"] for r in rows],
    )


def _us(ns: float) -> str:
    return f"{ns / 1e3:.3g} µs"


def reach_text(rows: list[dict[str, Any]]) -> str:
    """What the curve's latency reaches, in words (engine.analysis.latency_reach's figures)."""
    if len(rows) < 2:
        return ""
    reach = latency_reach(rows)
    (s0, s1), (p0, p1) = reach["switch_latency_ns"], reach["path_latency_ns"]
    grown = [f"{k} +{s * 1e3:.3g} ms" for k, s in reach["grown_s"].items() if s > 1e-7]
    where = (
        "the latency reaches " + ", ".join(grown)
        if grown
        else "no exposed communication grows: the latency stays off the critical path"
    )
    return (
        f"{_us(s0)} → {_us(s1)} per switch ({_us(p0)} → {_us(p1)} end to end): step "
        f"{reach['step_growth']:+.1%}, GPU utilization {-reach['utilization_drop']:+.1%}; {where}"
    )


def controls_strip(controls: QWidget) -> QScrollArea:
    """`controls` in a frameless strip that scrolls rather than enlarge the window's minimum."""
    strip = QScrollArea()
    strip.setObjectName("trainingControlsStrip")
    strip.setFrameShape(QFrame.Shape.NoFrame)
    strip.setWidgetResizable(True)
    strip.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    strip.setWidget(controls)
    bar = strip.horizontalScrollBar().sizeHint().height()
    strip.setMaximumHeight(controls.sizeHint().height() + bar)
    strip.setMinimumHeight(24)  # a short window squeezes the strip, not its own minimum
    return strip


def scenario_name(report: AppReport | None) -> str:
    """The name of the scenario a report was computed for."""
    return (report.topology.name if report is not None else "") or "current"


class TrainingTab(ResultTab):
    """Step breakdown table, GPU utilization and MFU, the latency plot and the comparison."""

    def __init__(self, document: ScenarioDocument | None = None) -> None:
        self.controls = TrainingControls(document)
        self.table = make_table("trainingTable", ["component", "seconds", "share"])
        self.gpu_util_label = QLabel("GPU utilization: –")
        self.gpu_util_label.setObjectName("gpuUtilizationLabel")
        self.mfu_label = QLabel("MFU: –")
        self.mfu_label.setObjectName("mfuLabel")
        self.comparison = make_table("trainingComparison", ["metric", "current"])
        self.comparison.setVisible(False)
        self.comparison.setWordWrap(False)
        figures = QHBoxLayout()
        figures.addWidget(self.gpu_util_label)
        figures.addWidget(self.mfu_label)
        figures.addStretch(1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(figures)
        left_layout.addWidget(self.table, 1)

        self.latency_plot = result_plot(
            "latencyPlot",
            LATENCY_TITLE,
            UTILIZATION_TITLE,
            x_unit="s",
            log_y=False,
            legend_offset=(-10, -10),  # utilization curves run high: the legend goes low
        )
        self.latency_plot.setTitle("GPU utilization vs network latency")
        # fixed axes: the points fill in from the left as the worker computes them
        self.latency_plot.setYRange(0, 100, padding=0.02)
        span_s = (1e-9 * LATENCIES_NS[0], 1e-9 * LATENCIES_NS[-1])
        self.latency_plot.setXRange(*(math.log10(t) for t in span_s), padding=0.04)
        self.latency_plot.enableAutoRange(enable=False)
        self.latency_curve = self.latency_plot.plot(
            pen=pg.mkPen(CURRENT_COLOR, width=2),
            symbol="o",
            symbolSize=6,
            symbolBrush=CURRENT_COLOR,
            symbolPen=None,
            name="current",
        )
        self.pinned_latency = PinnedCurves(self.latency_plot)
        self.axis_combo = QComboBox()
        self.axis_combo.setObjectName("latencyAxisCombo")
        self.axis_combo.setToolTip(
            "x axis: each switch's forwarding latency, or the one-way latency across the "
            "fabric it gives (NICs, cables and every switch on the longest route)"
        )
        for text, key, _title in LATENCY_AXES:
            self.axis_combo.addItem(text, key)
        self.axis_combo.currentIndexChanged.connect(lambda _i: self._redraw_latency())
        self.latency_reach = QLabel()
        self.latency_reach.setObjectName("latencyReach")
        self.latency_reach.setWordWrap(True)
        # a short window clips the sentence rather than grow the window's minimum height
        self.latency_reach.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        self.latency_reach.setMinimumHeight(1)
        self._latency_rows: list[dict[str, Any]] = []
        self._pin_rows: list[tuple[Pin, list[dict[str, Any]]]] = []
        self.latency_status = QLabel("Open this tab to compute GPU utilization vs latency")
        self.latency_status.setObjectName("latencyStatus")
        self.latency_status.setWordWrap(True)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        status_row = QHBoxLayout()
        status_row.addWidget(self.latency_status, 1)
        status_row.addWidget(QLabel("x axis"))
        status_row.addWidget(self.axis_combo)
        right_layout.addWidget(self.latency_plot, 1)
        right_layout.addLayout(status_row)
        right_layout.addWidget(self.latency_reach)

        body = QSplitter(Qt.Orientation.Horizontal)
        body.setObjectName("trainingSplitter")
        body.addWidget(left)
        body.addWidget(self.comparison)
        body.addWidget(right)
        body.setSizes([350, 300, 650])
        page = QWidget()
        page_layout = QVBoxLayout(page)
        page_layout.setContentsMargins(0, 0, 0, 0)
        page_layout.addWidget(controls_strip(self.controls))
        page_layout.addWidget(body, 1)
        super().__init__("trainingTab", page)
        self.set_exports(
            [
                ExportTarget(
                    "latency plot",
                    "gpu_utilization_vs_latency",
                    self.export_latency_csv,
                    self.latency_plot,
                ),
                ExportTarget("step breakdown table", "training_step", self.export_table_csv),
                ExportTarget("comparison table", "training_comparison", self.export_comparison_csv),
            ]
        )

    def set_document(self, document: ScenarioDocument) -> None:
        """Show and edit `document`'s training job in the bar above the results."""
        self.controls.set_document(document)

    # ---- the current scenario ---------------------------------------------------------------

    def show_training(self, training: TrainingResult | None, error: str | None) -> None:
        """The step breakdown, GPU utilization and MFU, or why training was not evaluated."""
        if training is None:
            fill_table(self.table, [])
            self.gpu_util_label.setText("GPU utilization: –")
            self.mfu_label.setText("MFU: –")
            self.set_error(f"Training not evaluated: {error}" if error else "")
            return
        step = float(training.step_s) or 1.0
        rows: list[list[Any]] = [["compute", float(training.compute_s)]]
        for part, seconds in training.compute_parts_s.items():
            if seconds > 0:
                rows.append([f"    {COMPUTE_PARTS.get(part, part)}", float(seconds)])
        comm = training.comm_s
        for kind in COMM_KINDS:
            if kind in comm:
                rows.append([f"exposed {kind} comm", float(comm[kind].exposed_s)])
        rows.append(["pipeline bubble", float(training.bubble_s)])
        rows.append(["optimizer step", float(training.optimizer_s)])
        rows = [[name, s, f"{s / step:.1%}"] for name, s in rows]
        rows.append(["step", float(training.step_s), "100.0%"])
        fill_table(self.table, rows)
        self.gpu_util_label.setText(f"GPU utilization: {training.gpu_utilization:.1%}")
        self.mfu_label.setText(f"MFU: {training.mfu:.1%}")
        memory_gb = (training.model_state_bytes_per_gpu + training.activation_bytes_per_gpu) / 1e9
        self.set_info(
            f"{training.model_name}: "
            f"{training.tokens_per_s:,.0f} tokens/s on {training.gpus:,} GPUs; "
            f"{training.schedule}, recompute {training.recompute}; "
            f"compute at {training.compute_efficiency:.0%} of peak; {memory_gb:,.0f} GB per GPU"
        )

    def show_latency(self, rows: list[dict[str, Any]] | None, status: str) -> None:
        """Draw the current scenario's latency curve (None clears it), say how far it got
        and, once it has two points, what the latency reaches in the step."""
        self._latency_rows = list(rows or [])
        self.latency_status.setText(status)
        self.latency_reach.setText(reach_text(self._latency_rows))
        self._redraw_latency()

    def _redraw_latency(self) -> None:
        """Draw the current and pinned curves against the chosen latency axis."""
        key = self.axis_combo.currentData()
        self.latency_plot.setLabel("bottom", self._axis_title())
        self.latency_curve.setData(*latency_points(self._latency_rows, key))
        self.pinned_latency.show(
            [(pin, *latency_points(rows, key)) for pin, rows in self._pin_rows]
        )
        if key == "switch_latency_ns":
            span_s = (1e-9 * LATENCIES_NS[0], 1e-9 * LATENCIES_NS[-1])
            self.latency_plot.setXRange(*(math.log10(t) for t in span_s), padding=0.04)
        else:
            self.latency_plot.getPlotItem().enableAutoRange(axis="x")

    # ---- pinned scenarios -------------------------------------------------------------------

    def show_pins(self, pins: list[Pin], current: AppReport | None, curves: LatencyCurves) -> None:
        """Dashed latency curves of the pins that have one (in `curves`), and the comparison
        table."""
        self._pin_rows = [(pin, rows) for pin in pins if (rows := curves.rows(pin.report))]
        self._redraw_latency()
        self.comparison.setVisible(bool(pins))
        set_header(
            self.comparison,
            ["metric", "current", *(p.label for p in pins)],
        )
        sections = [current.training if current else None, *(p.report.training for p in pins)]
        fill_table(self.comparison, comparison_rows(TRAINING_METRICS, sections))

    # ---- export -----------------------------------------------------------------------------

    def export_latency_csv(self, path: str) -> None:
        """The latency plot's curves: the shown latency (s), then GPU utilization (%) per curve."""
        write_series_csv(
            path, self._axis_title(), UTILIZATION_TITLE, plotted_series(self.latency_plot)
        )

    def _axis_title(self) -> str:
        """The latency axis's title for the chosen axis (per switch or end to end)."""
        key = self.axis_combo.currentData()
        return next(title for _text, k, title in LATENCY_AXES if k == key)

    def export_table_csv(self, path: str) -> None:
        """The step breakdown table as shown."""
        write_csv(path, table_header(self.table), table_rows(self.table))

    def export_comparison_csv(self, path: str) -> None:
        """The comparison with the pinned scenarios as shown."""
        write_csv(path, table_header(self.comparison), table_rows(self.comparison))
