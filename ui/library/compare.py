"""Compare in the library: two scenarios (or one with the current) side by side.

A comparison shows the field-by-field diff in a dialog and pins both scenarios' reports to
the results plots and tables: a cached report at once, the others evaluated one after
another on an `EvaluationWorker` of the comparison's own (the window's worker stays on the
current scenario), each new report cached in the library as it arrives.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from engine.analysis import AppReport
from engine.library.scenario_diff import diff
from engine.library.store import Library
from engine.model.scenario import Scenario
from ui.library.cache import cached_report
from ui.library.dialogs import LIBRARY_ERRORS, DiffDialog, error_text
from ui.library.host import SessionHost
from ui.work.evaluation import EvaluationWorker


class LibraryComparison(QObject):
    """Compares library scenarios for the host window (see the module docstring).

    `say(text, timeout_ms)` shows progress in the status bar, `refuse(title, detail)` tells
    why a comparison cannot start, and `cache(scenario, report)` keeps a new report.
    """

    def __init__(
        self,
        host: SessionHost,
        library: Library,
        say: Callable[[str, int], None],
        refuse: Callable[[str, str], None],
        cache: Callable[[Scenario | None, AppReport], None],
    ) -> None:
        super().__init__(host.window)
        self.host = host
        self.library = library
        self._say, self._refuse, self._cache = say, refuse, cache
        self.diff_dialog: DiffDialog | None = None
        self.worker = EvaluationWorker(host.catalog, self)
        self.worker.finished.connect(self._finished)
        self.worker.failed.connect(self._failed)
        self._queue: list[tuple[str, Scenario]] = []
        self._jobs: dict[int, tuple[str, Scenario]] = {}

    def compare(self, names: list[str]) -> None:
        """Compare two library scenarios, or one with the current: pinned plots and a diff."""
        try:
            pairs = [(name, self.library.load(name)) for name in names[:2]]
        except LIBRARY_ERRORS as exc:
            self._refuse("Cannot compare", error_text(exc))
            return
        if len(pairs) == 1:
            current = self.host.document.scenario
            pairs.insert(0, (f"{current.metadata.name} (current)", current))
        (label_a, a), (label_b, b) = pairs
        if self.diff_dialog is not None:
            self.diff_dialog.close()
            self.diff_dialog.deleteLater()
        self.diff_dialog = DiffDialog(label_a, label_b, diff(a, b), self.host.window)
        self.diff_dialog.show()
        self.host.results.clear_pins()
        self._queue = []
        self._jobs = {}
        for label, scenario in pairs:
            cached = cached_report(self.library, scenario)
            if cached is not None:
                self.host.results.pin_report(label, cached)
            else:
                self._queue.append((label, scenario))
        self._say(f"Comparing {label_a} with {label_b}", 8000)
        self._next()

    def shutdown(self) -> None:
        """Stop the comparison's evaluations (before the window closes)."""
        self.worker.shutdown()

    def _next(self) -> None:
        if not self._queue:
            return
        label, scenario = self._queue.pop(0)
        request = self.worker.submit(scenario)
        self._jobs[request] = (label, scenario)
        self._say(f"Comparing: evaluating {label}…", 0)

    def _finished(self, request_id: int, report: AppReport) -> None:
        job = self._jobs.pop(request_id, None)
        if job is None:
            return
        label, scenario = job
        self._cache(scenario, report)
        self.host.results.pin_report(label, report)
        self._say(f"Comparing: {label} pinned to the plots", 8000)
        self._next()

    def _failed(self, request_id: int, message: str) -> None:
        job = self._jobs.pop(request_id, None)
        if job is None:
            return
        first = message.splitlines()[0] if message else "unknown error"
        self._say(f"Cannot evaluate {job[0]} for the comparison: {first}", 0)
        self._next()
