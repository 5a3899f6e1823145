"""The main window as the GUI tests open it: built without a first run, shown and exposed."""

from __future__ import annotations

from typing import Any

from ui.main_window import MainWindow


def shown_window(qtbot: Any, *args: Any, **kwargs: Any) -> MainWindow:
    """A `MainWindow(*args, **kwargs)` that does not evaluate on start, shown, exposed and
    owned by `qtbot` (closed with the test)."""
    kwargs.setdefault("evaluate_on_start", False)
    w = MainWindow(*args, **kwargs)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w
