"""The Congestion tab: what PFC, ECN, DCQCN, credits and IB CC do to one traffic pattern.

The user picks a workload (`ui.results.congestion_workload`) and presses Run: the tab asks
its `TaskWorker` for one `engine.analysis.transport_study` of the document's scenario, with
progress in the bar and a Cancel button (a cancelled run stops at the engine's next
checkpoint and is dropped). The answer, a `TransportStudy`, fills a summary line (the
mechanisms that ran, efficiency against the ideal, per-flow throughput against the ideal,
drops, whether it stayed lossless, the victim's slowdown), the queue depth over time at the
hottest ports, the per-flow delivery rate of the slowest flow classes, and a table of the
hottest ports. The bundles' pause and mark shares go to the canvas (`sharesChanged`).

A study belongs to the scenario it ran on: once the document's scenario differs from it
(canvas positions aside), the tab says the results are out of date, the canvas withholds
its congestion colours, and an undo back to that scenario makes them current again.
"""

from __future__ import annotations

import dataclasses
import html
import re

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import TransportStudy, transport_study
from engine.catalog.devices import Catalog
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario
from ui.canvas.heat import CongestionShares
from ui.canvas.items import TECHNOLOGY_TITLES
from ui.document.document import ScenarioDocument
from ui.results.congestion_workload import WorkloadForm, workload_text
from ui.results.plot_axes import result_plot, si_text
from ui.results.plot_export import ExportTarget, plotted_series, write_csv, write_series_csv
from ui.results.result_tab import ResultTab
from ui.results.tables import fill_table, make_table, table_header, table_rows
from ui.work.tasks import Task, TaskWorker

KEY = "transport-study"
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
IDEAL_COLOR = "#7f7f7f"
STALE_OPACITY = 0.3
STALE_STYLE = "color: #b35900; font-weight: bold"
PORT_COLUMNS = [
    "port",
    "max kB",
    "mean kB",
    "paused",
    "marked",
    "dropped",
    "util.",
    "headroom",
]
PORT_TIPS = (
    "The directed link whose egress queue this is (click: select its bundle)",
    "Largest standing queue at the port, kB",
    "Mean standing queue over the run, kB",
    "Share of the time the port was paused (PFC) or waiting for credits",
    "Share of the port's bytes ECN-marked",
    "Bytes dropped (a lossy fabric: PFC off)",
    "Mean utilization of the link over the run",
    "Whether the buffer holds the PFC headroom the cable needs",
)
SCROLLBAR_ROOM = 14  # px under the workload's fields for their sideways scroll bar
BUNDLE_ROLE = Qt.ItemDataRole.UserRole
FLOW_LABEL = re.compile(r"gpu (\d+) -> gpu (\d+)")
VIEW_ROW, LEGEND_COLUMN = 2, 3  # in a PlotItem's grid: the view box's row, right of it


def short_link(link: str, bundle: str) -> str:
    """A port's name for a legend: ``leaf[0] → gpu[0]`` (its bundle is in the table)."""
    suffix = f" ({bundle})"
    name = link[: -len(suffix)] if bundle and link.endswith(suffix) else link
    return name.replace(" -> ", " → ")


