"""Screenshots for docs/user-guide.md: the main window on the InfiniBand and RoCE presets.

Run from the project root: ``.venv/bin/python tools/guide_screenshots.py``. For each preset
the window is opened offscreen (``MainWindow(scenario=load_preset(name))``), the first
evaluation is awaited, the Links tab (hottest links) is shown
and the window is saved as ``docs/screenshots/guide-<preset>.png``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from engine.presets.scenarios import load_preset  # noqa: E402
from tools.screenshots import OUT, open_evaluated, settle  # noqa: E402

PRESETS = ("dgx-h100-ib-ndr-1k", "dgx-h100-roce-spectrumx-1k")


def shoot(name: str) -> Path | None:
    """Open the window on preset `name`, wait for its evaluation and save the PNG."""
    window, error = open_evaluated(load_preset(name), 1500, 950)
    if error:
        print(f"{name}: evaluation did not finish: {error}", file=sys.stderr)
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
