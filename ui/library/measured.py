"""File > Import nccl-tests…: a measured run read from a file and stored in the open library.

The user picks the saved output of an nccl-tests program; `engine.analysis` reads it and
stores it as a measurement of the scenario being edited (when the library holds one of
that name), named after the file. Output too old to say which collective ran makes the
window ask for it (a list of nccl-tests programs) and read the file again; anything else
wrong with the file or the library is shown in the session's message box, naming the line
and the problem, and nothing is stored. Nothing here reads or computes a figure: the
status line words what the engine returned.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from engine.analysis import (
    NCCL_TESTS_OPS,
    OpNotNamedError,
    import_nccl_tests,
    measured_series,
    measurement_run,
)
from engine.library.store import Library
from ui.library.dialogs import LIBRARY_ERRORS, ask_item, error_text
from ui.results.measured_curves import MeasuredSeries

FILE_FILTER = "nccl-tests output (*.txt *.log *.out);;All files (*)"
PROGRAMS = [f"{program}_perf" for program in NCCL_TESTS_OPS]


class NcclTestsImport:
    """The Import nccl-tests… action of a library session and what it does.

    `scenario_name()` is the name of the scenario being edited; `status(text)` and
    `error(title, detail)` are the session's messages. `dialog` is the open question (the
    op to read the file with), if any.
    """

    def __init__(
        self,
        window: QWidget,
        library: Library,
        scenario_name: Callable[[], str],
        status: Callable[[str], None],
        error: Callable[[str, str], None],
        stored: Callable[[], None] | None = None,
    ) -> None:
        self.window = window
        self.stored = stored
        self.library = library
        self.scenario_name = scenario_name
        self.status = status
        self.error = error
        self.dialog: QWidget | None = None
        self.action = QAction("Import &nccl-tests…", window)
        self.action.setToolTip(
            "Store a measured nccl-tests run (the saved output of all_reduce_perf…) in the "
            "library, beside the scenario being edited"
        )
        self.action.triggered.connect(self.ask_file)
        if library.read_only:
            self.action.setEnabled(False)
            self.action.setToolTip(f"Read-only library: {library.message}")

    def ask_file(self) -> bool:
        """Ask for an nccl-tests output file and import it (see `import_path`)."""
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Import nccl-tests output", "", FILE_FILTER
        )
        return self.import_path(path) if path else False

    def import_path(self, path: str, op: str | None = None) -> bool:
        """Store the run in the file at `path` (`op` names its collective, if known).

        True when it was stored; False when the file or the library refused (the message
        box says why) or the op is being asked for (the answer imports it).
        """
        name = self.scenario_name()
        scenario = name if name and name in self.library.names() else None
        try:
            run, stored = import_nccl_tests(self.library, path, op=op, scenario=scenario)
        except OpNotNamedError:
            self.dialog = ask_item(
                self.window,
                "Import nccl-tests output",
                f"{path} does not say which nccl-tests program printed it. Which one ran?",
                PROGRAMS,
                lambda program: self.import_path(path, program),
            )
            return False
        except LIBRARY_ERRORS as exc:
            self.error(f"Cannot import {path}", error_text(exc))
            return False
        measures = f", measuring {scenario}" if scenario else ""
        self.status(
            f"Imported {stored.name}: {run.op} over {run.ranks} ranks, {len(run.points)} "
            f"points, peak busbw {run.peak_busbw_GBps:.1f} GB/s{measures}"
        )
        if self.stored is not None:
            self.stored()
        return True


def measured_runs_of(library: Library, scenario: str, op: str) -> list[MeasuredSeries]:
    """The library's measured runs of `scenario` for collective `op`, as the plots draw them.

    A damaged measurement is left out rather than stopping the plot (its import said so).
    """
    if not scenario:
        return []
    try:
        stored = library.measurements(scenario=scenario)
    except LIBRARY_ERRORS:
        return []
    out = []
    for m in stored:
        try:
            run = measurement_run(m)
        except LIBRARY_ERRORS:
            continue
        if run.op != op or not run.points:
            continue
        sizes, busbw = measured_series(run)
        out.append(
            MeasuredSeries(
                f"{m.name} ({run.ranks} ranks)",
                tuple(float(x) for x in sizes),
                tuple(float(y) for y in busbw),
                tuple(p.out_of_place.time_s for p in run.points),
            )
        )
    return out
