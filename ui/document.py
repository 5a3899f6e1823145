"""The open scenario: the current `Scenario`, its undo stack and its structural problems."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from engine.catalog import Catalog, default_catalog
from engine.errors import Problem, ScenarioError
from engine.model import Scenario, apply_override
from engine.validation import check_structure
from ui.commands import SetFieldCommand


class ScenarioDocument(QObject):
    """Owns the scenario being edited; every edit is an undoable `SetFieldCommand`.

    `changed` fires whenever the scenario object is replaced (edit, undo, redo, load).
    `problemsChanged(list[Problem])` fires when the known problems change: structural ones
    are checked synchronously (cheap); expansion problems arrive later from the worker via
    `set_expand_problems`.
    """

    changed = Signal()
    problemsChanged = Signal(list)

    def __init__(
        self, scenario: Scenario, catalog: Catalog | None = None, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.catalog = catalog or default_catalog()
        self.undo_stack = QUndoStack(self)
        self._scenario = scenario
        self._structural: list[Problem] = check_structure(scenario, self.catalog)
        self._expand: list[Problem] = []

    @property
    def scenario(self) -> Scenario:
        """The current scenario (treat as read-only: edit through `set_field`)."""
        return self._scenario

    @property
    def problems(self) -> list[Problem]:
        """Structural problems plus the last expansion problems reported by the worker."""
        return self._structural + self._expand

    @property
    def structural_problems(self) -> list[Problem]:
        """Problems `check_structure` finds in the current scenario."""
        return list(self._structural)

    def set_field(self, path: str, text: str) -> str | None:
        """Push an undoable edit of `path` to `text`; the refusal message if it cannot apply.

        Input that `apply_override` rejects (unknown field, unreadable value) pushes nothing
        and returns the `ScenarioError` message. Setting a field to its current value is a
        no-op (nothing pushed, ``None`` returned).
        """
        try:
            after = apply_override(self._scenario, path, text)
        except ScenarioError as exc:
            return "; ".join(f"{p.where}: {p.message}" for p in exc.problems)
        if after == self._scenario:
            return None
        self.undo_stack.push(SetFieldCommand(self, path, text, self._scenario, after))
        return None

    def load(self, scenario: Scenario) -> None:
        """Replace the scenario with a new one and forget the undo history."""
        self.undo_stack.clear()
        self.replace_scenario(scenario)

    def replace_scenario(self, scenario: Scenario) -> None:
        """Make `scenario` current (used by the undo commands); re-check its structure."""
        self._scenario = scenario
        self._structural = check_structure(scenario, self.catalog)
        self._expand = []
        self.changed.emit()
        self.problemsChanged.emit(self.problems)

    def set_expand_problems(self, problems: list[Problem]) -> None:
        """Record the problems expansion found (reported by the worker for this scenario)."""
        self._expand = [p for p in problems if p not in self._structural]
        self.problemsChanged.emit(self.problems)
