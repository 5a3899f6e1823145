"""A view that follows one scenario document: its `sync` on `changed`, its `show_problems` on
`problemsChanged`, moved from the old document to the new when the window opens another."""

from __future__ import annotations

from collections.abc import Callable

from engine.model.errors import Problem
from ui.document.document import ScenarioDocument


def follow(
    old: ScenarioDocument | None,
    new: ScenarioDocument,
    sync: Callable[[], None],
    show_problems: Callable[[list[Problem]], None],
) -> None:
    """Disconnect `sync` and `show_problems` from `old` (if any) and connect them to `new`."""
    if old is not None:
        old.changed.disconnect(sync)
        old.problemsChanged.disconnect(show_problems)
    new.changed.connect(sync)
    new.problemsChanged.connect(show_problems)
