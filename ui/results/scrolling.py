"""A results view inside a scroll area, so that the tab holding it keeps a small minimum size.

The Results dock must fit a 1280x800 screen beside the canvas (issue 16): a view added to a
tab (the Goodput tab's link-errors box, the Sweep panel's frontier) scrolls when squeezed
instead of raising the dock's minimum height or width.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


def scrolling(widget: QWidget) -> QScrollArea:
    """`widget` in a frameless scroll area that resizes it to the room there is."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(widget)
    return area
