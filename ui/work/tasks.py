"""The one worker pattern of the app: engine calls on a private thread, newest request wins.

Everything slow the app asks of the engine (an evaluation, a latency curve, a sweep, a
comparison's evaluations) is one job: one call into `engine.analysis`, given a `Task` that
lets it report progress, hand over partial results and learn that it should stop. A
`TaskWorker` runs its jobs one at a time on a private one-thread pool, by key: submitting
a new request for a key makes the older one stale (it is skipped if still queued, stops at
its next checkpoint, and its outcome is dropped); `cancel` makes it stale at once; `stop`
asks it to end early but still delivers what it returns (a sweep keeps its finished points).

Outcomes reach the GUI thread through a signal bridge (queued signals): `progress`,
`partial`, `finished` and `failed` (with the exception, for the caller to word) are emitted
for current requests only; `discarded` says a stale one ended. Every signal carries the
request's key and id.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from engine.analysis import Progress, RunCancelledError


class _Bridge(QObject):
    """Carries a job's reports from the pool thread to the GUI thread (queued signals)."""

    progress = Signal(str, int, float, str)
    partial = Signal(str, int, object)
    finished = Signal(str, int, object)
    failed = Signal(str, int, object)
    discarded = Signal(str, int)


class Task:
    """What one job's engine call gets: its key and id, a `Progress`, a channel for partial
    results, and whether it should stop (stale, or asked to stop early)."""

    def __init__(self, worker: TaskWorker, key: str, request: int) -> None:
        self.key = key
        self.request = request
        self._worker = worker
        self._bridge = worker._bridge
        self.progress = Progress(report=self._report, should_stop=self.should_stop)

    def stale(self) -> bool:
        """Whether a newer request for the key, a cancel or a shutdown replaced this one."""
        return self._worker.current(self.key) != self.request

    def should_stop(self) -> bool:
        """Whether the job should end now: it is stale, or `TaskWorker.stop` asked it to."""
        return self.stale() or self._worker.stopping(self.request)

    def partial(self, payload: object) -> None:
        """Hand a partial result to the GUI thread (a curve's points so far, say)."""
        self._emit(self._bridge.partial, payload)

    def _report(self, fraction: float, stage: str) -> None:
        self._emit(self._bridge.progress, fraction, stage)

    def _emit(self, signal: Any, *payload: object) -> None:
        with contextlib.suppress(RuntimeError):  # the bridge is gone: the window closed
            signal.emit(self.key, self.request, *payload)


Job = Callable[[Task], object]


class _Runnable(QRunnable):
    """One request: runs its job unless already stale, reports the outcome via the bridge."""

    def __init__(self, task: Task, job: Job) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.task = task
        self.job = job

    def run(self) -> None:
        """Run the job; stale before the start or stopped at a checkpoint: discarded."""
        task, bridge = self.task, self.task._bridge
        if task.stale():
            task._emit(bridge.discarded)
            return
        try:
            result = self.job(task)
        except RunCancelledError:
            task._emit(bridge.discarded)
        except Exception as exc:  # every failure becomes a signal, never a dead thread
            task._emit(bridge.failed, exc)
        else:
            task._emit(bridge.finished, result)


class TaskWorker(QObject):
    """Runs jobs one at a time on a private thread; per key, only the newest request counts.

    Signals (GUI thread): `started(key, id)`, `progress(key, id, fraction, stage)`,
    `partial(key, id, payload)`, `finished(key, id, result)`, `failed(key, id, exception)`,
    `cancelled(key, id)` and `discarded(key, id)` (a stale request ended, or its outcome
    arrived and was dropped).
    """

    started = Signal(str, int)
    progress = Signal(str, int, float, str)
    partial = Signal(str, int, object)
    finished = Signal(str, int, object)
    failed = Signal(str, int, object)
    cancelled = Signal(str, int)
    discarded = Signal(str, int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)  # created before the bridge, so it is destroyed first
        self._pool.setMaxThreadCount(1)
        self._bridge = _Bridge(self)
        self._bridge.progress.connect(self._on_progress)
        self._bridge.partial.connect(self._on_partial)
        self._bridge.finished.connect(self._on_finished)
        self._bridge.failed.connect(self._on_failed)
        self._bridge.discarded.connect(self.discarded)
        self._current: dict[str, int] = {}
        self._stopping: set[int] = set()
        self._next_id = 0

    def submit(self, key: str, job: Job) -> int:
        """Queue `job` as the request for `key` (an older one goes stale); its request id."""
        self._next_id += 1
        request = self._next_id
        superseded = self._current.get(key)
        if superseded is not None:
            self._stopping.discard(superseded)  # stale now: it stops whatever was asked
        self._current[key] = request
        self._pool.start(_Runnable(Task(self, key, request), job))
        self.started.emit(key, request)
        return request

    def current(self, key: str) -> int | None:
        """The id of the request for `key` still waiting for its outcome, or ``None``."""
        return self._current.get(key)

    def pending(self, key: str) -> bool:
        """Whether a request for `key` is queued or running."""
        return key in self._current

    def stopping(self, request: int) -> bool:
        """Whether `stop` asked the request `request` to end early."""
        return request in self._stopping

    def cancel(self, key: str) -> None:
        """Make the request for `key` stale: it stops at its next checkpoint (`cancelled`)."""
        request = self._current.pop(key, None)
        if request is not None:
            self._stopping.discard(request)
            self.cancelled.emit(key, request)

    def stop(self, key: str) -> None:
        """Ask the request for `key` to end early; what it returns is still delivered."""
        request = self._current.get(key)
        if request is not None:
            self._stopping.add(request)

    def shutdown(self) -> None:
        """Drop every request and wait for a running job to end (before the app quits)."""
        self._current.clear()
        self._stopping.clear()
        self._pool.clear()
        self._pool.waitForDone()

    def _is_current(self, key: str, request: int) -> bool:
        return self._current.get(key) == request

    def _settle(self, key: str, request: int) -> bool:
        """Forget a request that ended; whether it was the current one for its key."""
        if not self._is_current(key, request):
            self.discarded.emit(key, request)
            return False
        del self._current[key]
        self._stopping.discard(request)
        return True

    @Slot(str, int, float, str)
    def _on_progress(self, key: str, request: int, fraction: float, stage: str) -> None:
        if self._is_current(key, request):
            self.progress.emit(key, request, fraction, stage)

    @Slot(str, int, object)
    def _on_partial(self, key: str, request: int, payload: object) -> None:
        if self._is_current(key, request):
            self.partial.emit(key, request, payload)

    @Slot(str, int, object)
    def _on_finished(self, key: str, request: int, result: object) -> None:
        if self._settle(key, request):
            self.finished.emit(key, request, result)

    @Slot(str, int, object)
    def _on_failed(self, key: str, request: int, error: object) -> None:
        if self._settle(key, request):
            self.failed.emit(key, request, error)
