"""The frames that show parts of a design as wholes on the canvas: its storage network, its pods.

The storage nodes and the switches they reach (`engine.model.networks.storage_ids`) are
drawn inside one dashed, Ethernet-coloured frame titled "Storage network", behind their
cards, so a storage leaf is never mistaken for a leaf of the compute fabric. Each pod of a
design (`engine.model.pods`: a server group with leaves and spines of its own, such as a
scalable unit of NVL72 racks) is drawn inside a dotted frame titled "Pod n" in the band
labels' colour, so a fabric of many pods reads as pods under a shared core. The frames are
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

    pen_style = Qt.PenStyle.DashLine
    title_centred = False

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
        """A rounded rectangle in the frame's pen and colour, its title at the top left."""
        pen = QPen(color(self.colour()), 1.5, self.pen_style)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(self.rect, 10.0, 10.0)
        font = QFont(painter.font())
        font.setBold(True)
        font.setPixelSize(12)
        painter.setFont(font)
        if self.title_centred:  # clear of the tier names pinned at the view's left edge
            band = QRectF(self.rect.left(), self.rect.top() + 4.0, self.rect.width(), 18.0)
            painter.drawText(band, Qt.AlignmentFlag.AlignCenter, self.title)
        else:
            painter.drawText(self.rect.topLeft() + QPointF(12.0, 18.0), self.title)

    def colour(self) -> str:
        """The frame's and its title's colour: the Ethernet colour of the storage network."""
        return self.theme.ethernet


class PodFrame(NetworkFrame):
    """A dotted frame around one pod's cards at `centres`, titled "Pod `number`" at the
    top centre."""

    pen_style = Qt.PenStyle.DotLine
    title_centred = True

    def __init__(self, centres: Iterable[QPointF], theme: Theme, number: int, size: str) -> None:
        super().__init__(centres, theme)
        self.title = f"Pod {number}"
        self.setToolTip(
            f"Pod {number}: {size} with leaves and spines of their own, joined to the other "
            "pods only through the tier above"
        )

    def colour(self) -> str:
        """The band labels' colour: a pod is a part of the fabric, not a network of its own."""
        return self.theme.band_label
