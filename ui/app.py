"""Start-up of the Qt application: display check, QApplication, main window."""

from __future__ import annotations

import os
import sys

HEADLESS_HINT = (
    "FabricLab needs a display for its window (none found: DISPLAY and WAYLAND_DISPLAY are unset).\n"
    "Headless commands work without one:\n"
    "  python main.py presets\n"
    "  python main.py evaluate dgx-h100-ib-ndr-1k [--set routing.mode=spray] [--json]\n"
    "  python main.py validate SCENARIO.json"
)


def display_available() -> bool:
    """Whether Qt can open a window here (a display, or an explicit QT_QPA_PLATFORM)."""
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(
        os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
        or os.environ.get("QT_QPA_PLATFORM")
    )


def run_app() -> int:
    """Open the main window and run the event loop; without a display, say so and exit 1."""
    if not display_available():
        print(HEADLESS_HINT, file=sys.stderr)
        return 1
    from PySide6.QtWidgets import QApplication

    from ui.main_window import MainWindow, app_settings

    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("FabricLab")
    app.setOrganizationName("FabricLab")
    window = MainWindow(settings=app_settings())
    window.show()
    return app.exec()
