"""The frame that shows a design's storage network as a network of its own on the canvas.

The storage nodes and the switches they reach (`engine.model.networks.storage_ids`) are
drawn inside one dashed, Ethernet-coloured frame titled "Storage network", behind their
cards, so a storage leaf is never mistaken for a leaf of the compute fabric. The frame is
made again with the scene, after every edit.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from ui.canvas.layout import NODE_H, NODE_W
from ui.theme import Theme, color

TITLE = "Storage network"
_MARGIN = 24.0


class NetworkFrame(QGraphicsItem):
    """A dashed frame around the cards at `centres`, titled `TITLE`, behind every item."""

    def __init__(self, centres: Iterable[QPointF], theme: Theme) -> None:
        super().__init__()
        points = list(centres)
        xs, ys = [p.x() for p in points], [p.y() for p in points]
        self.rect = QRectF(
            min(xs) - NODE_W / 2 - _MARGIN,
            min(ys) - NODE_H / 2 - _MARGIN - 16.0,
            max(xs) - min(xs) + NODE_W + 2 * _MARGIN,
            max(ys) - min(ys) + NODE_H + 2 * _MARGIN + 16.0,
        )
        self.theme = theme
        self.title = TITLE
        self.setZValue(-10)
        self.setToolTip(
            "Storage network: storage nodes and their switches, reached through the servers' "
            "front-end ports; checkpoint jobs write here, off the compute fabric"
        )

    def boundingRect(self) -> QRectF:
        """The frame's rectangle, with room for its pen."""
        return self.rect.adjusted(-2, -2, 2, 2)

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        """A dashed rounded rectangle in the Ethernet colour, its title at the top left."""
        pen = QPen(color(self.theme.ethernet), 1.5, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(self.rect, 10.0, 10.0)
        font = QFont(painter.font())
        font.setBold(True)
        font.setPixelSize(12)
        painter.setFont(font)
        painter.drawText(self.rect.topLeft() + QPointF(12.0, 18.0), self.title)
