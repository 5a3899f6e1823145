"""Undoable edits of a scenario: each command keeps the exact before and after scenarios."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand

from engine.model import Scenario

if TYPE_CHECKING:
    from ui.document import ScenarioDocument


class SetFieldCommand(QUndoCommand):
    """Set one dotted-path field (``groups.leaf.count``) of the document's scenario.

    The after scenario is computed by the caller with `engine.model.apply_override`; undo puts
    back the very `Scenario` object that was current before, so it compares equal to it.
    """

    def __init__(
        self,
        document: ScenarioDocument,
        path: str,
        text: str,
        before: Scenario,
        after: Scenario,
    ) -> None:
        super().__init__(f"Set {path} = {text}")
        self.document = document
        self.path = path
        self.text = text
        self.before = before
        self.after = after

    def redo(self) -> None:
        """Apply the edit."""
        self.document.replace_scenario(self.after)

    def undo(self) -> None:
        """Restore the scenario as it was before the edit."""
        self.document.replace_scenario(self.before)
