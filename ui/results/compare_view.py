"""Scenario > Compare scenarios: pick two or more and see the figures that decide, side by side.

The candidates are the current scenario, the pinned results and the library's scenarios.
Those without a report yet (the current one, library entries with no cached report) are
evaluated one after another on the dialog's own `TaskWorker` (`engine.analysis
.run_evaluation`, never on the GUI thread); when every report is in,
`engine.analysis.decision_table` lays out the figures and this view only shows them: one row
per figure, one column per scenario and, for every scenario after the first (the baseline),
a column with its absolute and relative delta; the better value is bold and ticked. The
collectives' busbw curves are overlaid on a linear busbw axis (log as an option), the
decision frontier (`frontier_plot`: cost vs step time or another performance, the
non-dominated scenarios joined) sits under them, and the table exports as CSV in the
engine's units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import (
    AppReport,
    DecisionRow,
    DecisionTable,
    VerdictRange,
    decision_table,
    run_evaluation,
    verdict_range,
)
from engine.catalog.devices import Catalog
from engine.model.scenario import Scenario, scenario_from_dict
from ui.results.frontier_plot import FrontierPlot
from ui.results.pins import PIN_COLORS
from ui.results.plot_axes import result_plot
from ui.results.plot_export import write_csv
from ui.results.tables import make_table, set_header
from ui.results.verdict_range_view import VerdictRangeView
from ui.work.tasks import Task, TaskWorker

BETTER_MARK = " ✓"
CURVE_COLORS = ("#1f77b4", "#d62728", *PIN_COLORS)


class CandidateError(Exception):
    """A candidate's scenario cannot be read (its message says why)."""


@dataclass
class Candidate:
    """One scenario the user may compare: its label, and a report or a way to get one.

    `scenario` is evaluated when `report` is ``None``; `load` gives the scenario (and a
    cached report, if any) on demand, for library entries read only when picked; it raises
    `CandidateError` when it cannot.
    """

    label: str
    scenario: Scenario | None = None
    report: AppReport | None = None
    load: Callable[[], tuple[Scenario, AppReport | None]] | None = None


def _si(value: float, unit: str) -> str:
    if unit == "fraction":
        return f"{value:.1%}"
    if unit == "W":
        return f"{value / 1e3:,.1f} kW"
    if unit == "s":
        return f"{value * 1e3:,.2f} ms" if abs(value) < 1 else f"{value:,.3f} s"
    if unit == "USD":
        return f"${value:,.0f}"
    if unit.startswith("USD per "):
        return f"${value:,.2f} per {unit[len('USD per ') :]}"
    if unit == "GB/s":
        return f"{value:,.1f} GB/s"
    return f"{value:,.0f} {unit}"


def value_text(value: float | None, unit: str) -> str:
    """A figure as the table shows it, in engineers' units (kW, ms, %)."""
    return "–" if value is None else _si(value, unit)


def delta_text(row: DecisionRow, index: int) -> str:
    """Scenario `index`'s delta against the baseline: "+31.7 GB/s (+12.7%)"."""
    delta, relative = row.deltas[index], row.relative[index]
    if delta is None:
        return "–"
    if row.unit == "fraction":
        text = f"{delta * 100:+.2f} pp"
    else:
        text = ("+" if delta >= 0 else "-") + _si(abs(delta), row.unit)
    return f"{text} ({relative:+.1%})" if relative is not None else text


