"""The results dock: the permutation summary, pins, and the Collective/Links/Training/Cost tabs.

Every tab draws what the worker's report holds (no computation here). Reports can be pinned
for comparison: a pinned report stays on the plots (dashed, in its own colour, named in the
legend) and in the comparison tables while the current scenario is edited and re-evaluated.
GPU utilization vs switch latency is the one figure not in the report: it costs a training
step per point, so the panel asks `LatencyCurveWorker` for it (off the GUI thread) when the
Training tab is shown, for the current report and for the pins, and keeps each curve beside
its (frozen) report in `LatencyCurves`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QGraphicsOpacityEffect,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import LATENCIES_NS, AppReport, StorageSummary
from engine.catalog.devices import Catalog, default_catalog
from ui.document.document import ScenarioDocument
from ui.results.collective_tab import CollectiveTab
from ui.results.cost_tab import CostTab
from ui.results.latency_curves import LatencyCurves
from ui.results.links_tab import LinksTab
from ui.results.pins import PinBoard
from ui.results.plot_export import export_png as export_plot_png
from ui.results.plot_export import export_svg as export_plot_svg
from ui.results.training_tab import TrainingTab, scenario_name
from ui.work.latency import LatencyCurveWorker

CURRENT = "current"
STALE_OPACITY = 0.45  # results of an older revision stay readable but visibly not current


def failures_note(scenario: Mapping[str, Any] | None) -> str:
    """What the run had failed, from the scenario it ran (its JSON form): " — with 1 switch
    of spine and 4 cables of leaf-spine down"; empty when nothing was failed."""
    failures = (scenario or {}).get("failures") or {}
    switches: dict[str, int] = {}
    for f in failures.get("switches", []):
        switches[f["group"]] = switches.get(f["group"], 0) + 1
    parts = [f"{n} switch{'es' if n > 1 else ''} of {g}" for g, n in switches.items()]
    parts += [
        f"{f['links_down']} cable{'s' if f['links_down'] > 1 else ''} of {f['bundle']}"
        for f in failures.get("links", [])
        if f.get("links_down")
    ]
    return f" — with {' and '.join(parts)} down" if parts else ""


def storage_note(storage: StorageSummary | None) -> str:
    """The storage network's checkpoint in a few words (" — storage network: 8 nodes,
    checkpoint 0.41 s at 84 GB/s, bound by the storage nodes' drives"); empty without
    one."""
    if storage is None:
        return ""
    head = f" — storage network: {storage.nodes} nodes"
    if storage.checkpoint_s is None or storage.checkpoint_Bps is None:
        return f"{head}, checkpoint not run"
    return (
        f"{head}, checkpoint {storage.checkpoint_s:.3g} s at "
        f"{storage.checkpoint_Bps / 1e9:,.0f} GB/s, bound by the {storage.checkpoint_bound}"
    )


def _latency_span() -> str:
    return f"{LATENCIES_NS[0] / 1e3:g}–{LATENCIES_NS[-1] / 1e3:g} µs per switch"


