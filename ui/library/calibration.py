"""Run > Calibrate on Measured Runs: fit the scenario to the library's runs of it, undoably.

The measured runs are those the library keeps for the scenario being edited (File > Import
nccl-tests… stores them). The fit runs on `CalibrationWorker`, off the GUI thread, with
progress in the status bar and Run > Cancel Calibration to stop it; its result becomes the
scenario's calibration as one undoable edit, so Undo restores the uncalibrated model. The
numbers the status line shows are the fit's; nothing here computes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from engine.analysis import CalibrationFit, measurement_run
from engine.library.store import Library
from ui.document.document import ScenarioDocument
from ui.library.dialogs import LIBRARY_ERRORS, error_text
from ui.work.calibration import CalibrationWorker


class CalibrationAction:
    """The Calibrate and Cancel Calibration actions of a library session and what they do."""

    def __init__(
        self,
        window: QWidget,
        library: Library,
        document: ScenarioDocument,
        status: Callable[[str], None],
        error: Callable[[str, str], None],
    ) -> None:
        self.library = library
        self.document = document
        self.status = status
        self.error = error
        self.worker = CalibrationWorker(parent=window)
        self.worker.progress.connect(self._progress)
        self.worker.finished.connect(self._finished)
        self.worker.failed.connect(lambda message: self._done_with_error(message))
        self.action = QAction("&Calibrate on Measured Runs", window)
        self.action.setToolTip(
            "Fit NIC efficiency, NCCL's latency and the Simple protocol's efficiency of this "
            "scenario to the measured nccl-tests runs the library keeps for it"
        )
        self.action.triggered.connect(self.start)
        self.cancel_action = QAction("Cancel Ca&libration", window)
        self.cancel_action.setEnabled(False)
        self.cancel_action.triggered.connect(self.cancel)

    def start(self) -> bool:
        """Start a fit on the current scenario's measured runs; False if there are none."""
        name = self.document.scenario.metadata.name
        try:
            stored = self.library.measurements(scenario=name) if name else []
            # each run under its library name, which the calibration then lists
            runs = [replace(measurement_run(m), source=m.name) for m in stored]
        except LIBRARY_ERRORS as exc:
            self.error("Cannot read the measured runs", error_text(exc))
            return False
        if not runs:
            self.error(
                "No measured runs to calibrate on",
                f"The library keeps no measured run of {name!r}. Import the saved output of "
                "nccl-tests runs on this cluster first (File > Import nccl-tests…).",
            )
            return False
        self.worker.request(self.document.scenario, runs)
        self.action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        self.status(f"Calibrating {name} on {len(runs)} measured run(s)…")
        return True

    def cancel(self) -> None:
        """Stop the running fit; the scenario stays as it was."""
        self.worker.cancel()
        self._idle()
        self.status("Calibration cancelled; the scenario is unchanged")

    def shutdown(self) -> None:
        """Stop a running fit before the window closes."""
        self.worker.shutdown()

    def _idle(self) -> None:
        self.action.setEnabled(True)
        self.cancel_action.setEnabled(False)

    def _progress(self, fraction: float, stage: str) -> None:
        self.status(f"Calibrating: {stage} {fraction:.0%}")

    def _done_with_error(self, message: str) -> None:
        self._idle()
        self.error("Calibration failed", message)

    def _finished(self, fit: CalibrationFit) -> None:
        self._idle()
        c = fit.calibration
        calibrated = replace(self.document.scenario, calibration=c)
        self.document.replace_with(calibrated, f"Calibrate ({c.name} v{c.version})")
        self.status(
            f"Calibrated {c.name} v{c.version}: NIC efficiency {c.nic_efficiency:.3g}, "
            f"latency x{c.latency_scale:.3g}, Simple efficiency {c.simple_efficiency:.3g}; "
            f"median error {fit.default_median_error:.1%} → {fit.fitted_median_error:.1%}"
        )
