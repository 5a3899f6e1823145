"""Guards against Qt binding releases that corrupt the interpreter.

PySide6-Essentials 6.12.0 on Python 3.11 drops one reference to ``None`` each time Qt calls a
``paint()`` written in Python (every canvas item and every pyqtgraph item is one). After a few
thousand repaints ``None``'s reference count reaches zero and the interpreter aborts with
"deallocating None". pyproject.toml excludes that release; this test fails if an installed
binding still has the fault. From Python 3.12 ``None`` is immortal and the fault is harmless.
"""

import sys

import pytest
from PySide6 import QtCore, QtWidgets

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="None is immortal from Python 3.12 (PEP 683)"
)


class _PythonPaintedItem(QtWidgets.QGraphicsItem):
    """The smallest item whose paint() is Python code."""

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(0, 0, 20, 20)

    def paint(self, painter, option, widget=None) -> None:
        painter.drawRect(0, 0, 20, 20)


def test_python_paint_keeps_references_to_none(qtbot):
    scene = QtWidgets.QGraphicsScene()
    scene.addItem(_PythonPaintedItem())
    view = QtWidgets.QGraphicsView(scene)
    qtbot.addWidget(view)
    view.resize(120, 120)
    view.show()
    view.grab()  # first paint: lets caches and lazy imports settle
    before = sys.getrefcount(None)
    repaints = 300
    for _ in range(repaints):
        view.grab()
    lost = before - sys.getrefcount(None)
    assert lost < repaints // 10, (
        f"{lost} references to None lost over {repaints} repaints: this Qt binding "
        "(PySide6 6.12.0?) will crash the interpreter in a long session"
    )