class ResultsPanel(QWidget):
    """The summary line and pin buttons above the results tabs.

    Collective: busbw and time vs message size (log-log), a curve per algorithm. Links: the
    utilization histogram per tier and the hottest links; clicking a row emits
    `bundleActivated(bundle_id)`. Training: the step breakdown and GPU utilization vs switch
    latency. Cost: the bill of materials. Each tab's Export menu saves its plots as PNG, SVG
    and CSV and its tables as CSV. `pin_report`, `unpin`, `clear_pins` and `pinned_labels`
    manage the pinned reports (the library dock's comparison uses them too). With a
    `document` (or after `set_document`) the Collective tab's bar edits the workload's NCCL
    algorithm and protocol through it.
    """

    bundleActivated = Signal(str)

    def __init__(
        self,
        parent: QWidget | None = None,
        catalog: Catalog | None = None,
        document: ScenarioDocument | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("resultsPanel")
        self.catalog = catalog
        self.report: AppReport | None = None
        self.pins = PinBoard()
        self.latency_curves = LatencyCurves()
        self.latency_worker = LatencyCurveWorker(self)
        self.latency_worker.point.connect(self._latency_point)
        self.latency_worker.finished.connect(self._latency_finished)
        self.latency_worker.failed.connect(self._latency_failed)
        self._latency_jobs: dict[str, AppReport] = {}  # key -> the report it is for

        self.summary = QLabel("No results yet")
        self.summary.setObjectName("permutationSummary")
        self.summary.setWordWrap(True)
        self.revision: int | None = None  # the scenario revision the shown results belong to
        self.revision_label = QLabel()
        self.revision_label.setObjectName("resultsRevision")
        self.stale_banner = QLabel()
        self.stale_banner.setObjectName("staleBanner")
        self.stale_banner.setWordWrap(True)
        self.stale_banner.setStyleSheet(
            "QLabel#staleBanner { background: #f3c94b; color: #1b1b1b; padding: 4px 8px; }"
        )
        self.stale_banner.hide()
        self.pin_button = QPushButton("Pin current")
        self.pin_button.setObjectName("pinCurrentButton")
        self.pin_button.setToolTip("Keep these results on the plots to compare with later edits")
        self.pin_button.setEnabled(False)
        self.pin_button.clicked.connect(self.pin_current)
        self.clear_pins_button = QPushButton("Clear pins")
        self.clear_pins_button.setObjectName("clearPinsButton")
        self.clear_pins_button.setEnabled(False)
        self.clear_pins_button.clicked.connect(self.clear_pins)
        self.pins_label = QLabel()
        self.pins_label.setObjectName("pinsLabel")
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.revision_label)
        top.addWidget(self.pins_label)
        top.addWidget(self.pin_button)
        top.addWidget(self.clear_pins_button)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("resultsTabs")
        self.collective_tab = CollectiveTab(document)
        self.links_tab = LinksTab()
        self.training_tab = TrainingTab(document)
        self.cost_tab = CostTab()
        self.tabs.addTab(self.collective_tab, "Collective")
        self.tabs.addTab(self.links_tab, "Links")
        self.tabs.addTab(self.training_tab, "Training")
        self.tabs.addTab(self.cost_tab, "Cost")
        self.tabs.currentChanged.connect(lambda _index: self._request_latency_curves())
        self.links_tab.bundleActivated.connect(self.bundleActivated)

        self._greyed = QGraphicsOpacityEffect(self.tabs)
        self._greyed.setOpacity(STALE_OPACITY)
        self._greyed.setEnabled(False)
        self.tabs.setGraphicsEffect(self._greyed)

        layout = QVBoxLayout(self)
        layout.addWidget(self.stale_banner)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)

        # the widgets tests and other panels reach for
        self.plot = self.collective_tab.busbw_plot
        self.time_plot = self.collective_tab.time_plot
        self.curves = self.collective_tab.curves
        self.time_curves = self.collective_tab.time_curves
        self.histogram_plot = self.links_tab.histogram_plot
        self.links_table = self.links_tab.table
        self.training_table = self.training_tab.table
        self.latency_plot = self.training_tab.latency_plot
        self.gpu_util_label = self.training_tab.gpu_util_label
        self.mfu_label = self.training_tab.mfu_label
        self.cost_table = self.cost_tab.table
        self.capex_label = self.cost_tab.capex_label
        self.network_share_label = self.cost_tab.network_share_label
        self.cost_per_gpu_label = self.cost_tab.cost_per_gpu_label

    def set_document(self, document: ScenarioDocument) -> None:
        """Let the Collective tab's algorithm and protocol bar and the Training tab's job
        controls show and edit `document`."""
        self.collective_tab.set_document(document)
        self.training_tab.set_document(document)

    # ---- showing a report ---------------------------------------------------------------------

    def show_report(self, report: AppReport, revision: int | None = None) -> None:
        """Fill every tab from the report (pins stay) and summarise its permutation test;
        `revision` is the scenario revision it belongs to (the results are current again)."""
        self.revision = revision
        self.revision_label.setText("" if revision is None else f"revision {revision}")
        self.stale_banner.hide()
        self._greyed.setEnabled(False)
        if self.report is not report:
            self.latency_worker.cancel(CURRENT)
            self._latency_jobs.pop(CURRENT, None)
        self.report = report
        self._forget_unshown_curves()
        self.pin_button.setEnabled(True)
        self.collective_tab.show_report(report)
        perm = report.permutation
        if perm is not None:
            mean = perm.throughput_fraction.mean
            self.summary.setText(
                f"Permutation ({perm.routing}): mean throughput {mean:.1%} of line rate, "
                f"{perm.below_99pct_fraction:.1%} of flows below 99 %"
                + failures_note(report.scenario)
                + storage_note(report.storage)
            )
            self.links_tab.show_permutation(perm)
        self.training_tab.show_training(report.training, report.training_error)
        self.cost_tab.show_cost(report.cost, report.cost_error)
        self._show_current_latency()
        self._show_pins()
        self._request_latency_curves()

    def set_status(self, text: str) -> None:
        """Show a state such as ``cancelled`` or an error instead of the summary."""
        self.summary.setText(text)

    def mark_stale(self, reason: str) -> None:
        """The scenario moved on and no run of it succeeded (`reason`: failed, cancelled,
        not evaluated): grey the results and say which revision they still show."""
        if self.report is None:
            self.stale_banner.setText(f"No results: {reason}")
        elif self.revision is None:
            self.stale_banner.setText(f"Out of date: {reason}; these are the last good results")
        else:
            self.stale_banner.setText(
                f"Out of date: last good run of revision {self.revision} ({reason})"
            )
        self.stale_banner.show()
        self._greyed.setEnabled(self.report is not None)

    @property
    def stale(self) -> bool:
        """Whether the results shown are marked out of date."""
        return not self.stale_banner.isHidden()

    # ---- pins ---------------------------------------------------------------------------------

    def pin_report(self, label: str, report: AppReport) -> None:
        """Keep `report` on the plots and in the comparison tables as `label` (replacing a pin
        of the same label) until it is unpinned."""
        self.pins.add(label, report)
        self._show_pins()
        self._request_latency_curves()

    def unpin(self, label: str) -> None:
        """Take the pin `label` off the plots and tables (nothing happens for an unknown one)."""
        if self.pins.remove(label):
            self.latency_worker.cancel(self._pin_key(label))
            self._latency_jobs.pop(self._pin_key(label), None)
            self._forget_unshown_curves()
            self._show_pins()

    def clear_pins(self) -> None:
        """Take every pin off the plots and tables."""
        for label in self.pins.labels():
            self.latency_worker.cancel(self._pin_key(label))
            self._latency_jobs.pop(self._pin_key(label), None)
        self.pins.clear()
        self._forget_unshown_curves()
        self._show_pins()

    def pinned_labels(self) -> list[str]:
        """The labels of the pinned reports, oldest first."""
        return self.pins.labels()

    def pin_current(self) -> str | None:
        """Pin the report shown now under its scenario's name (numbered if taken); the label."""
        if self.report is None:
            return None
        label = self.pins.free_label(scenario_name(self.report))
        self.pin_report(label, self.report)
        return label

    def _show_pins(self) -> None:
        pins = self.pins.pins()
        self.collective_tab.show_pins(pins)
        self.training_tab.show_pins(pins, self.report, self.latency_curves)
        self.cost_tab.show_pins(pins, self.report)
        self.clear_pins_button.setEnabled(bool(pins))
        self.pins_label.setText(f"{len(pins)} pinned" if pins else "")
        self.pins_label.setToolTip("\n".join(self.pins.labels()))

    @staticmethod
    def _pin_key(label: str) -> str:
        return f"pin:{label}"

    def _forget_unshown_curves(self) -> None:
        self.latency_curves.keep_only([self.report, *(p.report for p in self.pins.pins())])

    # ---- GPU utilization vs latency -----------------------------------------------------------

    def _latency_subjects(self) -> list[tuple[str, AppReport]]:
        subjects = [(CURRENT, self.report)] if self.report is not None else []
        subjects += [(self._pin_key(p.label), p.report) for p in self.pins.pins()]
        return subjects

    def _request_latency_curves(self) -> None:
        """Ask the latency worker for every shown report's curve, if the Training tab shows."""
        if self.tabs.currentWidget() is not self.training_tab:
            return
        catalog = self._catalog()
        for key, report in self._latency_subjects():
            if self.latency_curves.settled(report):
                continue
            if report.training is None or report.scenario is None:
                continue
            if any(job is report for job in self._latency_jobs.values()):
                continue  # already coming (the current report pinned, say)
            self._latency_jobs[key] = report
            self.latency_worker.request(key, dict(report.scenario), catalog)
        self._show_current_latency()

    def _catalog(self) -> Catalog:
        window_catalog = getattr(self.window(), "catalog", None)
        if self.catalog is not None:
            return self.catalog
        return window_catalog if isinstance(window_catalog, Catalog) else default_catalog()

    def _show_current_latency(self, partial: list[dict[str, Any]] | None = None) -> None:
        report = self.report
        rows = self.latency_curves.rows(report)
        error = self.latency_curves.error(report)
        if rows:
            status = (
                f"GPU utilization at {len(rows)} switch latencies, {_latency_span()}; "
                "each point is a whole training step"
            )
        elif error:
            status = f"GPU utilization vs latency not evaluated: {error}"
        elif report is None or report.training is None:
            rows, status = None, "GPU utilization vs latency needs a training step"
        elif any(job is report for job in self._latency_jobs.values()):
            rows = partial
            done = len(partial or [])
            status = f"Computing GPU utilization vs latency: {done} / {len(LATENCIES_NS)} points…"
        elif report.scenario is None:
            status = "This report does not carry its scenario: re-evaluate to see the curve"
        else:
            status = "Open this tab to compute GPU utilization vs latency"
        self.training_tab.show_latency(rows, status)

    def _latency_point(self, key: str, rows: object) -> None:
        if self._latency_jobs.get(key) is self.report:
            self._show_current_latency(list(rows))

    def _latency_finished(self, key: str, rows: object) -> None:
        report = self._latency_jobs.pop(key, None)
        if report is None:
            return
        self.latency_curves.set_rows(report, list(rows))
        self._show_current_latency()
        self._show_pins()

    def _latency_failed(self, key: str, message: str) -> None:
        report = self._latency_jobs.pop(key, None)
        if report is None:
            return
        self.latency_curves.set_error(report, message)
        self._show_current_latency()

    def shutdown(self) -> None:
        """Stop the latency worker (before the app quits)."""
        self.latency_worker.shutdown()

    # ---- export -------------------------------------------------------------------------------

    def export_png(self, path: str) -> None:
        """Write the busbw plot to `path` as a PNG image."""
        export_plot_png(self.plot, path)

    def export_svg(self, path: str) -> None:
        """Write the busbw plot to `path` as an SVG drawing."""
        export_plot_svg(self.plot, path)

    def export_collective_csv(self, path: str) -> None:
        """Message size (bytes) and busbw (GB/s) of every plotted curve, one row per size."""
        self.collective_tab.export_busbw_csv(path)

    def export_collective_time_csv(self, path: str) -> None:
        """Message size (bytes) and time (s) of every plotted curve, one row per size."""
        self.collective_tab.export_time_csv(path)

    def export_histogram_csv(self, path: str) -> None:
        """The utilization histogram: bin edges (%) and links per tier pair."""
        self.links_tab.export_histogram_csv(path)

    def export_links_csv(self, path: str) -> None:
        """The hottest links table."""
        self.links_tab.export_table_csv(path)

    def export_training_csv(self, path: str) -> None:
        """The training step breakdown table."""
        self.training_tab.export_table_csv(path)

    def export_latency_csv(self, path: str) -> None:
        """GPU utilization (%) vs switch latency (s) of every plotted curve."""
        self.training_tab.export_latency_csv(path)

    def export_cost_csv(self, path: str) -> None:
        """The bill of materials table."""
        self.cost_tab.export_table_csv(path)
