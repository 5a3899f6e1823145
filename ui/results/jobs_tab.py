"""The Jobs tab: several jobs sharing the fabric, each job's time alone and with the others.

The controls split the scenario's servers into equal jobs (`engine.analysis.equal_jobs`:
how many, their placement, servers writing a checkpoint to as many free ones, and inference
servers answering as many free front-ends) as one
undoable edit of the scenario's `jobs`; a list set by hand (`--set jobs=[...]`, a file)
is used as it is. Run hands the scenario to `engine.analysis.shared_run` on the tab's own
`TaskWorker`; the table shows one row per job (servers, slowest flow alone and shared, time
alone and shared, slowdown), converting units at the edge. Results belong to the scenario
they ran on: once it changes, the tab says they are out of date. `add_jobs_tab` is the main
window's one-line hook.
"""

from __future__ import annotations

import html
import json

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import SharedResult, equal_jobs, shared_run
from engine.model.errors import ScenarioError
from engine.model.jobs import PLACEMENTS
from engine.model.scenario import Scenario, to_dict
from ui.document.document import ScenarioDocument
from ui.results.congestion_tab import study_inputs
from ui.results.plot_export import ExportTarget, write_csv
from ui.results.result_tab import ResultTab
from ui.results.tables import fill_table, fit_columns, make_table, table_header, table_rows
from ui.work.tasks import Task, TaskWorker

KEY = "jobs"
STALE_STYLE = "color: #b26b00"
HEADER = [
    "job",
    "kind",
    "placement",
    "GPUs",
    "servers",
    "flow alone (Gb/s)",
    "flow shared (Gb/s)",
    "alone (ms)",
    "shared (ms)",
    "slowdown",
]


def _gbps(rate: float | None) -> str:
    return "NVLink only" if rate is None else f"{rate * 8 / 1e9:,.1f}"


def result_rows(result: SharedResult) -> list[list[str]]:
    """One row per job, in engineers' units."""
    rows = []
    for j in result.jobs:
        servers = ", ".join(str(s) for s in j.servers[:8]) + (" …" if len(j.servers) > 8 else "")
        rows.append(
            [
                j.name,
                j.kind,
                j.placement,
                f"{j.gpus:,}",
                f"{servers} ({len(j.servers)})",
                _gbps(j.alone_rate_Bps),
                _gbps(j.shared_rate_Bps),
                f"{j.alone_s * 1e3:,.3f}",
                f"{j.shared_s * 1e3:,.3f}",
                f"{j.slowdown:.2f}×",
            ]
        )
    return rows


