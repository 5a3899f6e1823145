"""Help > About FabricLab: opened from the menu, it shows the versions actually running."""

from __future__ import annotations

import platform
import tomllib
from pathlib import Path

import numba
import numpy
import pyqtgraph
import PySide6
from PySide6.QtCore import QPoint, Qt, qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLabel, QMenu, QPushButton

from ui.about import AboutDialog
from ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def pyproject_version() -> str:
    """The version as written in pyproject.toml (read here independently of the app)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]


def open_about_through_menu(qtbot, window: MainWindow) -> AboutDialog:
    """Click Help in the menu bar, then About FabricLab in the menu that drops down."""
    bar = window.menuBar()
    help_action = next(a for a in bar.actions() if a.text().replace("&", "") == "Help")
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.actionGeometry(help_action).center())
    menu = help_action.menu()
    assert isinstance(menu, QMenu)
    qtbot.waitUntil(menu.isVisible)
    about = next(a for a in menu.actions() if a.text().replace("&", "") == "About FabricLab")
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(about).center())
    qtbot.waitUntil(lambda: window.about_dialog is not None and window.about_dialog.isVisible())
    return window.about_dialog


def label_text(dialog: AboutDialog, name: str) -> str:
    label = dialog.findChild(QLabel, name)
    assert label is not None, f"no label {name}"
    return label.text()


def test_about_from_the_help_menu_shows_the_real_versions(qtbot, catalog):
    window = MainWindow(evaluate_on_start=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    dialog = open_about_through_menu(qtbot, window)

    assert label_text(dialog, "version_fabriclab") == pyproject_version()
    assert label_text(dialog, "version_python") == platform.python_version()
    assert label_text(dialog, "version_qt") == qVersion()
    assert label_text(dialog, "version_pyside6") == PySide6.__version__
    assert label_text(dialog, "version_numba") == numba.__version__
    assert label_text(dialog, "version_numpy") == numpy.__version__
    assert label_text(dialog, "version_pyqtgraph") == pyqtgraph.__version__
    assert pyproject_version() in label_text(dialog, "aboutTitle")
    note = label_text(dialog, "catalogNote")
    assert catalog.updated in note
    assert f"{len(catalog.devices)} devices" in note
    assert f"{len(catalog.sources)} public sources" in note
    icon = dialog.findChild(QLabel, "aboutIcon")
    assert icon.pixmap() is not None and not icon.pixmap().isNull()


def test_copy_versions_puts_them_on_the_clipboard_and_close_closes(qtbot):
    window = MainWindow(evaluate_on_start=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    dialog = open_about_through_menu(qtbot, window)
    QGuiApplication.clipboard().clear()

    qtbot.mouseClick(dialog.findChild(QPushButton, "copyVersionsButton"), Qt.MouseButton.LeftButton)
    text = QGuiApplication.clipboard().text()
    assert f"FabricLab: {pyproject_version()}" in text.splitlines()
    assert f"numba: {numba.__version__}" in text.splitlines()
    assert "Device catalog" in text

    close = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close)
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    qtbot.waitUntil(lambda: not dialog.isVisible())
    QApplication.processEvents()