def side_legend(plot: pg.PlotWidget) -> pg.LegendItem:
    """Give `plot` a legend in a column right of its curves instead of one over them (the
    results dock is short, and a legend inside a short plot hides the data). The column
    runs beside the x axis too, so a legend taller than the view box does not push the
    axis out of a short plot."""
    item = plot.getPlotItem()
    inside = item.legend
    if inside is not None and inside.scene() is not None:
        inside.scene().removeItem(inside)
    legend = pg.LegendItem(offset=None, labelTextSize="8pt", verSpacing=-4)
    legend.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Maximum)
    legend.setMinimumHeight(0)  # a long legend runs off a short plot rather than grow it
    item.legend = legend  # where plot() puts named curves, and what the theme restyles
    item.layout.addItem(legend, VIEW_ROW, LEGEND_COLUMN, 2, 1)  # view box and x axis rows
    item.layout.setAlignment(legend, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    title = item.titleLabel  # centred over curves and legend, not widening the curves' column
    item.layout.removeItem(title)
    item.layout.addItem(title, 0, 1, 1, LEGEND_COLUMN)
    return legend


def flow_name(label: str) -> str:
    """A flow class's name for a legend: ``gpu 8 → 56 (victim)``."""
    return FLOW_LABEL.sub(r"gpu \1 → \2", label).replace(" -> ", " → ")


def study_inputs(scenario: Scenario) -> Scenario:
    """`scenario` without what a study does not read (where its groups sit on the canvas),
    to tell whether a shown study still belongs to the document's scenario."""
    return dataclasses.replace(
        scenario, groups=[dataclasses.replace(g, position=(0.0, 0.0)) for g in scenario.groups]
    )


def failure_text(error: object) -> str:
    """Why a study could not run, in one line."""
    if isinstance(error, ScenarioError):
        return error.brief()
    return f"{type(error).__name__}: {error}"


def summary_text(study: TransportStudy) -> str:
    """The study in one line: mechanisms, efficiency, per-flow throughput against the
    ideal, drops, losslessness and the victim's slowdown."""
    mechanisms = " + ".join(study.mechanisms) or "ideal"
    mean = si_text(study.throughput_Bps.mean, "B/s")
    ideal = si_text(study.ideal_throughput_Bps.mean, "B/s")
    parts = [
        f"<b>{mechanisms}</b> on {TECHNOLOGY_TITLES.get(study.technology, study.technology)}",
        f"{study.flows:,} flows",
        f"efficiency <b>{study.efficiency:.0%}</b>",
        f"per flow {mean} vs ideal {ideal}",
        f"drops {si_text(study.dropped_bytes, 'B')}",
        "lossless" if study.lossless else "<b>lossy</b>",
    ]
    if study.victim_slowdown is not None:
        parts.append(f"victim slowdown <b>{study.victim_slowdown:.2f}×</b>")
    if not study.finished:
        parts.append("stopped at the horizon")
    parts.append(f"engine {study.engine_s:.2f} s")
    return " · ".join(parts)


def pause_label(study: TransportStudy) -> str:
    """What pauses a port in this study: PFC frames, or waiting for credits."""
    return "credit-stalled" if "credit" in study.mechanisms else "PFC"


class CongestionTab(ResultTab):
    """Workload form, Run / Cancel and progress beside the queue plot, the rate plot and
    the hottest-ports table (see the module docstring).

    `study` is the study shown (``None`` before the first); `out_of_date` says whether the
    scenario changed since it ran. Signals: `sharesChanged(shares, new)` with the canvas's
    `CongestionShares` (``None``: none) and whether a new study just arrived,
    `bundleActivated(bundle_id)` when a port row is clicked, `runFinished(cancelled)` and
    `runFailed(message)`.
    """

    sharesChanged = Signal(object, bool)
    bundleActivated = Signal(str)
    runFinished = Signal(bool)
    runFailed = Signal(str)

    def __init__(self, document: ScenarioDocument, catalog: Catalog | None = None) -> None:
        self.document = document
        self.catalog = catalog or document.catalog
        self.study: TransportStudy | None = None
        self.study_scenario: Scenario | None = None
        self.out_of_date = False
        self.running = False
        self._run_scenario: Scenario | None = None

        self.form = WorkloadForm()
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("congestionRunButton")
        self.run_button.setToolTip("Run the transport study of this workload on the scenario")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("congestionCancelButton")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setObjectName("congestionProgress")
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(120)
        self.progress.setVisible(False)
        self.controls = QWidget()
        self.controls.setObjectName("congestionControls")
        row = QHBoxLayout(self.controls)
        row.setContentsMargins(0, 0, 0, 0)
        # the workload's fields scroll sideways in a narrow dock instead of widening it
        fields = QScrollArea()
        fields.setObjectName("congestionFields")
        fields.setWidget(self.form)
        fields.setWidgetResizable(True)
        fields.setFrameShape(QFrame.Shape.NoFrame)
        fields.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        fields.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        fields.setFixedHeight(self.form.sizeHint().height() + SCROLLBAR_ROOM)
        row.addWidget(fields, 1)
        row.addWidget(self.progress)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)

        self.queue_plot = result_plot(
            "congestionQueuePlot", "time", "queue", log_x=False, log_y=False
        )
        self.rate_plot = result_plot("congestionRatePlot", "time", "rate", log_x=False, log_y=False)
        for plot, title, unit in (
            (self.queue_plot, "Queue at the hottest ports", "B"),
            (self.rate_plot, "Delivery rate per flow, slowest classes", "B/s"),
        ):
            plot.setTitle(title, size="9pt")
            for axis in ("bottom", "left"):
                plot.getAxis(axis).enableAutoSIPrefix(True)
            plot.setLabel("bottom", "time", units="s")
            plot.setLabel("left", plot.getAxis("left").labelText, units=unit)
            side_legend(plot)
        self.table = make_table("congestionPortsTable", PORT_COLUMNS)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)  # fits on fill
        header.setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(20)
        for column, tip in enumerate(PORT_TIPS):
            self.table.horizontalHeaderItem(column).setToolTip(tip)
        self.table.cellClicked.connect(self._row_clicked)
        results = QSplitter(Qt.Orientation.Horizontal)
        results.setObjectName("congestionResults")
        results.addWidget(self.queue_plot)
        results.addWidget(self.rate_plot)
        results.addWidget(self.table)
        results.setSizes([420, 420, 400])
        body = QWidget()
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.controls)
        column.addWidget(results, 1)
        super().__init__("congestionTab", body)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.stale_label = QLabel("Out of date — the scenario changed; Run again")
        self.stale_label.setObjectName("congestionStale")
        self.stale_label.setStyleSheet(STALE_STYLE)
        self.stale_label.setVisible(False)
        self.top.addWidget(self.stale_label)
        self.set_exports(
            [
                ExportTarget(
                    "queue plot", "congestion_queues", self.export_queue_csv, self.queue_plot
                ),
                ExportTarget("rate plot", "congestion_rates", self.export_rate_csv, self.rate_plot),
                ExportTarget("hottest ports table", "congestion_ports", self.export_table_csv),
            ]
        )
        self.set_info("Choose a workload and Run: queues, pauses and marks of the transport")

        self.worker = TaskWorker(self)
        self.worker.progress.connect(self._on_progress)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        document.changed.connect(self._document_changed)

    # ---- running ------------------------------------------------------------------------------

    def run(self) -> int:
        """Start a study of the form's workload on the current scenario (a running one goes
        stale); the request id."""
        scenario, workload, catalog = self.document.scenario, self.form.workload(), self.catalog
        self._run_scenario = scenario
        self.message.setEnabled(True)
        self._set_running(True)
        self.progress.setValue(0)
        self.set_info(f"Running {html.escape(workload_text(workload))}…")

        def job(task: Task) -> TransportStudy:
            return transport_study(scenario, workload, catalog, task.progress)

        return self.worker.submit(KEY, job)

    def cancel(self) -> None:
        """Drop the running study: it stops at the engine's next checkpoint."""
        if not self.running:
            return
        self.worker.cancel(KEY)
        self._set_running(False)
        self.progress.setValue(0)
        self.set_info(
            "Study cancelled" + (": the results below are the last run's" if self.study else "")
        )
        self.runFinished.emit(True)

    def shutdown(self) -> None:
        """Drop any run and wait for its job to end (before the app quits)."""
        self.worker.shutdown()

    def _set_running(self, running: bool) -> None:
        self.running = running
        self.progress.setVisible(running)
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    def _on_progress(self, _key: str, _request: int, fraction: float, stage: str) -> None:
        self.progress.setValue(round(100 * fraction))
        self.set_info(f"Running: {html.escape(stage)}…")

    def _on_finished(self, _key: str, _request: int, study: object) -> None:
        self._set_running(False)
        self.progress.setValue(0)
        if isinstance(study, TransportStudy):
            self.show_study(study, self._run_scenario)
        self.runFinished.emit(False)

    def _on_failed(self, _key: str, _request: int, error: object) -> None:
        message = failure_text(error)
        self._set_running(False)
        self.progress.setValue(0)
        self.set_error(f"Study failed: {html.escape(message)}")
        self.runFailed.emit(message)

    # ---- showing ------------------------------------------------------------------------------

    def show_study(self, study: TransportStudy, scenario: Scenario | None = None) -> None:
        """Show `study` (of `scenario`, default: the document's current one) and send its
        bundle shares to the canvas."""
        self.study = study
        self.study_scenario = scenario if scenario is not None else self.document.scenario
        summary = summary_text(study)
        what = html.escape(workload_text(study.workload))
        notes = "".join(f"<br><small>{html.escape(note)}</small>" for note in study.notes)
        self.set_info(f"{what}: {summary}{notes}")
        self._plot_queues(study)
        self._plot_rates(study)
        self._fill_ports(study)
        self._update_staleness(new=True)

    def _plot_queues(self, study: TransportStudy) -> None:
        plot = self.queue_plot
        plot.clear()
        for k, port in enumerate(study.port_series):
            color = COLORS[k % len(COLORS)]
            plot.plot(
                list(port.time_s),
                list(port.queue_bytes),
                pen=pg.mkPen(color, width=2),
                name=short_link(port.link, port.bundle),
            )
        plot.enableAutoRange()

    def _plot_rates(self, study: TransportStudy) -> None:
        plot = self.rate_plot
        plot.clear()
        end = 0.0
        for k, flow in enumerate(study.flow_series):
            color = COLORS[k % len(COLORS)]
            per_flow = [rate / max(1, flow.flows) for rate in flow.rate_Bps]
            name = flow_name(flow.label)
            name = name if flow.flows == 1 else f"{name} (each of {flow.flows})"
            plot.plot(list(flow.time_s), per_flow, pen=pg.mkPen(color, width=2), name=name)
            end = max(end, max(flow.time_s, default=0.0))
        ideal = study.ideal_throughput_Bps.mean
        if end > 0 and ideal > 0:  # a labelled line, not one more legend row
            plot.addItem(
                pg.InfiniteLine(
                    pos=ideal,
                    angle=0,
                    pen=pg.mkPen(IDEAL_COLOR, width=1.5, style=Qt.PenStyle.DashLine),
                    label="ideal, mean per flow",
                    # mid-way, under the line: its right end is under the legend's column,
                    # and above it the view often ends (a transport that reaches the ideal)
                    labelOpts={
                        "position": 0.5,
                        "color": IDEAL_COLOR,
                        "anchors": [(0.5, 0), (0.5, 0)],
                    },
                )
            )
        plot.enableAutoRange()

    def _fill_ports(self, study: TransportStudy) -> None:
        rows = [
            [
                short_link(p.link, p.bundle),
                f"{p.max_queue_bytes / 1e3:,.1f}",
                f"{p.mean_queue_bytes / 1e3:,.1f}",
                f"{p.pause_fraction:.1%}",
                f"{p.ecn_mark_fraction:.1%}",
                si_text(p.dropped_bytes, "B"),
                f"{p.utilization:.0%}",
                "ok" if p.headroom_ok else "too small",
            ]
            for p in study.hottest
        ]
        fill_table(self.table, rows)
        for row, port in enumerate(study.hottest):
            item = self.table.item(row, 0)
            item.setData(BUNDLE_ROLE, port.bundle)
            item.setToolTip(f"{port.link}: click to select bundle {port.bundle} on the canvas")
        self.table.resizeColumnsToContents()

    def _document_changed(self) -> None:
        self._update_staleness(new=False)

    def _update_staleness(self, new: bool) -> None:
        study, ran_on = self.study, self.study_scenario
        if study is None or ran_on is None:
            return
        stale = study_inputs(ran_on) != study_inputs(self.document.scenario)
        if not new and stale == self.out_of_date:
            return
        self.out_of_date = stale
        self.stale_label.setVisible(stale)
        self.message.setEnabled(not stale)  # the old summary greys out beside the warning
        self.table.setEnabled(not stale)
        for plot in (self.queue_plot, self.rate_plot):  # faded curves: not this scenario's
            for item in plot.getPlotItem().items:
                item.setOpacity(STALE_OPACITY if stale else 1.0)
        shares = CongestionShares(
            pause=study.bundle_pause_fraction,
            mark=study.bundle_mark_fraction,
            pause_label=pause_label(study),
            current=not stale,
        )
        self.sharesChanged.emit(shares, new and not stale)

    def _row_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        self.bundleActivated.emit(str(item.data(BUNDLE_ROLE) or "") if item else "")

    # ---- export -------------------------------------------------------------------------------

    def export_queue_csv(self, path: str) -> None:
        """The queue plot's curves: time (s), then the queue (bytes) of each port."""
        write_series_csv(path, "time (s)", "queue (B)", plotted_series(self.queue_plot))

    def export_rate_csv(self, path: str) -> None:
        """The rate plot's curves: time (s), then the per-flow rate (B/s) of each class."""
        write_series_csv(path, "time (s)", "rate (B/s)", plotted_series(self.rate_plot))

    def export_table_csv(self, path: str) -> None:
        """The hottest ports table as shown."""
        write_csv(path, table_header(self.table), table_rows(self.table))
