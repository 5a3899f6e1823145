"""Render the main window on the default preset, once per results tab, to docs/screenshots.

Run from the project root: ``.venv/bin/python tools/screenshots.py``. The window is drawn
offscreen after its first evaluation; each results tab is shown in turn and the whole window
is saved as ``docs/screenshots/<tab>.png`` (the Congestion tab after a run of its default
workload); the first tab once more in the dark theme as
``docs/screenshots/main-window-dark.png``. Then the decision workflow: the window with one
spine switch failed from its context menu (``failure.png``), the Workload dock
(``workload.png``), and Scenario > Compare
scenarios on the InfiniBand preset (pinned) and its RoCE variant (``compare.png``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QDockWidget  # noqa: E402

from ui.main_window import MainWindow  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
TIMEOUT_MS = 120_000


def settle(ms: int = 200) -> None:
    """Let Qt process events (layout, repaint) for `ms` milliseconds."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def open_evaluated(scenario=None, width: int = 1400, height: int = 900) -> tuple[MainWindow, str]:
    """The main window on `scenario` (default preset when None) after its first evaluation.

    The second value is empty on success, else why the evaluation did not finish.
    """
    window = MainWindow(scenario=scenario, evaluate_on_start=False)
    window.resize(width, height)
    window.show()
    loop = QEventLoop()
    outcome: dict[str, str] = {}
    window.worker.finished.connect(lambda *_: (outcome.setdefault("ok", ""), loop.quit()))
    window.worker.failed.connect(lambda _id, msg: (outcome.setdefault("error", msg), loop.quit()))
    QTimer.singleShot(TIMEOUT_MS, loop.quit)
    window.evaluate_now()
    loop.exec()
    return window, "" if "ok" in outcome else outcome.get("error", "timeout")


def main() -> int:
    """Save one PNG per results tab; the list of files written."""
    app = QApplication.instance() or QApplication(sys.argv)
    window, error = open_evaluated()
    if error:
        print(f"evaluation did not finish: {error}", file=sys.stderr)
        return 1
    window.canvas.fit()
    OUT.mkdir(parents=True, exist_ok=True)
    tabs = window.results.tabs
    for i in range(tabs.count()):
        tabs.setCurrentIndex(i)
        settle()
        name = tabs.tabText(i).lower().replace(" ", "-")
        if name == "congestion" and not run_congestion(window):
            print("the congestion study did not finish", file=sys.stderr)
            return 1
        path = OUT / f"{name}.png"
        if not window.grab().save(str(path)):
            print(f"cannot write {path}", file=sys.stderr)
            return 1
        print(path.relative_to(ROOT))
    tabs.setCurrentIndex(0)
    window.set_theme("dark")  # the window has no settings, so the choice is not stored
    settle()
    path = OUT / "main-window-dark.png"
    if not window.grab().save(str(path)):
        print(f"cannot write {path}", file=sys.stderr)
        return 1
    print(path.relative_to(ROOT))
    window.set_theme("light")
    written = decision_shots(window)
    window.close()
    app.processEvents()
    return 0 if written else 1


def run_congestion(window: MainWindow) -> bool:
    """Press the Congestion tab's Run on its default workload and wait for the study to
    show (so the screenshot has queues and rates in it); whether it finished."""
    tab = window.congestion_tab
    loop = QEventLoop()
    done: list[bool] = []
    tab.runFinished.connect(lambda cancelled: (done.append(not cancelled), loop.quit()))
    tab.runFailed.connect(lambda _message: (done.append(False), loop.quit()))
    QTimer.singleShot(TIMEOUT_MS, loop.quit)
    tab.run_button.click()
    loop.exec()
    settle()
    return bool(done and done[0])


def save(widget, name: str) -> bool:
    """Grab `widget` to ``docs/screenshots/<name>.png``; whether it was written."""
    path = OUT / f"{name}.png"
    if not widget.grab().save(str(path)):
        print(f"cannot write {path}", file=sys.stderr)
        return False
    print(path.relative_to(ROOT))
    return True


def decision_shots(window: MainWindow) -> bool:
    """A spine failed from its context menu, then the IB preset beside its RoCE variant."""
    canvas = window.canvas
    menu = canvas.menu_for(canvas.nodes["spine"])
    evaluated = QEventLoop()
    window.worker.finished.connect(lambda *_: evaluated.quit())
    QTimer.singleShot(TIMEOUT_MS, evaluated.quit)
    next(a for a in menu.actions() if a.text() == "Fail switch").trigger()
    evaluated.exec()
    canvas.scene().clearSelection()
    settle(400)
    if not save(window, "failure"):
        return False
    window.undo_action.trigger()
    dock = window.findChild(QDockWidget, "workloadDock")
    dock.raise_()
    settle()
    if not save(window, "workload"):
        return False
    window.findChild(QDockWidget, "paletteDock").raise_()
    label = window.results.pin_current()
    window.roce_action.trigger()
    dialog = window.open_compare()
    dialog.resize(1280, 760)
    dialog.set_checked([f"pinned: {label}", dialog.candidates[0].label])
    dialog.baseline_combo.setCurrentText(f"pinned: {label}")
    compared = QEventLoop()  # its own loop: the window's runs quit the one above
    dialog.compared.connect(lambda *_: compared.quit())
    QTimer.singleShot(TIMEOUT_MS, compared.quit)
    dialog.compare()
    compared.exec()
    settle()
    written = dialog.table_result is not None and save(dialog, "compare")
    dialog.close()
    return written


if __name__ == "__main__":
    sys.exit(main())
