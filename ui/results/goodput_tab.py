"""The Goodput tab: interruptions per day, checkpoint interval and goodput, IB beside RoCE.

A Run button hands the document's scenario to `engine.analysis.goodput_by_technology` on the
tab's own `TaskWorker` (a training step and the bill of materials of both technologies take
too long for the GUI thread); the tab only shows the typed result, one column per
technology, converting seconds to minutes and hours at the edge. The checkpoint interval
is the engine's optimum (Young) unless the user sets one. Results belong to the scenario
they ran on: once the document changes, the tab says they are out of date. Below the table,
the link-errors box (`link_errors_view`) prices a pre-FEC bit error ratio.
"""

from __future__ import annotations

import html

from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import GoodputComparison, GoodputResult, goodput_by_technology
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario
from ui.document.document import ScenarioDocument
from ui.results.congestion_tab import study_inputs
from ui.results.link_errors_view import LinkErrorsView
from ui.results.plot_export import ExportTarget, write_csv
from ui.results.result_tab import ResultTab
from ui.results.scrolling import scrolling
from ui.results.tables import fill_table, make_table, set_header, table_header, table_rows
from ui.work.tasks import Task, TaskWorker

KEY = "goodput"
STALE_STYLE = "color: #b26b00"


def _minutes(seconds: float | None) -> str:
    return "none needed" if seconds is None else f"{seconds / 60:,.1f} min"


def _hours(seconds: float | None) -> str:
    return "no failures" if seconds is None else f"{seconds / 3600:,.1f} h"


def result_rows(results: tuple[GoodputResult, ...]) -> list[list[str]]:
    """The table's rows: one figure per row, one column per technology."""
    figures = [
        ("Interruptions per day", lambda r: f"{r.interruptions_per_day:.2f}"),
        ("Mean time between interruptions", lambda r: _hours(r.mtbi_s)),
        ("Checkpoint write (and reload)", lambda r: f"{r.checkpoint_write_s:,.1f} s"),
        ("Detection + restart", lambda r: _minutes(r.detection_s + r.restart_s)),
        ("Checkpoint interval", lambda r: _minutes(r.checkpoint_interval_s)),
        ("Lost per interruption", lambda r: _minutes(r.lost_per_interruption_s)),
        ("Lost to checkpoints", lambda r: f"{r.checkpoint_share:.1%}"),
        ("Lost to failures", lambda r: f"{r.failure_share:.1%}"),
        ("Throughput (tokens/s)", lambda r: f"{r.tokens_per_s:,.0f}"),
        ("Goodput (tokens/s)", lambda r: f"{r.goodput_tokens_per_s:,.0f}"),
        ("Goodput share", lambda r: f"{r.goodput_share:.1%}"),
    ]
    rows = [[name, *(show(r) for r in results)] for name, show in figures]
    for i, part in enumerate(results[0].parts):
        rows.append(
            [
                f"{part.label}: count, per day ({part.per_year:g} per part-year)",
                *(f"{r.parts[i].count:,}, {r.parts[i].interruptions_per_day:.3f}" for r in results),
            ]
        )
    return rows


