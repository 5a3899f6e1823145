"""Small dialogs and messages of the library features: questions, errors, a diff table.

Every question opens window-modal with `open()`, never `exec()`, so the event loop keeps
running while it waits; library and file errors become one-paragraph messages.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from engine.library.store import LibraryError
from engine.model.errors import ScenarioError
from ui.results.tables import fill_table, make_table

LIBRARY_ERRORS = (LibraryError, ScenarioError, sqlite3.Error, OSError)


def error_text(exc: BaseException) -> str:
    """A one-paragraph message for a library, scenario or file error."""
    if isinstance(exc, ScenarioError):
        return "; ".join(f"{p.where}: {p.message}" for p in exc.problems) or str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename or ''}: {exc.strerror}".lstrip(": ")
    return str(exc) or type(exc).__name__


def local_time(iso: str | None) -> str:
    """An ISO time stamp (UTC) as local ``YYYY-MM-DD HH:MM``; the text itself if unreadable."""
    if not iso:
        return ""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def ask_text(
    parent: QWidget, title: str, label: str, text: str, accepted: Callable[[str], None]
) -> QInputDialog:
    """Ask for one line of text (window-modal, not blocking); `accepted(text)` on OK."""
    dialog = QInputDialog(parent)
    dialog.setObjectName("libraryTextDialog")
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    dialog.setTextValue(text)
    dialog.textValueSelected.connect(accepted)
    dialog.finished.connect(dialog.deleteLater)
    dialog.open()
    return dialog


def ask_item(
    parent: QWidget, title: str, label: str, items: list[str], accepted: Callable[[str], None]
) -> QInputDialog:
    """Ask to pick one of `items` from a list (window-modal, not blocking); `accepted(item)`
    on OK, nothing on Cancel."""
    dialog = QInputDialog(parent)
    dialog.setObjectName("libraryItemDialog")
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    dialog.setComboBoxItems(items)
    dialog.setComboBoxEditable(False)
    dialog.textValueSelected.connect(accepted)
    dialog.finished.connect(dialog.deleteLater)
    dialog.open()
    return dialog


def ask_choice(
    parent: QWidget,
    title: str,
    text: str,
    buttons: list[tuple[str, QMessageBox.ButtonRole, Callable[[], None] | None]],
    icon: QMessageBox.Icon = QMessageBox.Icon.Question,
) -> QMessageBox:
    """A message box with labelled buttons, each running its action (or nothing) when clicked.

    Window-modal and not blocking: the box is returned open, Escape closes it doing nothing.
    """
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.NoButton, parent)
    box.setObjectName("libraryMessageBox")
    for label, role, action in buttons:
        button = box.addButton(label, role)
        if action is not None:
            button.clicked.connect(action)
    box.finished.connect(box.deleteLater)
    box.open()
    return box


def report_library_problem(window: QWidget, message: str) -> QMessageBox:
    """Tell the user at start that the library cannot be used and the app runs without it."""
    if isinstance(window, QMainWindow):
        window.statusBar().showMessage(f"No library: {message}")
    return ask_choice(
        window,
        "FabricLab library",
        "FabricLab cannot use its scenario library:\n\n"
        f"{message}\n\n"
        "The app runs without a library this time (no library save, search or history); "
        "File > Open still opens scenario JSON files. Set FABRICLAB_LIBRARY to use another "
        "library file.",
        [("OK", QMessageBox.ButtonRole.AcceptRole, None)],
        QMessageBox.Icon.Warning,
    )


def _value_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "))


class DiffDialog(QDialog):
    """The field-by-field differences of two scenarios (dotted path, value in each)."""

    def __init__(
        self, label_a: str, label_b: str, rows: list[dict[str, Any]], parent: QWidget | None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("libraryDiffDialog")
        self.setWindowTitle(f"Compare {label_a} and {label_b}")
        self.resize(720, 420)
        self.table = make_table("libraryDiffTable", ["field", label_a, label_b])
        fill_table(
            self.table, [[r["path"], _value_text(r["a"]), _value_text(r["b"])] for r in rows]
        )
        count = len(rows)
        summary = QLabel(
            f"{count} field(s) differ (— : absent)" if count else "The two scenarios are identical"
        )
        summary.setObjectName("libraryDiffSummary")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
