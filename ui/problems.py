"""The problems dock: every known validation problem, one row each.

Rows read ``where.field: message``; double-clicking a row naming a group (``groups[id]``) or a
bundle (``bundles[id]``) emits `groupActivated(id)` / `bundleActivated(id)`.
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from engine.model.errors import Problem

_WHERE = re.compile(r"^(groups|bundles)\[(.+)\]$")


def problem_text(problem: Problem) -> str:
    """``where.field: message`` (``where: message`` when no field is named)."""
    location = problem.where if problem.field is None else f"{problem.where}.{problem.field}"
    return f"{location}: {problem.message}"


def problem_target(problem: Problem) -> tuple[str, str] | None:
    """``("group", id)`` or ``("bundle", id)`` for a problem located on one, else ``None``."""
    match = _WHERE.match(problem.where)
    if match is None:
        return None
    return ("group" if match.group(1) == "groups" else "bundle", match.group(2))


class ProblemsPanel(QWidget):
    """A list of the document's current problems (structural and expansion)."""

    groupActivated = Signal(str)
    bundleActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("problemsPanel")
        self.problems: list[Problem] = []
        self.list = QListWidget()
        self.list.setObjectName("problemsList")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        self.list.itemDoubleClicked.connect(self._activated)

    def show_problems(self, problems: list[Problem]) -> None:
        """Replace the rows by `problems`."""
        self.problems = list(problems)
        self.list.clear()
        for i, p in enumerate(self.problems):
            item = QListWidgetItem(problem_text(p))
            item.setData(Qt.ItemDataRole.UserRole, i)
            item.setToolTip(str(p))
            if p.severity == "error":
                item.setForeground(QColor("#d62728"))
            self.list.addItem(item)
        if not self.problems:
            item = QListWidgetItem("No problems")
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(item)

    def row_texts(self) -> list[str]:
        """The texts of the problem rows (empty when there are none)."""
        return [problem_text(p) for p in self.problems]

    def _activated(self, item: QListWidgetItem) -> None:
        index = item.data(Qt.ItemDataRole.UserRole)
        if index is None or not 0 <= index < len(self.problems):
            return
        target = problem_target(self.problems[index])
        if target is None:
            return
        kind, ident = target
        (self.groupActivated if kind == "group" else self.bundleActivated).emit(ident)
