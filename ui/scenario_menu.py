"""The Scenario menu and File > New: variants of the current scenario and the compare view.

`ScenarioMenu` is mixed into `MainWindow` (before `QMainWindow`, beside `WindowMenus`):
`_build_scenario_menu` adds File > New (a blank scenario), and a Scenario menu with "Make an
Ethernet/RoCE variant" and "Make an InfiniBand variant" (each one undo step, through
`ScenarioDocument.make_variant`, so Ctrl+Z gives the original back) and "Compare
scenarios…", which opens a `CompareDialog` on the current scenario, the pins and the
library's scenarios. It also docks the Workload panel (`ui.workload_panel`) as a tab beside
the palette (on the left, where a tall form does not squeeze the results dock). File > Export report… writes one self-contained HTML file
(`engine.analysis.html_report`): the last report's figures, the comparison last made, the
plots as images, the bill of materials and every assumption with its source.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMenu, QMessageBox, QScrollArea

from engine.analysis import AppReport, html_report
from engine.model.scenario import Metadata, Scenario
from ui.document.document import TECHNOLOGY_NAMES
from ui.library.cache import cached_report
from ui.library.dialogs import LIBRARY_ERRORS, error_text
from ui.results.compare_view import Candidate, CandidateError, CompareDialog
from ui.results.plot_export import export_png
from ui.workload_panel import WorkloadPanel

CURRENT_SUFFIX = " (current)"


class ScenarioMenu:
    """File > New and the Scenario menu of the main window (a mixin; see the module)."""

    compare_dialog: CompareDialog | None = None

    def _build_scenario_menu(self) -> None:
        self.new_action = QAction("&New", self)
        self.new_action.setObjectName("newBlank")
        self.new_action.setShortcut(QKeySequence("Ctrl+N"))
        self.new_action.setToolTip("A blank scenario: an empty canvas (undoable)")
        self.new_action.triggered.connect(self.new_blank)
        self.template_action.setShortcut(QKeySequence("Ctrl+Shift+N"))
        self.file_menu.insertAction(self.template_action, self.new_action)
        self.roce_action = QAction("Make an &Ethernet/RoCE variant", self)
        self.roce_action.setObjectName("makeRoce")
        self.roce_action.triggered.connect(lambda: self.make_variant("roce"))
        self.ib_action = QAction("Make an &InfiniBand variant", self)
        self.ib_action.setObjectName("makeInfiniband")
        self.ib_action.triggered.connect(lambda: self.make_variant("infiniband"))
        self.compare_action = QAction("&Compare scenarios…", self)
        self.compare_action.setObjectName("compareScenarios")
        self.compare_action.setShortcut(QKeySequence("Ctrl+Shift+C"))
        self.compare_action.triggered.connect(self.open_compare)
        self.report_action = QAction("Export &report…", self)
        self.report_action.setObjectName("exportReport")
        self.report_action.setToolTip(
            "One HTML file: figures, comparison, plots, bill of materials, assumptions"
        )
        self.report_action.triggered.connect(lambda: self.export_report())
        self.file_menu.insertAction(self.quit_action, self.report_action)
        self.file_menu.insertSeparator(self.quit_action)
        self.scenario_menu = QMenu("&Scenario", self)
        self.scenario_menu.addActions([self.roce_action, self.ib_action])
        self.scenario_menu.addSeparator()
        self.scenario_menu.addAction(self.compare_action)
        self.menuBar().insertMenu(self.run_menu.menuAction(), self.scenario_menu)
        self.addActions([self.new_action, self.compare_action])
        self.document.changed.connect(self._enable_variants)
        self._enable_variants()
        self.canvas.propertiesRequested.connect(self.show_inspector)
        self.workload_panel = WorkloadPanel(self.document)
        dock = QDockWidget("Workload", self)
        dock.setObjectName("workloadDock")
        scroll = QScrollArea()  # a long form scrolls rather than squeeze the results dock
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(self.workload_panel)
        dock.setWidget(scroll)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        palette = self.findChild(QDockWidget, "paletteDock")
        if palette is not None:
            self.tabifyDockWidget(palette, dock)
            palette.raise_()
        self.view_menu.insertAction(self.theme_menu.menuAction(), dock.toggleViewAction())

    def show_inspector(self) -> None:
        """Show and raise the inspector dock (a context menu's "Properties")."""
        dock = self.findChild(QDockWidget, "inspectorDock")
        if dock is not None:
            dock.show()
            dock.raise_()

    def _enable_variants(self) -> None:
        technology = self.document.scenario.fabric.technology
        self.roce_action.setEnabled(technology != "roce")
        self.ib_action.setEnabled(technology != "infiniband")

    def new_blank(self) -> bool:
        """File > New: an empty scenario on the current fabric technology (one undo step)."""
        blank = Scenario(metadata=Metadata(name="untitled"))
        blank.fabric.technology = self.document.scenario.fabric.technology
        return self.document.replace_with(blank, "New blank scenario")

    def make_variant(self, technology: str) -> bool:
        """Scenario > Make an ... variant: the current scenario on `technology`'s switches,
        transport and prices, as one undo step; a refusal is shown, never raised."""
        name = TECHNOLOGY_NAMES.get(technology, technology)
        refusal = self.document.make_variant(technology)
        if refusal is not None:
            self.statusBar().showMessage(f"No {name} variant: {refusal}", 10000)
            QMessageBox.warning(self, "FabricLab", f"Cannot make the {name} variant:\n\n{refusal}")
            return False
        self.statusBar().showMessage(
            f"Made the {name} variant: {self.document.scenario.metadata.name} (Ctrl+Z undoes)",
            10000,
        )
        return True

    def report_images(self) -> list[tuple[str, bytes]]:
        """The plots the report embeds: the collective's busbw and time, and the compare
        view's overlaid busbw when a comparison was made (caption, PNG bytes)."""
        tab = self.results.collective_tab
        plots = [
            ("Bus bandwidth per algorithm", tab.busbw_plot),
            ("Time per algorithm", tab.time_plot),
        ]
        dialog = self.compare_dialog
        if dialog is not None and dialog.table_result is not None:
            plots.append(("Compared scenarios: busbw (best algorithm)", dialog.plot))
        if dialog is not None and dialog.verdict.result is not None:
            plots.append(("The verdict's range: each unknown's swing", dialog.verdict.plot))
        images = []
        with tempfile.TemporaryDirectory() as folder:
            for i, (caption, plot) in enumerate(plots):
                path = Path(folder) / f"{i}.png"
                export_png(plot, str(path))
                images.append((caption, path.read_bytes()))
        return images

    def export_report(self, path: str | None = None) -> str | None:
        """File > Export report…: write the HTML report to `path` (asked for when None);
        the path written, or ``None`` (nothing evaluated yet, cancelled, or unwritable)."""
        report = self.last_report
        if report is None:
            self.statusBar().showMessage("No report yet: evaluate the scenario first (F5)", 8000)
            return None
        name = self.document.scenario.metadata.name or "scenario"
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self, "Export report", f"{name}.html", "HTML report (*.html)"
            )
            if not path:
                return None
        dialog = self.compare_dialog
        comparison = dialog.table_result if dialog is not None else None
        verdict = dialog.verdict.result if dialog is not None else None
        ran = (report.scenario or {}).get("metadata", {}).get("name", name)  # the run's name
        try:
            images = self.report_images()
            text = html_report(
                report, f"FabricLab report: {ran}", report.scenario, comparison, images, verdict
            )
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            self._file_error(f"Cannot write {path}", str(exc))
            return None
        self.statusBar().showMessage(f"Report written to {path}", 8000)
        return path

    def compare_candidates(self) -> list[Candidate]:
        """The scenarios Compare can pick: the current one, the pins, the library's."""
        current = self.document.scenario
        candidates = [Candidate(current.metadata.name + CURRENT_SUFFIX, scenario=current)]
        candidates += [
            Candidate(f"pinned: {pin.label}", report=pin.report) for pin in self.results.pins.pins()
        ]
        session = self.library_session
        if session is not None:
            library = session.library
            try:
                names = library.names()
            except LIBRARY_ERRORS:  # an unreadable library offers nothing, the rest still works
                names = []
            for name in names:

                def load(name: str = name) -> tuple[Scenario, AppReport | None]:
                    try:
                        scenario = library.load(name)
                    except LIBRARY_ERRORS as exc:
                        raise CandidateError(error_text(exc)) from exc
                    return scenario, cached_report(library, scenario)

                candidates.append(Candidate(f"library: {name}", load=load))
        return candidates

    def open_compare(self) -> CompareDialog:
        """Scenario > Compare scenarios…: the compare view (current and first pin ticked)."""
        if self.compare_dialog is not None:
            self.compare_dialog.close()
            self.compare_dialog.deleteLater()
        dialog = CompareDialog(self.compare_candidates(), self.catalog, self)
        self.compare_dialog = dialog
        dialog.show()
        return dialog
