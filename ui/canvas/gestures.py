"""The canvas's gestures: connection drags, node drags, palette drops, wheel and key zoom.

`CanvasGestures` is mixed into `FabricCanvas` (before `QGraphicsView`, so its event
handlers override the view's and hand the rest on with ``super()``). Every gesture that
edits ends in one call of the document, so it is one undo step: a right-button (or
Shift+left) drag from node to node connects them, a node drag moves the dragged nodes, and a
device dropped from the palette adds a group where it lands, a switch in the tier of the
band it lands in (a spine when dropped in the spine band); a switch dragged into another
switch tier's band joins that tier.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QKeySequence, QPen
from PySide6.QtWidgets import QGraphicsLineItem

from ui.canvas.items import EdgeItem, NodeItem
from ui.canvas.layout import tier_at
from ui.document.document import ScenarioDocument
from ui.theme import Theme, color

DEVICE_MIME = "application/x-fabriclab-device"
ZOOM_STEP_IN = 1.25
ZOOM_STEP_OUT = 0.8
WHEEL_ZOOM = 1.15
MIN_MOVE = 0.5  # a node that moved less (scene units) did not move


def off_origin(x: float, y: float) -> tuple[float, float]:
    """A position to store: (0, 0) means "not placed" in a scenario, so it is nudged."""
    return (x, y) if (x, y) != (0.0, 0.0) else (0.0, 0.001)


class CanvasGestures:
    """Mouse, drag-and-drop and keyboard handling of the canvas view (a mixin).

    The view it is mixed into provides the attributes below and `scene`, `items`,
    `mapToScene` (a `QGraphicsView`), `zoom` and `select_group` (`FabricCanvas`).
    """

    document: ScenarioDocument
    theme: Theme
    nodes: dict[str, NodeItem]
    edges: dict[str, EdgeItem]
    positions: dict[str, QPointF]
    _connect_from: str
    _connect_line: QGraphicsLineItem | None

    # ---- connecting and moving nodes --------------------------------------------------------

    def _node_at(self, view_pos) -> NodeItem | None:
        for item in self.items(view_pos):
            if isinstance(item, NodeItem):
                return item
        return None

    def _update_edges(self) -> None:
        for edge in self.edges.values():
            if edge.a in self.nodes and edge.b in self.nodes:
                edge.set_ends(self.nodes[edge.a].pos(), self.nodes[edge.b].pos())

    def _cancel_connect(self) -> None:
        if self._connect_line is not None and self._connect_line.scene() is not None:
            self.scene().removeItem(self._connect_line)
        self._connect_line = None
        self._connect_from = ""

    def mousePressEvent(self, event) -> None:
        """Right button (or Shift+left) on a node starts a connection drag."""
        pos = event.position().toPoint()
        right = event.button() == Qt.MouseButton.RightButton
        shift_left = event.button() == Qt.MouseButton.LeftButton and bool(
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        )
        node = self._node_at(pos) if right or shift_left else None
        if node is not None:
            self._connect_from = node.group_id
            start = node.pos()
            line = QGraphicsLineItem(start.x(), start.y(), start.x(), start.y())
            line.setPen(QPen(color(self.theme.selection), 2, Qt.PenStyle.DashLine))
            line.setZValue(10)
            self.scene().addItem(line)
            self._connect_line = line
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        """Stretch the connection line, or let nodes follow the drag with their edges."""
        if self._connect_from:
            end = self.mapToScene(event.position().toPoint())
            line = self._connect_line.line()
            self._connect_line.setLine(line.x1(), line.y1(), end.x(), end.y())
            event.accept()
            return
        super().mouseMoveEvent(event)
        self._update_edges()

    def mouseReleaseEvent(self, event) -> None:
        """End a connection drag (bundle added) or a node drag (one move command)."""
        if self._connect_from:
            source = self._connect_from
            target = self._node_at(event.position().toPoint())
            self._cancel_connect()
            event.accept()
            if target is not None and target.group_id != source:
                self.document.connect_groups(source, target.group_id)
            elif target is not None:
                self._release_menu(target.group_id)  # a right click: its context menu
            return
        super().mouseReleaseEvent(event)
        moved: dict[str, tuple[float, float]] = {}
        for gid, node in self.nodes.items():
            old = self.positions.get(gid)
            pos = node.pos()
            if old is not None and (pos - old).manhattanLength() > MIN_MOVE:
                moved[gid] = off_origin(pos.x(), pos.y())
        if moved:
            tiers = {}  # a switch dragged into another switch tier's band joins that tier
            for gid, (_x, y) in moved.items():
                node, tier = self.nodes[gid], tier_at(y)
                if node.kind == "switch" and tier != "server" and tier != node.tier:
                    tiers[gid] = tier
            self.document.move_groups(moved, tiers)

    # ---- drops from the palette -------------------------------------------------------------

    @staticmethod
    def _accepts(event) -> bool:
        return event.mimeData().hasFormat(DEVICE_MIME)

    def dragEnterEvent(self, event) -> None:
        """Accept catalog devices dragged from the palette."""
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        """Keep accepting a palette drag while it moves over the canvas."""
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        """Add a group of the dropped catalog model at the drop position."""
        if not self._accepts(event):
            event.ignore()
            return
        model = bytes(event.mimeData().data(DEVICE_MIME)).decode("utf-8")
        at = self.mapToScene(event.position().toPoint())
        try:
            gid = self.document.add_device(model, off_origin(at.x(), at.y()), tier_at(at.y()))
        except KeyError:
            event.ignore()
            return
        event.acceptProposedAction()
        self.select_group(gid)

    # ---- zoom by wheel and keys -------------------------------------------------------------

    def wheelEvent(self, event) -> None:
        """Zoom around the cursor."""
        steps = event.angleDelta().y() / 120
        if steps:
            self.zoom(WHEEL_ZOOM**steps)
        event.accept()

    def keyPressEvent(self, event) -> None:
        """Ctrl+= / Ctrl++ zooms in, Ctrl+- zooms out; Delete removes the selection."""
        if event.matches(QKeySequence.StandardKey.ZoomIn) or (
            event.modifiers() & Qt.KeyboardModifier.ControlModifier
            and event.key() in (Qt.Key.Key_Plus, Qt.Key.Key_Equal)
        ):
            self.zoom(ZOOM_STEP_IN)
        elif event.matches(QKeySequence.StandardKey.ZoomOut) or (
            event.modifiers() & Qt.KeyboardModifier.ControlModifier
            and event.key() == Qt.Key.Key_Minus
        ):
            self.zoom(ZOOM_STEP_OUT)
        else:
            super().keyPressEvent(event)