class CompareDialog(QDialog):
    """Pick scenarios, compare them (see the module docstring); `compared(table)` fires when
    a comparison is shown."""

    compared = Signal(object)

    def __init__(
        self, candidates: list[Candidate], catalog: Catalog, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare scenarios")
        self.setObjectName("compareDialog")
        self.resize(1100, 700)
        self.catalog = catalog
        self.candidates = candidates
        self.table_result: DecisionTable | None = None
        self._reports: dict[int, AppReport] = {}
        self._picked: list[int] = []
        self.worker = TaskWorker(self)
        self.worker.finished.connect(self._evaluated)
        self.worker.failed.connect(self._evaluation_failed)

        self.choices = QListWidget()
        self.choices.setObjectName("compareChoices")
        for i, candidate in enumerate(candidates):
            item = QListWidgetItem(candidate.label)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if i < 2 else Qt.CheckState.Unchecked)
            self.choices.addItem(item)
        self.baseline_combo = QComboBox()
        self.baseline_combo.setObjectName("compareBaseline")
        self.baseline_combo.addItems([c.label for c in candidates])
        self.compare_button = QPushButton("&Compare")
        self.compare_button.setObjectName("compareButton")
        self.compare_button.clicked.connect(self.compare)
        self.export_button = QPushButton("Export &CSV…")
        self.export_button.setObjectName("compareExport")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.ask_export_csv)
        self.log_box = QCheckBox("&Log busbw axis")
        self.log_box.setObjectName("compareLogAxis")
        self.log_box.toggled.connect(self._set_log)
        self.status = QLabel("Tick two or more scenarios to compare.")
        self.status.setObjectName("compareStatus")
        self.status.setWordWrap(True)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(QLabel("Scenarios:"))
        left_layout.addWidget(self.choices, 1)
        left_layout.addWidget(QLabel("Baseline (deltas are against it):"))
        left_layout.addWidget(self.baseline_combo)
        left_layout.addWidget(self.compare_button)
        left_layout.addWidget(self.status)

        self.table = make_table("decisionTable", ["figure"])
        self.plot = result_plot(
            "compareBusbw", "message size (B)", "busbw (GB/s)", "B", "GB/s", log_y=False
        )
        self.frontier = FrontierPlot()
        self.views = QTabWidget()  # the curves and the frontier share the height below
        self.views.setObjectName("compareViews")
        self.views.addTab(self.plot, "busbw curves")
        self.views.addTab(self.frontier, "cost frontier")
        self.verdict = VerdictRangeView()
        self.views.addTab(self.verdict, "verdict range")
        self.range_button = QPushButton("Verdict &range")
        self.range_button.setObjectName("compareRange")
        self.range_button.setToolTip(
            "The baseline and the next scenario's busbw ratio over the inputs no source "
            "pins down (DCQCN register readings, ECN profile, Quantum-2's buffer)"
        )
        self.range_button.setEnabled(False)
        self.range_button.clicked.connect(self.ask_range)
        self.worker.progress.connect(self._range_progress)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.table)
        right.addWidget(self.views)
        right.setSizes([360, 400])
        buttons = QHBoxLayout()
        buttons.addWidget(self.log_box)
        buttons.addStretch(1)
        buttons.addWidget(self.range_button)
        buttons.addWidget(self.export_button)
        right_box = QWidget()
        right_layout = QVBoxLayout(right_box)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(right, 1)
        right_layout.addLayout(buttons)

        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right_box)
        split.setSizes([260, 840])
        layout = QVBoxLayout(self)
        layout.addWidget(split)

    # ---- picking and evaluating -------------------------------------------------------------

    def set_checked(self, labels: list[str]) -> None:
        """Tick exactly the candidates named in `labels`."""
        for i in range(self.choices.count()):
            item = self.choices.item(i)
            checked = item.text() in labels
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def checked(self) -> list[int]:
        """The indices of the ticked candidates: the baseline first (when ticked), then the
        others in list order."""
        ticked = [
            i
            for i in range(self.choices.count())
            if self.choices.item(i).checkState() == Qt.CheckState.Checked
        ]
        base = self.baseline_combo.currentIndex()
        return [base, *(i for i in ticked if i != base)] if base in ticked else ticked

    def compare(self) -> bool:
        """Compare the ticked scenarios: evaluate those without a report, then show them."""
        picked = self.checked()
        if len(picked) < 2:
            self.status.setText("Tick at least two scenarios to compare.")
            return False
        self._picked, self._reports = picked, {}
        for i in picked:
            candidate = self.candidates[i]
            if candidate.report is None and candidate.scenario is None and candidate.load:
                try:
                    candidate.scenario, candidate.report = candidate.load()
                except CandidateError as exc:  # a library that cannot be read: say so
                    self.status.setText(f"Cannot read {candidate.label}: {exc}")
                    return False
            if candidate.report is not None:
                self._reports[i] = candidate.report
            else:
                self._submit(i, candidate)
        self._show_if_complete()
        return True

    def _submit(self, index: int, candidate: Candidate) -> None:
        scenario, catalog = candidate.scenario, self.catalog

        def job(task: Task) -> object:
            return run_evaluation(scenario, catalog, task.progress)

        self.worker.submit(f"compare-{index}", job)
        self.status.setText(f"Evaluating {candidate.label}…")

    def _evaluated(self, key: str, _request: int, report: object) -> None:
        if key == "range":
            if isinstance(report, VerdictRange):
                self.verdict.show_range(report)
            return
        index = int(key.rsplit("-", 1)[1])
        if index in self._picked and isinstance(report, AppReport):
            self.candidates[index].report = report  # a second Compare shows it at once
            self._reports[index] = report
            self._show_if_complete()

    def _evaluation_failed(self, key: str, _request: int, error: object) -> None:
        if key == "range":
            self.verdict.say(f"No range: {error}")
            return
        index = int(key.rsplit("-", 1)[1])
        label = self.candidates[index].label
        self.status.setText(f"Cannot evaluate {label}: {error}")

    @property
    def busy(self) -> bool:
        """Whether some picked scenario is still being evaluated."""
        return bool(self._picked) and len(self._reports) < len(self._picked)

    def _show_if_complete(self) -> None:
        if self.busy:
            return
        labels = [self.candidates[i].label for i in self._picked]
        reports = [self._reports[i] for i in self._picked]
        self.show_table(decision_table(labels, reports))
        self._show_curves(labels, reports)
        self.frontier.show_reports(labels, reports)
        self.status.setText(f"Compared {len(labels)} scenarios against {labels[0]}.")
        self.range_button.setEnabled(True)
        self.compared.emit(self.table_result)

    # ---- showing ----------------------------------------------------------------------------

    def show_table(self, result: DecisionTable) -> None:
        """Fill the table: figure, each scenario's value, each delta against the baseline."""
        self.table_result = result
        labels = result.labels
        header = ["figure", labels[0]]
        for label in labels[1:]:
            header += [label, f"Δ {label}"]
        set_header(self.table, header)
        self.table.setRowCount(len(result.rows))
        bold = QFont()
        bold.setBold(True)
        for r, row in enumerate(result.rows):
            figure = QTableWidgetItem(f"{row.title} ({row.better} is better)")
            self.table.setItem(r, 0, figure)
            for i in range(len(labels)):
                column = 1 if i == 0 else 2 * i
                text = value_text(row.values[i], row.unit)
                item = QTableWidgetItem(text + (BETTER_MARK if row.best == i else ""))
                if row.best == i:
                    item.setFont(bold)
                self.table.setItem(r, column, item)
                if i:
                    self.table.setItem(r, column + 1, QTableWidgetItem(delta_text(row, i)))
        self.export_button.setEnabled(True)

    def _show_curves(self, labels: list[str], reports: list[AppReport]) -> None:
        self.plot.clear()
        for i, (label, report) in enumerate(zip(labels, reports, strict=True)):
            sweep = report.collective_sweep
            if sweep is None:
                continue
            color = CURVE_COLORS[i % len(CURVE_COLORS)]
            style = Qt.PenStyle.SolidLine if i == 0 else Qt.PenStyle.DashLine
            self.plot.plot(
                list(sweep.sizes),
                list(sweep.best_busbw_GBps),
                pen=pg.mkPen(color, width=2, style=style),
                name=f"{label} ({sweep.op})",
            )

    def _set_log(self, log: bool) -> None:
        self.plot.setLogMode(x=True, y=log)

    # ---- the verdict's range ------------------------------------------------------------------

    def _scenario(self, index: int) -> Scenario:
        candidate = self.candidates[index]
        if candidate.scenario is not None:
            return candidate.scenario
        report = self._reports[index]
        if report.scenario is None:
            raise CandidateError(f"{candidate.label} keeps no scenario to vary")
        return scenario_from_dict(report.scenario)

    def ask_range(self) -> bool:
        """Compute the range of the baseline and the next compared scenario (on the worker)."""
        if len(self._picked) < 2 or self.busy:
            self.verdict.say("Compare two scenarios first.")
            return False
        first, second = self._picked[:2]
        try:
            a, b = self._scenario(first), self._scenario(second)
        except CandidateError as exc:
            self.verdict.say(str(exc))
            return False
        catalog = self.catalog

        def job(task: Task) -> object:
            return verdict_range(a, b, catalog, task.progress)

        self.worker.submit("range", job)
        self.views.setCurrentWidget(self.verdict)
        self.verdict.say("Varying the unknowns…")
        return True

    def _range_progress(self, key: str, _request: int, fraction: float, stage: str) -> None:
        if key == "range":
            self.verdict.say(f"Varying the unknowns: {stage} ({fraction:.0%})")

    # ---- export -----------------------------------------------------------------------------

    def export_csv(self, path: str) -> None:
        """Write the comparison as CSV: the engine's units, values and deltas per scenario."""
        result = self.table_result
        if result is None:
            raise ValueError("nothing compared yet")
        write_csv(path, result.csv_header(), result.csv_rows())

    def ask_export_csv(self) -> str | None:
        """Ask for a file name and export the comparison there; the path, or ``None``."""
        path, _ = QFileDialog.getSaveFileName(
            self, "Export comparison", "comparison.csv", "CSV (*.csv)"
        )
        if not path:
            return None
        try:
            self.export_csv(path)
        except OSError as exc:
            self.status.setText(f"Cannot write {path}: {exc}")
            return None
        self.status.setText(f"Exported {path}")
        return path

    def done(self, result: int) -> None:
        """Close: stop any evaluation still running first."""
        self.worker.shutdown()
        super().done(result)
