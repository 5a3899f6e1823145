"""Help > Keyboard shortcuts and Help > User guide.

The shortcuts dialog lists every action of the window that has a shortcut, read from the
actions themselves when it opens, so the list can never fall behind the menus. The user
guide is `docs/user-guide.md` of the source tree, opened with the desktop's viewer; a
bundle without the docs says where the guide lives instead.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user-guide.md"


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(what the action does, its shortcuts) for every action of `window` that has one,
    sorted by name, each action once."""
    rows = {}
    for action in window.findChildren(QAction):
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        keys = [k for k in keys if k]
        name = action.text().replace("&", "").rstrip("…").strip()
        if keys and name:
            rows[name] = ", ".join(keys)
    return sorted(rows.items(), key=lambda row: row[0].lower())


class ShortcutsDialog(QDialog):
    """A table of the window's actions and their keys."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setObjectName("shortcutsTable")
        self.table.setHorizontalHeaderLabels(["Action", "Keys"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, (name, keys) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(name))
            self.table.setItem(r, 1, QTableWidgetItem(keys))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.resizeColumnToContents(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(460, 520)


def open_user_guide(parent: QWidget, path: Path = GUIDE) -> bool:
    """Open the user guide with the desktop's viewer; say where it is when it cannot."""
    if path.is_file() and QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return True
    QMessageBox.information(
        parent,
        "User guide",
        "The user guide is docs/user-guide.md in FabricLab's source "
        f"({path if path.is_file() else 'not shipped with this install'}).",
    )
    return False