class JobsTab(ResultTab):
    """Equal jobs on the document's fabric, and what they cost each other."""

    def __init__(self, document: ScenarioDocument) -> None:
        self.document = document
        self.result: SharedResult | None = None
        self.ran_on: Scenario | None = None
        self._run_scenario: Scenario | None = None
        self.count_spin = QSpinBox()
        self.count_spin.setObjectName("jobsCount")
        self.count_spin.setRange(1, 256)
        self.count_spin.setValue(2)
        self.placement_combo = QComboBox()
        self.placement_combo.setObjectName("jobsPlacement")
        self.placement_combo.addItems(list(PLACEMENTS))
        self.checkpoint_spin = QSpinBox()
        self.checkpoint_spin.setObjectName("jobsCheckpoint")
        self.checkpoint_spin.setRange(0, 100_000)
        self.checkpoint_spin.setToolTip(
            "Servers writing a checkpoint (background traffic) to as many free servers"
        )
        self.inference_spin = QSpinBox()
        self.inference_spin.setObjectName("jobsInference")
        self.inference_spin.setRange(0, 100_000)
        self.inference_spin.setToolTip(
            "Inference servers (background request/response traffic) answering as many free "
            "front-end servers"
        )
        self.split_button = QPushButton("Split into jobs")
        self.split_button.setObjectName("jobsSplit")
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("jobsRun")
        self.stale_label = QLabel("Out of date — the scenario changed; Run again")
        self.stale_label.setObjectName("jobsStale")
        self.stale_label.setStyleSheet(STALE_STYLE)
        self.stale_label.setVisible(False)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Jobs"))
        bar.addWidget(self.count_spin)
        bar.addWidget(QLabel("Placement"))
        bar.addWidget(self.placement_combo)
        background = QHBoxLayout()  # a second row: the first keeps the tab's width
        background.addWidget(QLabel("Background: checkpoint servers"))
        background.addWidget(self.checkpoint_spin)
        background.addWidget(QLabel("Inference servers"))
        background.addWidget(self.inference_spin)
        background.addStretch(1)
        bar.addWidget(self.split_button)
        bar.addWidget(self.run_button)
        bar.addWidget(self.stale_label)
        bar.addStretch(1)
        self.table = make_table("jobsTable", HEADER)
        fit_columns(self.table)  # the figures' columns fit their titles
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addLayout(background)
        layout.addWidget(self.table, 1)
        super().__init__("jobsTab", body)
        self.set_exports([ExportTarget("jobs table", "jobs", self.export_table_csv)])
        self.set_info("Split the servers into jobs (or set the scenario's jobs), then Run.")
        self.worker = TaskWorker(self)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.split_button.clicked.connect(self.split)
        self.run_button.clicked.connect(self.run)
        document.changed.connect(self._document_changed)

    def split(self) -> str | None:
        """Replace the scenario's jobs by equal ones from the controls (one undoable edit);
        the refusal message when the servers do not go round."""
        try:
            jobs = equal_jobs(
                self.document.scenario,
                self.document.catalog,
                self.count_spin.value(),
                self.placement_combo.currentText(),
                None,
                self.checkpoint_spin.value(),
                self.inference_spin.value(),
            )
        except ScenarioError as exc:
            self.set_error(html.escape(exc.brief()))
            return exc.brief()
        error = self.document.set_field("jobs", json.dumps([to_dict(j) for j in jobs]))
        if error:
            self.set_error(html.escape(error))
        else:
            self.set_info(f"{len(jobs)} jobs set on the scenario; Run to time them.")
        return error

    def run(self) -> int:
        """Time the scenario's jobs alone and shared on the worker; the request id."""
        scenario, catalog = self.document.scenario, self.document.catalog
        self._run_scenario = scenario
        self.run_button.setEnabled(False)
        self.set_info("Running: each job alone, then all of them at once…")

        def job(task: Task) -> SharedResult:
            return shared_run(scenario, catalog)

        return self.worker.submit(KEY, job)

    def shutdown(self) -> None:
        """Drop any run and wait for its job to end (before the app quits)."""
        self.worker.shutdown()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Stop the worker when the window this tab lives in closes."""
        if event.type() == QEvent.Type.Close:
            self.shutdown()
        return False

    def _on_finished(self, _key: str, _request: int, result: object) -> None:
        self.run_button.setEnabled(True)
        if isinstance(result, SharedResult):
            self.show_result(result, self._run_scenario)

    def _on_failed(self, _key: str, _request: int, error: object) -> None:
        self.run_button.setEnabled(True)
        text = error.brief() if isinstance(error, ScenarioError) else f"{error}"
        self.set_error(f"Jobs not timed: {html.escape(text)}")

    def show_result(self, result: SharedResult, scenario: Scenario | None = None) -> None:
        """Fill the table from `result`, the run of `scenario` (default: the current one)."""
        self.result = result
        self.ran_on = scenario if scenario is not None else self.document.scenario
        fill_table(self.table, result_rows(result))
        worst = max(result.jobs, key=lambda j: j.slowdown)
        self._document_changed()
        self.set_info(
            f"{result.scenario}: {len(result.jobs)} jobs, {result.storage_servers} servers "
            f"free; worst slowdown {worst.slowdown:.2f}× ({html.escape(worst.name)}). "
            + html.escape(result.notes[-1])
        )

    def _document_changed(self) -> None:
        if self.ran_on is not None:
            stale = study_inputs(self.ran_on) != study_inputs(self.document.scenario)
            self.stale_label.setVisible(stale)
            self.table.setEnabled(not stale)

    def export_table_csv(self, path: str) -> None:
        """The jobs table as shown."""
        write_csv(path, table_header(self.table), table_rows(self.table))


def add_jobs_tab(window: QMainWindow) -> JobsTab:
    """The Jobs tab in `window`'s results, stopped when the window closes."""
    tab = JobsTab(window.document)
    window.results.tabs.addTab(tab, "Jobs")
    window.installEventFilter(tab)
    return tab
