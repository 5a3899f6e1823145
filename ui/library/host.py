"""What the library features need of the window they serve, handed over by the window.

`SessionHost` lists the window's parts and calls the library session and its comparison use,
so neither imports the window: the window builds one and passes it in, and the dependency
runs from the window to the library features only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMainWindow

from engine.analysis import AppReport
from engine.catalog.devices import Catalog
from ui.document.document import ScenarioDocument
from ui.results.panel import ResultsPanel


@dataclass(frozen=True)
class SessionHost:
    """The window's parts a `LibrarySession` works with."""

    window: QMainWindow  # the parent of the dock and dialogs; its status bar shows messages
    document: ScenarioDocument
    catalog: Catalog
    results: ResultsPanel  # the comparison pins its reports there
    settings: QSettings | None  # where the last scenario used is kept (None: in memory)
    evaluate: Callable[[], object]  # evaluate the current scenario now
    show_cached: Callable[[AppReport], None]  # show a cached report instead of a run
    fit_view: Callable[[], None]  # show the whole (newly opened) scenario on the canvas
