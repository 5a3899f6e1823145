"""``main.py --self-test``: check an installation end to end and exit 0 only if all of it works.

It runs offscreen unless a Qt platform is chosen, so it works on a build machine, in CI and
over SSH. In order: the shipped resources, the default preset evaluated by the engine (the
numba kernels compile or load from their cache), the numba cache when bundled, a scratch
library written and read back in a temp dir, the main window built on the scenario read
back and evaluated by its worker, and that window rendered to a PNG which is loaded again
and must not be blank. One line per check with its wall time; a failure names what failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine import __version__
from engine.analysis import (
    DEFAULT_PRESET,
    CheckResult,
    SelfCheckError,
    check_evaluation,
    check_library,
    check_numba_cache,
    check_resources,
    load_preset,
    run_check,
)
from engine.model.scenario import Scenario

WINDOW_TIMEOUT_S = 180.0
WINDOW_SIZE_PX = (1280, 800)
MIN_COLOURS = 16  # a blank or failed render has a handful; the real window has hundreds


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The self-test's options (``--self-test`` itself is accepted and ignored here)."""
    parser = argparse.ArgumentParser(
        prog="fabriclab --self-test", description="Check this FabricLab installation."
    )
    parser.add_argument("--self-test", action="store_true", help="run the self-test")
    parser.add_argument(
        "--self-test-png",
        metavar="PATH",
        help="where to write the rendered main window (default: a new temp file)",
    )
    return parser.parse_args(argv)


def distinct_colours(image: Any, step_px: int = 3) -> int:
    """How many different pixel values a `QImage` has on a grid every `step_px` pixels."""
    colours = {
        image.pixel(x, y)
        for y in range(0, image.height(), step_px)
        for x in range(0, image.width(), step_px)
    }
    return len(colours)


class WindowCheck:
    """The Qt half: the main window on a scenario, evaluated by its worker, then rendered."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.window: Any = None

    def evaluate(self) -> str:
        """Build and show the main window and wait (event loop running) for its evaluation."""
        from PySide6.QtCore import QEventLoop, QTimer
        from PySide6.QtWidgets import QApplication

        from ui.collector import install_gui_thread_collector
        from ui.main_window import MainWindow

        app = QApplication.instance() or QApplication([sys.argv[0]])
        install_gui_thread_collector(app)
        app.setApplicationName("FabricLab")
        self.window = window = MainWindow(scenario=self.scenario, evaluate_on_start=False)
        window.resize(*WINDOW_SIZE_PX)
        window.show()
        outcome: dict[str, str] = {}
        loop = QEventLoop()

        def done(key: str, value: str = "") -> None:
            outcome.setdefault(key, value)
            loop.quit()

        window.worker.finished.connect(lambda *_: done("ok"))
        window.worker.failed.connect(lambda _id, message: done("error", message))
        window.worker.invalid.connect(lambda _id, problems: done("error", str(problems[0])))
        window.worker.cancelled.connect(lambda *_: done("error", "evaluation was cancelled"))
        QTimer.singleShot(int(WINDOW_TIMEOUT_S * 1000), lambda: done("error", "timed out"))
        if window.evaluate_now() is None:
            raise SelfCheckError(
                f"the window did not evaluate: {window.statusBar().currentMessage()}"
            )
        loop.exec()
        if "ok" not in outcome:
            raise SelfCheckError(f"the window's evaluation failed: {outcome.get('error')}")
        app.processEvents()  # results and canvas redraw on the finished signal
        report = window.last_report
        if report is None:
            raise SelfCheckError("the window shows no report after its evaluation")
        return f"{window.windowTitle()}: evaluated in {report.ui_elapsed_s:.2f} s"

    def render(self, png: Path) -> str:
        """Render the evaluated window to `png`, load it again, and refuse a blank image."""
        from PySide6.QtCore import QEventLoop, QTimer
        from PySide6.QtGui import QImage

        if self.window is None:
            raise SelfCheckError("no window to render (its evaluation failed)")
        self.window.canvas.fit()
        loop = QEventLoop()
        QTimer.singleShot(200, loop.quit)  # let layout and repaint settle
        loop.exec()
        if not self.window.grab().save(str(png), "PNG"):
            raise SelfCheckError(f"cannot write {png}")
        image = QImage(str(png))
        if image.isNull():
            raise SelfCheckError(f"{png} was written but does not load as an image")
        colours = distinct_colours(image)
        if colours < MIN_COLOURS:
            raise SelfCheckError(f"{png} looks blank ({colours} distinct colours)")
        return f"{png} ({image.width()}×{image.height()} px, {colours} colours)"

    def close(self) -> None:
        """Close the window (stops its worker) and let Qt finish pending events."""
        if self.window is not None:
            from PySide6.QtWidgets import QApplication

            self.window.close()
            QApplication.processEvents()


def _png_path(option: str | None) -> Path:
    if option:
        return Path(option).expanduser().resolve()
    handle, name = tempfile.mkstemp(prefix="fabriclab-self-test-", suffix=".png")
    os.close(handle)
    return Path(name)


def run_self_test(argv: list[str]) -> int:
    """Run every check, print one line each and a verdict; 0 when all passed, else 1."""
    args = parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    frozen = bool(getattr(sys, "frozen", False))
    start = time.perf_counter()
    print(
        f"FabricLab {__version__} self-test ({'bundled app' if frozen else 'checkout'}, "
        f"Python {sys.version.split()[0]}, Qt platform {os.environ['QT_QPA_PLATFORM']})",
        flush=True,
    )
    results: list[CheckResult] = []

    def record(result: CheckResult) -> CheckResult:
        print(result.line(), flush=True)
        results.append(result)
        return result

    record(run_check("resource files", check_resources))
    scenario = load_preset(DEFAULT_PRESET)
    record(run_check("evaluate default preset", lambda: check_evaluation(scenario)))
    record(run_check("numba cache", lambda: check_numba_cache(frozen, os.environ)))
    with tempfile.TemporaryDirectory(prefix="fabriclab-self-test-") as scratch:
        read_back: dict[str, Scenario] = {}

        def library() -> str:
            detail, read_back["scenario"] = check_library(Path(scratch), scenario)
            return detail

        record(run_check("library round trip", library))
        window = WindowCheck(read_back.get("scenario", scenario))
        try:
            record(run_check("main window evaluated", window.evaluate))
            png = _png_path(args.self_test_png)
            record(run_check("window rendered to PNG", lambda: window.render(png)))
        finally:
            window.close()

    failed = [r.name for r in results if not r.ok]
    total = time.perf_counter() - start
    if failed:
        print(
            f"self-test FAILED: {len(failed)} of {len(results)} checks ({', '.join(failed)}), "
            f"{total:.2f} s",
            flush=True,
        )
        return 1
    print(f"self-test passed: {len(results)} checks in {total:.2f} s", flush=True)
    return 0