class GoodputTab(ResultTab):
    """Goodput under failures of the document's scenario as InfiniBand and as RoCE."""

    def __init__(self, document: ScenarioDocument) -> None:
        self.document = document
        self.comparison: GoodputComparison | None = None
        self.ran_on: Scenario | None = None
        self._run_scenario: Scenario | None = None
        self.out_of_date = False
        self.interval_min = QDoubleSpinBox()
        self.interval_min.setObjectName("goodputInterval")
        self.interval_min.setRange(0.0, 10_000.0)
        self.interval_min.setDecimals(1)
        self.interval_min.setSuffix(" min")
        self.interval_min.setSpecialValueText("optimal (Young)")
        self.interval_min.setToolTip(
            "Work between checkpoints; 0 takes Young's optimum sqrt(2 x write time x MTBI)"
        )
        self.spares_box = QCheckBox("Hot spares")
        self.spares_box.setObjectName("goodputSpares")
        self.spares_box.setToolTip(
            "Restart on a standby host (catalog restart_with_spare_s) instead of rescheduling"
        )
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("goodputRun")
        self.goodput_label = QLabel("Goodput: –")
        self.goodput_label.setObjectName("goodputLabel")
        self.interruptions_label = QLabel("Interruptions per day: –")
        self.interruptions_label.setObjectName("goodputInterruptions")
        self.stale_label = QLabel("Out of date — the scenario changed; Run again")
        self.stale_label.setObjectName("goodputStale")
        self.stale_label.setStyleSheet(STALE_STYLE)
        self.stale_label.setVisible(False)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Checkpoint interval"))
        bar.addWidget(self.interval_min)
        bar.addWidget(self.spares_box)
        bar.addWidget(self.run_button)
        bar.addWidget(self.goodput_label)
        bar.addWidget(self.interruptions_label)
        bar.addWidget(self.stale_label)
        bar.addStretch(1)
        self.table = make_table("goodputTable", ["figure", "infiniband", "roce"])
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        self.link_errors = LinkErrorsView(document)
        row = QHBoxLayout()  # side by side, scrolling when squeezed: the tab keeps its height
        row.addWidget(self.table, 3)
        row.addWidget(scrolling(self.link_errors), 2)
        layout.addLayout(row, 1)
        super().__init__("goodputTab", body)
        self.set_exports([ExportTarget("goodput table", "goodput", self.export_table_csv)])
        self.set_info("Run to see job interruptions and goodput, InfiniBand beside RoCE.")
        self.worker = TaskWorker(self)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.run_button.clicked.connect(self.run)
        document.changed.connect(self._document_changed)

    def run(self) -> int:
        """Evaluate goodput of the current scenario on the worker; the request id."""
        scenario, catalog = self.document.scenario, self.document.catalog
        self._run_scenario = scenario
        minutes = self.interval_min.value()
        interval_s = minutes * 60.0 if minutes > 0 else None
        spares = self.spares_box.isChecked()
        self.run_button.setEnabled(False)
        self.set_info("Running: training step and parts of the InfiniBand and RoCE forms…")

        def job(task: Task) -> GoodputComparison:
            return goodput_by_technology(scenario, catalog, interval_s, hot_spares=spares)

        return self.worker.submit(KEY, job)

    def shutdown(self) -> None:
        """Drop any run and wait for its job to end (before the app quits)."""
        self.worker.shutdown()
        self.link_errors.shutdown()

    def _on_finished(self, _key: str, _request: int, result: object) -> None:
        self.run_button.setEnabled(True)
        if isinstance(result, GoodputComparison):
            self.show_comparison(result, self._run_scenario)

    def _on_failed(self, _key: str, _request: int, error: object) -> None:
        self.run_button.setEnabled(True)
        text = error.brief() if isinstance(error, ScenarioError) else f"{error}"
        self.set_error(f"Goodput not evaluated: {html.escape(text)}")

    def show_comparison(
        self, comparison: GoodputComparison, scenario: Scenario | None = None
    ) -> None:
        """Fill the table and the headline labels from `comparison`, the result of
        `scenario` (default: the document's current one)."""
        self.comparison = comparison
        self.ran_on = scenario if scenario is not None else self.document.scenario
        results = comparison.results
        set_header(self.table, ["figure", *(r.technology for r in results)])
        fill_table(self.table, result_rows(results))
        self.goodput_label.setText(
            "Goodput: " + ", ".join(f"{r.technology} {r.goodput_share:.1%}" for r in results)
        )
        self.interruptions_label.setText(
            f"Interruptions per day: {results[0].interruptions_per_day:.2f}"
        )
        self._document_changed()
        self.set_info(
            f"{results[0].scenario}: {results[0].gpus:,} GPUs in the job; " + results[0].notes[0]
        )

    def _document_changed(self) -> None:
        """Out of date once the scenario differs from the one the result ran on (canvas
        positions aside)."""
        if self.ran_on is not None:
            self._set_stale(study_inputs(self.ran_on) != study_inputs(self.document.scenario))

    def _set_stale(self, stale: bool) -> None:
        self.out_of_date = stale
        self.stale_label.setVisible(stale)
        self.table.setEnabled(not stale)

    def export_table_csv(self, path: str) -> None:
        """The goodput table as shown."""
        write_csv(path, table_header(self.table), table_rows(self.table))
