"""Screenshots for docs/user-guide.md: the main window on the InfiniBand and RoCE presets.

Run from the project root: ``.venv/bin/python tools/guide_screenshots.py``. For each preset
the window is opened offscreen (``MainWindow(scenario=load_preset(name))``), the first
evaluation is awaited, the Links tab (hottest links and per-tier utilization chart) is shown
and the window is saved as ``docs/screenshots/guide-<preset>.png``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from engine.presets import load_preset  # noqa: E402
from ui.main_window import MainWindow  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
PRESETS = ("dgx-h100-ib-ndr-1k", "dgx-h100-roce-spectrumx-1k")
TIMEOUT_MS = 180_000


def settle(ms: int = 300) -> None:
    """Let Qt process events (layout, repaint) for `ms` milliseconds."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def shoot(name: str) -> Path | None:
    """Open the window on preset `name`, wait for its evaluation and save the PNG."""
    window = MainWindow(scenario=load_preset(name), evaluate_on_start=False)
    window.resize(1500, 950)
    window.show()
    loop = QEventLoop()
    outcome: dict[str, str] = {}
    window.worker.finished.connect(lambda *_: (outcome.setdefault("ok", ""), loop.quit()))
    window.worker.failed.connect(lambda _id, msg: (outcome.setdefault("error", msg), loop.quit()))
    QTimer.singleShot(TIMEOUT_MS, loop.quit)
    window.evaluate_now()
    loop.exec()
    if "ok" not in outcome:
        print(
            f"{name}: evaluation did not finish: {outcome.get('error', 'timeout')}", file=sys.stderr
        )
        window.close()
        return None
    window.canvas.fit()
    window.results.tabs.setCurrentWidget(window.results.links_tab)
    settle()
    path = OUT / f"guide-{name}.png"
    ok = window.grab().save(str(path))
    window.close()
    return path if ok else None


def main() -> int:
    """Save one PNG per preset; non-zero if any failed."""
    app = QApplication.instance() or QApplication(sys.argv)
    OUT.mkdir(parents=True, exist_ok=True)
    status = 0
    for name in PRESETS:
        path = shoot(name)
        if path is None:
            status = 1
        else:
            print(path.relative_to(ROOT))
    app.processEvents()
    return status


if __name__ == "__main__":
    sys.exit(main())
