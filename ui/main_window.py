"""The main window: canvas in the centre, inspector on the right, results at the bottom.

Edits reach the `ScenarioDocument` (undoable); each change re-checks the structure at once
and, after a short debounce, asks the `EvaluationWorker` for a fresh evaluation off the GUI
thread. The status bar shows the validation state, the engine time and, while a run is in
progress, a cancel button. The actions and menus come from `WindowMenus` (`ui.menus`); with
a library the window hands a `LibrarySession` what it needs (`SessionHost`).
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.analysis import DEFAULT_PRESET, AppReport, load_preset
from engine.catalog.devices import Catalog, default_catalog
from engine.library.store import Library
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario
from ui.about import AboutDialog
from ui.canvas.view import FabricCanvas
from ui.custom_devices import CustomDevices
from ui.document.document import ScenarioDocument
from ui.formats import FormatActions
from ui.icons import set_action_icons
from ui.inspector import Inspector
from ui.library.host import SessionHost
from ui.library.measured import measured_runs_of
from ui.library.session import LibrarySession
from ui.menus import WindowMenus
from ui.palette import Palette
from ui.problems import ProblemsPanel
from ui.results.congestion_tab import CongestionTab
from ui.results.goodput_tab import GoodputTab
from ui.results.jobs_tab import add_jobs_tab
from ui.results.panel import ResultsPanel
from ui.results.sweep_panel import SweepPanel
from ui.run_messages import RunMessages, summary_html
from ui.scenario_menu import ScenarioMenu
from ui.settings import SettingsStore, first_start_docks, restore_splitters, save_splitters
from ui.templates import TemplateDialog
from ui.theme import THEME_SETTING, apply_app_theme, apply_theme_to, theme_named
from ui.work.evaluation import EvaluationWorker

DEBOUNCE_MS = 150


class MainWindow(ScenarioMenu, WindowMenus, FormatActions, QMainWindow):
    """FabricLab's top-level window, opened on `scenario` (default: the default preset).

    `settings` (the app passes `app_settings()`) restores the window geometry and state at
    start, stores them on close, and keeps File > Open Recent. `library` (the app passes
    the user's) adds the Library dock and File > Save into it (`LibrarySession`); without
    one the window has no library features. `evaluated(scenario, report)` follows every
    finished run.
    """

    evaluated = Signal(object, object)

    def __init__(
        self,
        scenario: Scenario | None = None,
        catalog: Catalog | None = None,
        evaluate_on_start: bool = True,
        settings: QSettings | None = None,
        library: Library | None = None,
    ) -> None:
        super().__init__()
        # where geometry, dock state and recent files persist (`app_settings()` in the app);
        # without one they live only as long as the window
        self.settings = settings
        self.store = SettingsStore(settings)
        self.catalog = catalog or default_catalog()
        self.document = ScenarioDocument(
            scenario if scenario is not None else load_preset(DEFAULT_PRESET), self.catalog, self
        )
        self.worker = EvaluationWorker(self.catalog, self)
        self._requests: dict[int, Scenario] = {}
        self._revisions: dict[int, int] = {}  # request id -> the document revision it ran
        self.last_report: AppReport | None = None
        self.resize(1280, 800)

        self.canvas = FabricCanvas(self.document)
        self.setCentralWidget(self.canvas)

        self.inspector = Inspector(self.document)
        self.summary = QLabel()
        self.summary.setObjectName("scenarioSummary")
        self.summary.setWordWrap(True)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.addWidget(self.summary)
        side_layout.addWidget(self.inspector, 1)
        inspector_dock = QDockWidget("Inspector", self)
        inspector_dock.setObjectName("inspectorDock")
        inspector_dock.setWidget(side)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, inspector_dock)

        self.results = ResultsPanel(document=self.document)
        self.congestion_tab = CongestionTab(self.document, self.catalog)
        self.results.tabs.addTab(self.congestion_tab, "Congestion")
        self.goodput_tab = GoodputTab(self.document)
        self.results.tabs.addTab(self.goodput_tab, "Goodput")
        self.jobs_tab = add_jobs_tab(self)
        self.sweep_panel = SweepPanel(self.document)
        self.results.tabs.addTab(self.sweep_panel, "Sweep")
        results_dock = QDockWidget("Results", self)
        results_dock.setObjectName("resultsDock")
        results_dock.setWidget(self.results)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, results_dock)

        self.palette = Palette(self.catalog)
        palette_dock = QDockWidget("Palette", self)
        palette_dock.setObjectName("paletteDock")
        palette_dock.setWidget(self.palette)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, palette_dock)
        self.palette.deviceActivated.connect(self.add_device_at_view_centre)

        self.problems_panel = ProblemsPanel()
        problems_dock = QDockWidget("Problems", self)
        problems_dock.setObjectName("problemsDock")
        problems_dock.setWidget(self.problems_panel)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, problems_dock)
        self.tabifyDockWidget(results_dock, problems_dock)
        results_dock.raise_()
        self.problems_panel.groupActivated.connect(self._problem_group_activated)
        self.problems_panel.bundleActivated.connect(self._bundle_activated)

        self._build_status_bar()
        self._build_actions(inspector_dock, results_dock, problems_dock, palette_dock)
        self._build_scenario_menu()

        self.debounce = QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(DEBOUNCE_MS)
        self.debounce.timeout.connect(self.evaluate_now)

        self.canvas.groupSelected.connect(self.inspector.show_group)
        self.canvas.bundleSelected.connect(self.inspector.show_bundle)
        self.inspector.message.connect(self._edit_message)
        self.document.changed.connect(self._document_changed)
        self.document.problemsChanged.connect(self._show_validation)
        self.worker.started.connect(self._run_started)
        self.worker.finished.connect(self._run_finished)
        self.worker.failed.connect(self._run_failed)
        self.worker.invalid.connect(self._run_invalid)
        self.worker.cancelled.connect(self._run_cancelled)
        self.worker.progress.connect(self._run_progress)
        self.run_messages = RunMessages()

        self.results.bundleActivated.connect(self._bundle_activated)
        self.congestion_tab.bundleActivated.connect(self._bundle_activated)
        self.congestion_tab.sharesChanged.connect(self.canvas.show_congestion)

        self.template_dialog: TemplateDialog | None = None
        self.about_dialog: AboutDialog | None = None
        self.library = library
        self.library_session: LibrarySession | None = None
        if library is not None:
            self.library_session = LibrarySession(self._session_host(), library)
            self._add_library(self.library_session)
            self.evaluated.connect(self.library_session.cache_report)
            self.library_session.measurementsChanged.connect(self._show_measured)
        self.custom_devices = CustomDevices(self)  # the palette's user-defined devices
        self.document.undo_stack.cleanChanged.connect(self._clean_changed)
        self.set_theme(self.store.value(THEME_SETTING))
        self._restore_settings()
        self._refresh_texts()
        self._show_validation(self.document.problems)
        QTimer.singleShot(0, self.canvas.fit)
        if evaluate_on_start:
            self.evaluate_now()

    # ---- construction -----------------------------------------------------------------------

    def _session_host(self) -> SessionHost:
        return SessionHost(
            window=self,
            document=self.document,
            catalog=self.catalog,
            results=self.results,
            settings=self.settings,
            evaluate=self.evaluate_now,
            show_cached=self.show_cached_report,
            fit_view=self.canvas.fit,
        )

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.validation_label = QLabel()
        self.validation_label.setObjectName("validationStatus")
        self.engine_label = QLabel("engine: –")
        self.engine_label.setObjectName("engineTime")
        self.progress = QProgressBar()
        self.progress.setObjectName("evaluationProgress")
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(160)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setToolTip("Stop this evaluation (Esc)")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.worker.cancel)
        for w in (self.validation_label, self.engine_label, self.progress, self.cancel_button):
            bar.addPermanentWidget(w)
        bar.showMessage("Ready")

    # ---- files and palette ------------------------------------------------------------------

    def open_file(self) -> bool:
        """Ask for a scenario JSON file and open it; errors go to a message box."""
        path, _ = QFileDialog.getOpenFileName(
            self, "Open scenario", "", "FabricLab scenario (*.json);;All files (*)"
        )
        return self.open_path(path) if path else False

    def open_path(self, path: str) -> bool:
        """Open the scenario at `path`; a malformed file is reported, never raised."""
        try:
            notes = self.document.load_from(path)
        except ScenarioError as exc:
            detail = "\n".join(f"{p.where}: {p.message}" for p in exc.problems) or str(exc)
            self._file_error(f"Cannot open {path}", detail)
            return False
        except (OSError, ValueError) as exc:
            self._file_error(f"Cannot open {path}", str(exc))
            return False
        if notes:
            QMessageBox.information(
                self, "FabricLab", f"Opened {path}, an older format:\n\n" + "\n".join(notes)
            )
        self.statusBar().showMessage(f"Opened {path}", 8000)
        self.add_recent_file(path)
        QTimer.singleShot(0, self.canvas.fit)
        return True

    def save_file_as(self) -> bool:
        """Ask for a file name and write the scenario there as JSON."""
        suggested = f"{self.document.scenario.metadata.name or 'scenario'}.json"
        path, _ = QFileDialog.getSaveFileName(
            self, "Save scenario as", suggested, "FabricLab scenario (*.json)"
        )
        if not path:
            return False
        try:
            self.document.save_to(path)
        except (OSError, ValueError) as exc:
            self._file_error(f"Cannot save {path}", str(exc))
            return False
        self.statusBar().showMessage(f"Saved {path}", 8000)
        self.add_recent_file(path)
        return True

    # ---- templates ----------------------------------------------------------------------------

    def new_from_template(self) -> TemplateDialog:
        """Open the template dialog (window-modal); OK replaces the scenario (undoable)."""
        dialog = TemplateDialog(self.catalog, self)
        dialog.accepted.connect(lambda: self._template_accepted(dialog))
        self.template_dialog = dialog
        dialog.open()
        return dialog

    def _template_accepted(self, dialog: TemplateDialog) -> None:
        scenario = dialog.scenario
        if scenario is None:
            return
        self.document.replace_with(scenario, f"New from template: {scenario.metadata.name}")
        self.statusBar().showMessage(f"Generated {scenario.metadata.name}", 8000)
        QTimer.singleShot(0, self.canvas.fit)

    # ---- help ---------------------------------------------------------------------------------

    def show_about(self) -> AboutDialog:
        """Open Help > About FabricLab (versions of the app and what it runs on)."""
        dialog = AboutDialog(self.catalog, self)
        self.about_dialog = dialog
        dialog.open()
        return dialog

    # ---- settings -----------------------------------------------------------------------------

    def set_theme(self, name: object) -> None:
        """Switch the app, canvas, palette, plots and icons to theme `name` and remember it.

        An unknown or missing name (e.g. a stale setting) gives the light theme.
        """
        self.theme = theme_named(name)
        app = QApplication.instance()
        if app is not None:
            apply_app_theme(app, self.theme)
        self.canvas.set_theme(self.theme)
        self.palette.set_theme(self.theme)
        apply_theme_to(self, self.theme)
        set_action_icons(self.action_icons, self.theme)
        self.theme_actions[self.theme.name].setChecked(True)
        self.store.set_value(THEME_SETTING, self.theme.name)

    def _restore_settings(self) -> None:
        geometry = self.store.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.store.value("windowState")
        if state is not None:
            self.restoreState(state)
        else:
            first_start_docks(self)
        restore_splitters(self, self.store)
        self._fill_recent_menu()

    def save_settings(self) -> None:
        """Store the window geometry and dock/toolbar state."""
        self.store.set_value("geometry", self.saveGeometry())
        self.store.set_value("windowState", self.saveState())
        save_splitters(self, self.store)
        self.store.sync()

    def _file_error(self, title: str, detail: str) -> None:
        self.statusBar().showMessage(f"{title}: {detail.splitlines()[0] if detail else ''}")
        QMessageBox.warning(self, "FabricLab", f"{title}\n\n{detail}")

    def add_device_at_view_centre(self, model: str) -> str:
        """Add a group of catalog `model` in the middle of the visible canvas."""
        centre = self.canvas.mapToScene(self.canvas.viewport().rect().center())
        position = (centre.x(), centre.y()) if (centre.x(), centre.y()) != (0.0, 0.0) else None
        gid = self.document.add_device(model, position)
        self.canvas.select_group(gid)
        return gid

    # ---- document ---------------------------------------------------------------------------

    def _refresh_texts(self) -> None:
        scenario = self.document.scenario
        unsaved = "" if self.document.undo_stack.isClean() else " •"
        self.setWindowTitle(f"FabricLab — {scenario.metadata.name}{unsaved}")
        self.summary.setText(summary_html(scenario))

    def _clean_changed(self, _clean: bool) -> None:
        # the stack says so once more while the window is destroyed: nothing to show then
        if shiboken6.isValid(self) and shiboken6.isValid(self.document.undo_stack):
            self._refresh_texts()

    def _document_changed(self) -> None:
        self._refresh_texts()
        self.debounce.start()

    def _problem_group_activated(self, group_id: str) -> None:
        if group_id in self.canvas.nodes:
            self.canvas.select_group(group_id)
            self.canvas.centerOn(self.canvas.nodes[group_id])
            self.statusBar().showMessage(f"Selected group {group_id}", 5000)

    def _show_validation(self, problems: list) -> None:
        self.problems_panel.show_problems(problems)
        errors = [p for p in problems if p.severity == "error"]
        if errors:
            self.validation_label.setText(f"⚠ {len(errors)} problem(s)")
            self.validation_label.setToolTip("\n".join(str(p) for p in problems))
            self.validation_label.setStyleSheet("color: #d62728")
        else:
            self.validation_label.setText("✓ valid")
            self.validation_label.setToolTip("")
            self.validation_label.setStyleSheet("")

    def _edit_message(self, message: str) -> None:
        if message:
            self.statusBar().showMessage(f"Edit refused: {message}", 8000)

    # ---- evaluation -------------------------------------------------------------------------

    def evaluate_now(self) -> int | None:
        """Submit the current scenario unless it has structural problems; the request id."""
        self.debounce.stop()
        problems = self.document.structural_problems
        if problems:
            self.worker.cancel()
            message = f"Not evaluated: {problems[0]}" + (
                f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            )
            self.statusBar().showMessage(message)
            self.results.mark_stale(
                "the scenario has problems, listed under Problems; not evaluated"
            )
            return None
        scenario = self.document.scenario
        request = self.worker.submit(scenario)
        self._requests = {request: scenario}
        self._revisions = {request: self.document.revision}
        return request

    def _set_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)

    def _run_started(self, request_id: int) -> None:
        self.progress.setValue(0)
        self._set_running(True)
        self.statusBar().showMessage(self.run_messages.started())

    def _run_progress(self, request_id: int, fraction: float, stage: str) -> None:
        self.progress.setValue(round(100 * fraction))
        self.statusBar().showMessage(self.run_messages.progress(stage))

    def show_cached_report(self, report: AppReport) -> None:
        """Show a report kept from an earlier run instead of evaluating: no run is pending."""
        self.debounce.stop()
        if self.worker.running:
            self.worker.cancel()
        self.show_report(report, self.document.revision)
        self.engine_label.setText("engine: cached")

    def show_report(self, report: AppReport, revision: int | None = None) -> None:
        """Show a report (a finished run's or a cached one) in the results and on the canvas;
        `revision` is the document revision it belongs to."""
        self.last_report = report
        self.results.show_report(report, revision)
        self._show_measured()
        perm = report.permutation
        self.canvas.show_utilization(perm.link_utilization if perm is not None else None)
        apply_theme_to(self, self.theme)  # plots the report created since the last switch

    def _show_measured(self) -> None:
        """Overlay the library's measured runs of this scenario and collective, if any."""
        report, session = self.last_report, self.library_session
        sweep = report.collective_sweep if report is not None else None
        runs = []
        if session is not None and sweep is not None:
            name = self.document.scenario.metadata.name
            runs = measured_runs_of(session.library, name, sweep.op)
        self.results.collective_tab.show_measured(runs)

    def _run_finished(self, request_id: int, report: AppReport) -> None:
        self._set_running(False)
        self.show_report(report, self._revisions.get(request_id))
        self.evaluated.emit(self._requests.get(request_id), report)
        elapsed = report.ui_elapsed_s
        self.engine_label.setText(f"engine: {elapsed:.2f} s")
        warnings = report.warnings
        note = f" — {len(warnings)} warning(s)" if warnings else ""
        if report.reused:
            note += f" — reused {', '.join(report.reused)}"
        self.statusBar().showMessage(f"Evaluated in {elapsed:.2f} s{note}", 10000)

    def _run_failed(self, request_id: int, message: str) -> None:
        self._set_running(False)
        first = message.splitlines()[0] if message else "unknown error"
        self.statusBar().showMessage(f"Evaluation failed: {first}")
        self.results.set_status(f"Evaluation failed: {first}")
        self.results.mark_stale(f"the run of revision {self._revisions.get(request_id)} failed")

    def _bundle_activated(self, bundle_id: str) -> None:
        if self.canvas.select_bundle(bundle_id):
            self.statusBar().showMessage(f"Selected bundle {bundle_id}", 5000)
        else:
            self.statusBar().showMessage(f"Link inside a server ({bundle_id or 'nvlink'})", 5000)

    def _run_invalid(self, request_id: int, problems: list) -> None:
        if self._requests.get(request_id) is self.document.scenario:
            self.document.set_expand_problems(problems)
            self.results.mark_stale(
                f"revision {self._revisions.get(request_id)} cannot be built; see Problems"
            )

    def _run_cancelled(self, request_id: int) -> None:
        self._set_running(False)
        self.statusBar().showMessage("Evaluation cancelled", 10000)
        self.results.set_status("cancelled")
        self.results.mark_stale(
            f"the run of revision {self._revisions.get(request_id)} was cancelled"
        )

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop the debounce and wait for a running evaluation before closing."""
        self.debounce.stop()
        if self.library_session is not None:
            self.library_session.shutdown()
        self.worker.shutdown()
        self.shutdown_file_jobs()
        self.results.shutdown()
        self.sweep_panel.shutdown()
        self.congestion_tab.shutdown()
        self.goodput_tab.shutdown()
        if self.compare_dialog is not None:
            self.compare_dialog.worker.shutdown()
        self.save_settings()
        super().closeEvent(event)
