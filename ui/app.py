"""Start-up of the Qt application: display check, QApplication, main window."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings

    from ui.main_window import MainWindow

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

    from ui.about import application_icon
    from ui.collector import install_gui_thread_collector
    from ui.settings import app_settings
    from ui.theme import THEME_SETTING, apply_app_theme, theme_named

    app = QApplication.instance() or QApplication(sys.argv)
    install_gui_thread_collector(app)  # engine threads never run Qt destructors (ui.collector)
    app.setApplicationName("FabricLab")
    app.setOrganizationName("FabricLab")
    app.setDesktopFileName("fabriclab")  # matches packaging/fabriclab.desktop (Wayland app id)
    app.setWindowIcon(application_icon())
    settings = app_settings()
    # the saved theme before any widget exists, so the window opens in it without a flash
    apply_app_theme(app, theme_named(settings.value(THEME_SETTING)))
    window = open_main_window(settings)
    try:
        return app.exec()
    finally:
        if window.library is not None:
            window.library.close()


def open_main_window(settings: QSettings | None = None) -> MainWindow:
    """Show the main window on the user's library (`ui.library.session.open_app_library`).

    It opens the last scenario used, or the default preset, from the library (its cached
    result shown at once when there is one). A library file that cannot be used is left
    untouched and reported; the window then opens without library features.
    """
    from ui.library.dialogs import report_library_problem
    from ui.library.session import open_app_library
    from ui.main_window import MainWindow

    library, problem = open_app_library()
    window = MainWindow(settings=settings, library=library, evaluate_on_start=library is None)
    if window.library_session is not None:
        window.library_session.open_start_scenario()
    window.show()
    if problem:
        report_library_problem(window, problem)
    return window
