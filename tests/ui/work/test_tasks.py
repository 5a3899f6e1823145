"""The one worker pattern: jobs off the GUI thread, newest request per key, stop, errors."""

from __future__ import annotations

import threading
import time

import pytest

from engine.analysis import RunCancelledError
from ui.work.tasks import Task, TaskWorker

TIMEOUT_MS = 10_000


@pytest.fixture
def worker(qtbot):
    w = TaskWorker()
    yield w
    w.shutdown()


def wait_until_stopped(task: Task) -> str:
    """A job that runs until it is asked to stop, reporting at a checkpoint every 10 ms."""
    while not task.should_stop():
        time.sleep(0.01)
    task.progress(1.0, "after the stop")  # a stale job ends here (RunCancelledError)
    return "stopped early"


def test_a_job_runs_off_the_gui_thread_and_its_result_arrives(qtbot, worker):
    gui = threading.get_ident()
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS) as blocker:
        request = worker.submit("k", lambda task: (task.key, task.request, threading.get_ident()))
        assert worker.pending("k") and worker.current("k") == request
    key, got, (job_key, job_request, thread) = blocker.args
    assert (key, got, job_key, job_request) == ("k", request, "k", request)
    assert thread != gui
    assert not worker.pending("k")


def test_progress_and_partial_results_reach_the_gui_thread(qtbot, worker):
    progress, partial = [], []
    worker.progress.connect(lambda _k, _r, fraction, stage: progress.append((fraction, stage)))
    worker.partial.connect(lambda _k, _r, payload: partial.append(payload))

    def job(task: Task) -> int:
        task.progress(0.5, "half")
        task.partial([1])
        task.partial([1, 2])
        return 2

    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS):
        worker.submit("k", job)
    assert progress == [(0.5, "half")]
    assert partial == [[1], [1, 2]]


def test_a_newer_request_makes_the_older_one_stale(qtbot, worker):
    finished, discarded = [], []
    worker.finished.connect(lambda _k, request, result: finished.append((request, result)))
    worker.discarded.connect(lambda _k, request: discarded.append(request))
    first = worker.submit("k", wait_until_stopped)
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS):
        second = worker.submit("k", lambda task: "second")
    qtbot.waitUntil(lambda: first in discarded, timeout=TIMEOUT_MS)
    assert finished == [(second, "second")]


def test_requests_of_other_keys_stay_current(qtbot, worker):
    results = {}
    worker.finished.connect(lambda key, _r, result: results.__setitem__(key, result))
    worker.submit("a", lambda task: 1)
    worker.submit("b", lambda task: 2)
    qtbot.waitUntil(lambda: len(results) == 2, timeout=TIMEOUT_MS)
    assert results == {"a": 1, "b": 2}


def test_cancel_says_so_at_once_and_the_job_stops_at_its_checkpoint(qtbot, worker):
    started = threading.Event()

    def job(task: Task) -> str:
        started.set()
        return wait_until_stopped(task)

    request = worker.submit("k", job)
    assert started.wait(5)
    with qtbot.waitSignal(worker.discarded, timeout=TIMEOUT_MS) as discarded:
        with qtbot.waitSignal(worker.cancelled, timeout=1000) as cancelled:
            worker.cancel("k")
        assert cancelled.args == ["k", request]
        assert not worker.pending("k")
    assert discarded.args == ["k", request]


def test_stop_ends_a_job_early_and_still_delivers_its_result(qtbot, worker):
    def job(task: Task) -> str:
        while not task.should_stop():
            time.sleep(0.01)
        assert not task.stale()
        return "what was done"

    request = worker.submit("k", job)
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS) as blocker:
        worker.stop("k")
        assert worker.stopping(request)
    assert blocker.args == ["k", request, "what was done"]
    assert not worker.stopping(request)


def test_a_failure_arrives_as_a_signal_with_the_exception(qtbot, worker):
    def job(task: Task) -> None:
        raise ValueError("no such thing")

    with qtbot.waitSignal(worker.failed, timeout=TIMEOUT_MS) as blocker:
        request = worker.submit("k", job)
    key, got, error = blocker.args
    assert (key, got) == ("k", request)
    assert isinstance(error, ValueError) and str(error) == "no such thing"
    assert not worker.pending("k")


def test_a_run_cancelled_by_the_engine_is_discarded(qtbot, worker):
    def job(task: Task) -> None:
        raise RunCancelledError("cancelled before routing")

    with qtbot.waitSignal(worker.discarded, timeout=TIMEOUT_MS):
        worker.submit("k", job)


def test_a_stale_queued_job_never_runs(qtbot, worker):
    ran = []
    release = threading.Event()
    worker.submit("busy", lambda task: release.wait(5))  # holds the one thread
    skipped = worker.submit("k", lambda task: ran.append("skipped"))
    worker.cancel("k")
    with qtbot.waitSignal(worker.discarded, timeout=TIMEOUT_MS) as blocker:
        release.set()
    assert blocker.args == ["k", skipped]
    assert ran == []
