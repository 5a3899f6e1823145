"""Lanes side by side: results in order, one progress, a failure or a cancel stops them all."""

from __future__ import annotations

import threading
import time

import pytest

from engine.runtime.progress import Progress, RunCancelledError
from engine.runtime.side_by_side import run_lanes

WAIT_S = 5.0  # a lane that is never told to stop gives up after this (the test then fails)


def wait_for_stop(progress: Progress) -> str:
    """Poll like an engine kernel between chunks until told to stop; "not stopped" if never."""
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        progress.poll("waiting")
        time.sleep(0.001)
    return "not stopped"


def test_lanes_run_on_their_own_threads_and_return_in_order() -> None:
    seen: list[int] = []
    barrier = threading.Barrier(2, timeout=WAIT_S)

    def lane(value: str):
        def run(_progress: Progress) -> str:
            seen.append(threading.get_ident())
            barrier.wait()  # both lanes at once, or the barrier times out
            return value

        return run

    assert run_lanes([(1.0, lane("a")), (1.0, lane("b"))], None, threads=2) == ["a", "b"]
    assert len(set(seen)) == 2
    assert threading.get_ident() in seen  # the first lane runs on the calling thread


def test_one_thread_runs_the_lanes_in_turn_on_the_calling_thread() -> None:
    order: list[tuple[str, int]] = []

    def lane(name: str):
        return lambda _p: order.append((name, threading.get_ident())) or name

    assert run_lanes([(1.0, lane("a")), (1.0, lane("b"))], None, threads=1) == ["a", "b"]
    assert order == [("a", threading.get_ident()), ("b", threading.get_ident())]


def test_progress_is_the_weighted_sum_of_the_lanes() -> None:
    heard: list[tuple[float, str]] = []
    lock = threading.Lock()

    def report(fraction: float, stage: str) -> None:
        with lock:
            heard.append((fraction, stage))

    first_done = threading.Event()

    def first(progress: Progress) -> None:
        progress(1.0, "first")
        first_done.set()

    def second(progress: Progress) -> None:
        assert first_done.wait(WAIT_S)
        progress(0.5, "second")

    run_lanes([(3.0, first), (1.0, second)], Progress(report), threads=2)
    assert heard == [(0.75, "first"), (pytest.approx(0.875), "second")]


def test_a_failing_lane_stops_the_others_and_its_error_is_raised() -> None:
    outcome: dict[str, str] = {}

    def waits(progress: Progress) -> str:
        try:
            outcome["waits"] = wait_for_stop(progress)
        except RunCancelledError:
            outcome["waits"] = "stopped"
            raise
        return outcome["waits"]

    def fails(_progress: Progress) -> None:
        raise ValueError("bad lane")

    with pytest.raises(ValueError, match="bad lane"):
        run_lanes([(1.0, waits), (1.0, fails)], None, threads=2)
    assert outcome["waits"] == "stopped"


def test_the_callers_cancel_stops_every_lane() -> None:
    stop = threading.Event()
    stopped: list[str] = []

    def lane(name: str):
        def run(progress: Progress) -> str:
            stop.set()
            try:
                return wait_for_stop(progress)
            except RunCancelledError:
                stopped.append(name)
                raise

        return run

    before = threading.active_count()
    with pytest.raises(RunCancelledError):
        run_lanes([(1.0, lane("a")), (1.0, lane("b"))], Progress(None, stop.is_set), threads=2)
    assert sorted(stopped) == ["a", "b"]
    assert threading.active_count() == before  # no lane outlives the call
