"""Python's cyclic garbage collection on the GUI thread only.

The collector runs on whichever thread happens to allocate when a generation fills up. When
that is an engine worker thread and the garbage holds Qt objects (a closed window's widgets,
an old report's plot items), their C++ destructors run on the worker: they take Qt's
connection locks and ask for the GIL again while the GUI thread, holding the GIL, waits on
those locks — a deadlock (seen as a test run hanging in QObject::~QObject on a pooled
thread). So automatic collection is switched off and the GUI thread collects on a timer,
generation by generation as the thresholds say, the way pyqtgraph's GarbageCollector does.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 100


class GuiThreadCollector(QObject):
    """Disables automatic collection and collects from the GUI thread's event loop."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.threshold = gc.get_threshold()
        gc.disable()
        self.timer.start(interval_ms)

    def check(self) -> None:
        """Collect the oldest generation whose count passed its threshold (as gc would)."""
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > self.threshold[generation]:
                gc.collect(generation)
                return


_installed: GuiThreadCollector | None = None


def install_gui_thread_collector(app: QObject) -> GuiThreadCollector:
    """Install the collector once for the application `app` (idempotent)."""
    global _installed
    if _installed is None:
        _installed = GuiThreadCollector(app)
    return _installed
