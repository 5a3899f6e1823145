"""GPU utilization vs switch latency, computed off the GUI thread when the Training tab asks.

One point costs a whole training step (about 40 ms on the 1,024-GPU preset), so the curve
is not part of every evaluation (that would break the 0.2 s edit-to-plot budget). The
results panel asks for it by a key ("current", "pin:<label>") with the scenario document a
report carries; each point is `engine.training.step.latency_sweep` at one latency, sent as soon
as it is done so the curve grows on screen. A newer request for the same key makes the
older one stale: it stops before its next point and its outcome is dropped.
"""

from __future__ import annotations

import contextlib
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QRunnable, QThreadPool, Signal, Slot

from engine.analysis import latency_rows
from engine.catalog.devices import Catalog
from engine.model.errors import ScenarioError


class _Bridge(QObject):
    """Carries a job's points and outcome to the GUI thread (queued signals)."""

    point = Signal(str, int, object)
    finished = Signal(str, int, object)
    failed = Signal(str, int, str)


class _Job(QRunnable):
    """One latency curve request."""

    def __init__(
        self,
        worker: LatencyCurveWorker,
        key: str,
        generation: int,
        scenario_doc: dict[str, Any],
        catalog: Catalog,
    ) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.worker, self.bridge = worker, worker._bridge
        self.key, self.generation = key, generation
        self.scenario_doc, self.catalog = scenario_doc, catalog

    def stale(self) -> bool:
        """Whether a newer request for the key (or a shutdown) replaced this one."""
        return self.worker._generations.get(self.key) != self.generation

    def run(self) -> None:
        """Compute the points unless stale; report through the bridge."""
        try:
            rows = latency_rows(
                self.scenario_doc,
                self.catalog,
                on_row=lambda rows: self._emit(self.bridge.point, rows),
                should_stop=self.stale,
            )
        except ScenarioError as exc:
            self._emit(self.bridge.failed, "; ".join(p.message for p in exc.problems) or str(exc))
        except Exception as exc:
            self._emit(self.bridge.failed, f"{type(exc).__name__}: {exc}")
        else:
            if rows is not None:
                self._emit(self.bridge.finished, rows)

    def _emit(self, signal: Any, payload: object) -> None:
        with contextlib.suppress(RuntimeError):  # the bridge is gone: the window closed
            signal.emit(self.key, self.generation, payload)


class LatencyCurveWorker(QObject):
    """Computes latency curves by key on a private one-thread pool; newest request per key.

    Signals (GUI thread, current requests only): `point(key, rows_so_far)`,
    `finished(key, rows)`, `failed(key, message)`.
    """

    point = Signal(str, object)
    finished = Signal(str, object)
    failed = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)  # created before the bridge, so it is destroyed first
        self._pool.setMaxThreadCount(1)
        self._bridge = _Bridge(self)
        self._bridge.point.connect(self._on_point)
        self._bridge.finished.connect(self._on_finished)
        self._bridge.failed.connect(self._on_failed)
        self._generations: dict[str, int] = {}
        self._counter = 0
        app = QCoreApplication.instance()
        if app is not None:  # quitting stops a running curve at its next point
            app.aboutToQuit.connect(self.shutdown)

    def request(self, key: str, scenario_doc: dict[str, Any], catalog: Catalog) -> None:
        """Compute the curve of `scenario_doc` for `key`; an older request for it goes stale."""
        self._counter += 1
        self._generations[key] = self._counter
        self._pool.start(_Job(self, key, self._counter, scenario_doc, catalog))

    def cancel(self, key: str) -> None:
        """Drop the request for `key` (it stops before its next point)."""
        self._generations.pop(key, None)

    def pending(self, key: str) -> bool:
        """Whether a request for `key` is queued or running."""
        return key in self._generations

    def shutdown(self) -> None:
        """Drop every request and wait for a running point to end."""
        self._generations.clear()
        self._pool.clear()
        self._pool.waitForDone()

    def _current(self, key: str, generation: int) -> bool:
        return self._generations.get(key) == generation

    @Slot(str, int, object)
    def _on_point(self, key: str, generation: int, rows: object) -> None:
        if self._current(key, generation):
            self.point.emit(key, rows)

    @Slot(str, int, object)
    def _on_finished(self, key: str, generation: int, rows: object) -> None:
        if self._current(key, generation):
            del self._generations[key]
            self.finished.emit(key, rows)

    @Slot(str, int, str)
    def _on_failed(self, key: str, generation: int, message: str) -> None:
        if self._current(key, generation):
            del self._generations[key]
            self.failed.emit(key, message)
