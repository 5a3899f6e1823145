"""The scenario library in the main window: one open `Library` tied to the window.

`LibrarySession` provides the Library dock, File > Save, Save with Note, Save As, Import and
Export JSON, Import nccl-tests… (a measured run, `ui.library.measured`), the results cached after each run (shown at once when a scenario is opened
again), autosave while there are unsaved changes and the offer to restore them after a
crash, and Compare (`ui.library.compare`: pinned plots and a field-by-field diff).

The session never imports the window: the window hands it a `SessionHost` (its document,
results panel, settings and the three calls the session makes, `ui.library.host`), places
the session's dock and puts its actions in the File menu, and tells it of every finished
run (`cache_report`). The dependency runs from the window to the session only.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMessageBox, QWidget

from engine.analysis import DEFAULT_PRESET, AppReport, open_library
from engine.library.store import Library, LibraryError
from engine.model.scenario import Scenario, to_json
from ui.library.cache import cache_report, cached_report
from ui.library.calibration import CalibrationAction
from ui.library.compare import LibraryComparison
from ui.library.dialogs import (
    LIBRARY_ERRORS,
    DiffDialog,
    ask_choice,
    ask_text,
    error_text,
    local_time,
)
from ui.library.dock import LibraryPanel
from ui.library.host import SessionHost
from ui.library.measured import NcclTestsImport

# Saves run on the GUI thread: one blocked by another FabricLab gives up after this and says
# "library busy" rather than freezing the window for the engine's default wait.
GUI_BUSY_TIMEOUT_S = 5.0
AUTOSAVE_INTERVAL_MS = 30_000
AUTOSAVE_IDLE_MS = 3_000
LAST_SCENARIO_KEY = "library/lastScenario"


def open_app_library(path: str | Path | None = None) -> tuple[Library | None, str]:
    """The app's library: `path`, else ``$FABRICLAB_LIBRARY``, else the user's default one.

    Returns ``(library, "")``, or ``(None, message)`` when the file cannot be used (it is
    left untouched, so the app can start without a library and say why).
    """
    chosen = path or os.environ.get("FABRICLAB_LIBRARY") or None
    try:
        return open_library(chosen, timeout_s=GUI_BUSY_TIMEOUT_S), ""
    except LibraryError as exc:
        return None, str(exc)
    except (OSError, sqlite3.Error) as exc:
        return None, f"cannot open the library {chosen or 'in the default place'}: {exc}"


class LibrarySession(QObject):
    """The library features of the host window on `library` (see the module docstring).

    `dock` is the Library dock and `file_actions` / `transfer_actions` the File menu entries
    (Save, Save with Note, Save As / Import JSON, Import nccl-tests, Export JSON), for the
    window to place.
    """

    measurementsChanged = Signal()  # a measured run was stored

    def __init__(self, host: SessionHost, library: Library) -> None:
        super().__init__(host.window)
        self.host = host
        self.window = host.window
        self.library = library
        self.document = host.document
        self._memory_last = ""
        self._closed = False
        self.recovery_box: QMessageBox | None = None
        self.dialog: QWidget | None = None

        self.panel = LibraryPanel(library)
        self.dock = QDockWidget("Library", host.window)
        self.dock.setObjectName("libraryDock")
        self.dock.setWidget(self.panel)
        self.panel.openRequested.connect(self.open_scenario)
        self.panel.compareRequested.connect(self.compare)
        self.panel.set_current(self.document.scenario.metadata.name)

        self._build_actions()

        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(AUTOSAVE_INTERVAL_MS)
        self.autosave_timer.timeout.connect(self.autosave_now)
        self.autosave_timer.start()
        self.idle_timer = QTimer(self)
        self.idle_timer.setSingleShot(True)
        self.idle_timer.setInterval(AUTOSAVE_IDLE_MS)
        self.idle_timer.timeout.connect(self.autosave_now)
        self.document.changed.connect(self._document_changed)

        self.comparison = LibraryComparison(
            host, library, self._status, self._error, self.cache_report
        )
        # what a crash left behind is read now, before this window autosaves anything
        self._left_behind = self._read_autosave()
        if self._left_behind is not None:
            QTimer.singleShot(0, self.offer_recovery)

    def _build_actions(self) -> None:
        w = self.window
        self.save_action = QAction("&Save", w)
        self.save_action.setShortcut(QKeySequence("Ctrl+S"))
        self.save_action.setToolTip("Save the scenario into the library as a new version")
        self.save_action.triggered.connect(lambda: self.save())
        self.save_note_action = QAction("Save with &Note…", w)
        self.save_note_action.triggered.connect(self.save_with_note)
        self.save_as_action = QAction("Save &As…", w)
        self.save_as_action.setShortcut(QKeySequence("Ctrl+Shift+S"))
        self.save_as_action.triggered.connect(self.save_as)
        self.import_action = QAction("&Import JSON…", w)
        self.import_action.triggered.connect(self.import_json)
        self.export_action = QAction("&Export JSON…", w)
        self.export_action.triggered.connect(self.export_json)
        self.nccl_tests = NcclTestsImport(
            w,
            self.library,
            lambda: self.document.scenario.metadata.name,
            self._status,
            self._error,
            self.measurementsChanged.emit,
        )
        self.import_nccl_tests_action = self.nccl_tests.action
        self.calibration = CalibrationAction(
            w, self.library, self.document, self._status, self._error
        )
        self.run_actions = [self.calibration.action, self.calibration.cancel_action]
        self.file_actions = [self.save_action, self.save_note_action, self.save_as_action]
        self.transfer_actions = [
            self.import_action,
            self.import_nccl_tests_action,
            self.export_action,
        ]
        if self.library.read_only:
            for action in self.file_actions:
                action.setEnabled(False)
                action.setToolTip(f"Read-only library: {self.library.message}")
            self.import_action.setEnabled(False)

    # ---- messages ---------------------------------------------------------------------------

    def _status(self, text: str, timeout_ms: int = 8000) -> None:
        self.window.statusBar().showMessage(text, timeout_ms)

    def _error(self, title: str, detail: str) -> None:
        self.window.statusBar().showMessage(f"{title}: {detail}")
        self.panel.show_message(f"{title}: {detail}", error=True)
        self.dialog = ask_choice(
            self.window,
            "FabricLab library",
            f"{title}\n\n{detail}",
            [("OK", QMessageBox.ButtonRole.AcceptRole, None)],
            QMessageBox.Icon.Warning,
        )

    def _remember(self, name: str) -> None:
        """Keep `name` as the last scenario used (opened at the next start)."""
        self.panel.set_current(name)
        if self.host.settings is None:
            self._memory_last = name
        else:
            self.host.settings.setValue(LAST_SCENARIO_KEY, name)

    def last_scenario(self) -> str:
        """The scenario used last (setting), ``""`` if none."""
        if self.host.settings is None:
            return self._memory_last
        return str(self.host.settings.value(LAST_SCENARIO_KEY, "") or "")

    @property
    def unsaved(self) -> bool:
        """Whether the document has changes the library has not got (undo stack not clean)."""
        return not self.document.undo_stack.isClean()

    # ---- opening ----------------------------------------------------------------------------

    def open_start_scenario(self) -> str | None:
        """At start: open the last scenario used, else the default preset; its name."""
        try:
            names = self.library.names()
        except LIBRARY_ERRORS as exc:
            self._error("Cannot read the library", error_text(exc))
            names = []
        for name in (self.last_scenario(), DEFAULT_PRESET):
            if name and name in names and self._open_now(name, 0):
                return name
        self.host.evaluate()
        return None

    def open_scenario(self, name: str, version: int = 0) -> None:
        """Open `name` (``version`` 0: the latest), first asking about unsaved changes."""
        what = f"{name} v{version}" if version else name
        self._unless_unsaved(f"Open {what}", lambda: self._open_now(name, version))

    def _open_now(self, name: str, version: int) -> bool:
        try:
            scenario = self.library.load(name, version or None)
        except LIBRARY_ERRORS as exc:
            self._error(f"Cannot open {name}", error_text(exc))
            return False
        self.document.load(scenario)
        self._remember(name)
        cached = self.show_cached_or_evaluate()
        where = f"{name}, version {version}" if version else name
        how = "cached result shown, no run needed" if cached else "evaluating"
        self._status(f"Opened {where} from the library ({how})")
        QTimer.singleShot(0, self.host.fit_view)
        return True

    def show_cached_or_evaluate(self) -> bool:
        """Show the cached result of the current scenario at once, else evaluate it.

        A cache hit means the same content hash and engine version, so no run is needed.
        Returns whether the cached result was used.
        """
        cached = cached_report(self.library, self.document.scenario)
        if cached is None:
            self.host.evaluate()
            return False
        self.host.show_cached(cached)
        return True

    def _unless_unsaved(self, what: str, then: Callable[[], Any]) -> None:
        """Run `then` now, or after asking to save or discard the unsaved changes."""
        if not self.unsaved:
            then()
            return
        name = self.document.scenario.metadata.name

        def save_then() -> None:
            if self.save():
                then()

        buttons: list[tuple[str, QMessageBox.ButtonRole, Callable[[], None] | None]] = [
            ("Save", QMessageBox.ButtonRole.AcceptRole, save_then),
            ("Discard", QMessageBox.ButtonRole.DestructiveRole, then),
            ("Cancel", QMessageBox.ButtonRole.RejectRole, None),
        ]
        if self.library.read_only:
            buttons.pop(0)
        self.dialog = ask_choice(
            self.window,
            what,
            f"{name} has unsaved changes. Save them to the library first?",
            buttons,
        )

    # ---- saving -----------------------------------------------------------------------------

    def save(self, note: str = "") -> bool:
        """Save the current scenario into the library as a new version (with `note`)."""
        scenario = self.document.scenario
        name = scenario.metadata.name
        if self.library.read_only:
            self._error(f"Cannot save {name}", f"read-only library: {self.library.message}")
            return False
        try:
            number = self.library.save(scenario, note=note)
        except LIBRARY_ERRORS as exc:
            self._error(f"Cannot save {name}", error_text(exc))
            return False
        self.document.undo_stack.setClean()
        self._remember(name)
        self.panel.refresh(select=name)
        self._status(f"Saved {name} as version {number}" + (f" ({note})" if note else ""))
        return True

    def save_with_note(self) -> None:
        """Ask a note, then save a new version with it."""
        self.dialog = ask_text(
            self.window,
            "Save with note",
            f"Note for this version of {self.document.scenario.metadata.name}:",
            "",
            lambda note: self.save(note.strip()),
        )

    def save_as(self) -> None:
        """Ask a new scenario name and save the scenario under it."""
        name = self.document.scenario.metadata.name
        self.dialog = ask_text(
            self.window, "Save as", "Save the scenario as:", f"{name} copy", self.save_under
        )

    def save_under(self, new_name: str) -> bool:
        """Rename the scenario to `new_name` (one undo step) and save it; refused if taken."""
        new_name = new_name.strip()
        scenario = self.document.scenario
        if not new_name:
            self._error("Cannot save", "a scenario needs a name")
            return False
        if new_name != scenario.metadata.name:
            try:
                taken = {e.name for e in self.library.list()} | {
                    e.name for e in self.library.list(trash=True)
                }
            except LIBRARY_ERRORS as exc:
                self._error(f"Cannot save {new_name}", error_text(exc))
                return False
            if new_name in taken:
                self._error(
                    f"Cannot save as {new_name}",
                    "a scenario of that name exists already (maybe in the trash); choose "
                    "another name",
                )
                return False
            renamed = dataclasses.replace(
                scenario, metadata=dataclasses.replace(scenario.metadata, name=new_name)
            )
            self.document.replace_with(renamed, f"Rename to {new_name}")
        return self.save(note=f"saved as {new_name} from {scenario.metadata.name}")

    # ---- files ------------------------------------------------------------------------------

    def import_json(self) -> bool:
        """Ask for a scenario JSON file, add it to the library and open it."""
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Import scenario", "", "FabricLab scenario (*.json);;All files (*)"
        )
        if not path:
            return False
        try:
            name = self.library.import_json(path)
        except LIBRARY_ERRORS as exc:
            self._error(f"Cannot import {path}", error_text(exc))
            return False
        self.panel.refresh(select=name)
        self._status(f"Imported {name} from {path}")
        self.open_scenario(name)
        return True

    def export_json(self) -> bool:
        """Ask for a file name and write the current scenario there as JSON."""
        name = self.document.scenario.metadata.name or "scenario"
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Export scenario", f"{name}.json", "FabricLab scenario (*.json)"
        )
        if not path:
            return False
        try:
            Path(path).write_text(to_json(self.document.scenario) + "\n", encoding="utf-8")
        except OSError as exc:
            self._error(f"Cannot export to {path}", error_text(exc))
            return False
        self._status(f"Exported {name} to {path}")
        return True

    # ---- results, autosave and recovery -----------------------------------------------------

    def cache_report(self, scenario: Scenario | None, report: AppReport) -> None:
        """Keep a finished run's report in the library, keyed by the scenario's content."""
        if scenario is None or self.library.read_only:
            return
        try:
            cache_report(self.library, scenario, report)
        except LIBRARY_ERRORS as exc:
            self._status(f"Result not cached: {error_text(exc)}")

    def _document_changed(self) -> None:
        self.idle_timer.start()
        self.panel.set_current(self.document.scenario.metadata.name)

    def autosave_now(self) -> bool:
        """Keep the unsaved scenario in the library's autosave slot; whether it did."""
        if not self.unsaved or self.library.read_only or self._closed:
            return False
        try:
            self.library.autosave(self.document.scenario)
        except LIBRARY_ERRORS as exc:
            self._status(f"Autosave failed: {error_text(exc)}")
            return False
        return True

    def _read_autosave(self) -> tuple[Scenario, str] | None:
        """The autosaved scenario and its time, if any (an unreadable one is reported)."""
        try:
            scenario = self.library.recover()
            when = self.library.autosaved_at()
        except LIBRARY_ERRORS as exc:
            self.panel.show_message(
                f"The autosaved scenario cannot be read: {error_text(exc)}", error=True
            )
            return None
        return None if scenario is None else (scenario, when or "")

    def offer_recovery(self) -> QMessageBox | None:
        """Ask to restore the unsaved changes a crash left in the library (found at start)."""
        if self._closed or self._left_behind is None:
            return None
        scenario, when = self._left_behind
        self._left_behind = None
        name = scenario.metadata.name
        self.recovery_box = ask_choice(
            self.window,
            "Recover unsaved changes",
            f"FabricLab kept unsaved changes to {name} from {local_time(when)}: they were "
            "not saved when FabricLab last stopped. Restore them?",
            [
                ("Restore", QMessageBox.ButtonRole.AcceptRole, lambda: self._restore(scenario)),
                ("Discard", QMessageBox.ButtonRole.DestructiveRole, self._discard_recovery),
            ],
        )
        return self.recovery_box

    def _restore(self, scenario: Scenario) -> None:
        self.document.replace_with(scenario, f"Restore unsaved {scenario.metadata.name}")
        self.panel.set_current(scenario.metadata.name)
        self.show_cached_or_evaluate()
        QTimer.singleShot(0, self.host.fit_view)
        self._status(f"Restored the unsaved changes to {scenario.metadata.name}")

    def _discard_recovery(self) -> None:
        try:
            self.library.clear_autosave()
        except LIBRARY_ERRORS as exc:
            self._status(f"Cannot discard the autosave: {error_text(exc)}")
            return
        self._status("Discarded the autosaved changes")

    def shutdown(self) -> None:
        """On close: forget the autosave when all is saved, else keep the latest changes."""
        if self._closed:
            return
        self._closed = True
        self.autosave_timer.stop()
        self.idle_timer.stop()
        self.comparison.shutdown()
        self.calibration.shutdown()
        try:
            if self.unsaved:
                if not self.library.read_only:
                    self.library.autosave(self.document.scenario)
            else:
                self.library.clear_autosave()
        except LIBRARY_ERRORS:
            pass  # the window is closing: nothing left to tell the user with

    # ---- compare ----------------------------------------------------------------------------

    def compare(self, names: list[str]) -> None:
        """Compare two library scenarios, or one with the current (`LibraryComparison`)."""
        self.comparison.compare(names)

    @property
    def diff_dialog(self) -> DiffDialog | None:
        """The last comparison's diff dialog, if one was opened."""
        return self.comparison.diff_dialog
