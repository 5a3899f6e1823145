"""Undoable edits of a scenario: each command keeps the exact before and after scenarios.

Every structural edit (add or remove groups and bundles, move nodes, paste) is one
`ScenarioCommand`: the caller builds the after `Scenario` (plain dataclass manipulation, no
engine computation) and the command swaps the whole scenario on redo and undo, so undo puts
back the very object that was current before and it compares equal to it. A command knows
nothing of the document: it is handed the one call that makes a scenario current
(`ScenarioDocument.replace_scenario`), so the dependency runs from the document to here only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QUndoCommand

from engine.model.scenario import Scenario

ApplyScenario = Callable[[Scenario], None]


class ScenarioCommand(QUndoCommand):
    """Make `after` current through `apply` on redo; undo makes `before` current again."""

    def __init__(self, apply: ApplyScenario, text: str, before: Scenario, after: Scenario) -> None:
        super().__init__(text)
        self.apply = apply
        self.before = before
        self.after = after

    def redo(self) -> None:
        """Apply the edit."""
        self.apply(self.after)

    def undo(self) -> None:
        """Restore the scenario as it was before the edit."""
        self.apply(self.before)


class SetFieldCommand(ScenarioCommand):
    """Set one dotted-path field (``groups.leaf.count``) of the document's scenario.

    The after scenario is computed by the caller with `engine.model.overrides.apply_override`.
    """

    def __init__(
        self, apply: ApplyScenario, path: str, text: str, before: Scenario, after: Scenario
    ) -> None:
        super().__init__(apply, f"Set {path} = {text}", before, after)
        self.path = path
        self.text = text


class AddGroupCommand(ScenarioCommand):
    """Add one device group."""


class RemoveItemsCommand(ScenarioCommand):
    """Remove groups (with the bundles and failures touching them) and bundles."""


class AddCustomDeviceCommand(ScenarioCommand):
    """Add one user-defined device (a server, switch or NIC) to the scenario's own catalog."""


class AddBundleCommand(ScenarioCommand):
    """Add one link bundle."""


class MoveGroupsCommand(ScenarioCommand):
    """Move one or more nodes: a whole drag is one command, so one undo step."""


class PasteCommand(ScenarioCommand):
    """Paste copied groups (new ids) and the bundles between them."""


class ReplaceScenarioCommand(ScenarioCommand):
    """Replace the whole scenario, e.g. by one generated from a template."""


class ConvertTechnologyCommand(ScenarioCommand):
    """Make the InfiniBand or RoCE variant of the scenario (`engine.analysis
    .convert_technology`): switches, technology and transport settings in one step."""


class FailuresCommand(ScenarioCommand):
    """Fail or restore links of a bundle or members of a switch group (the scenario's
    `failures`)."""
