"""Pinned scenarios: reports kept for comparison while the current scenario changes.

`PinBoard` holds the pins in the order they were made, each with its own colour; `PinnedCurves`
draws one dashed curve per pin on a plot, named by the pin's label so the legend tells them
apart from the current scenario's solid curves. Both only keep and draw what the engine's
reports hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt

from engine.analysis import AppReport

# Distinct from the algorithm colours of the current scenario, readable on light and dark.
PIN_COLORS = ("#17becf", "#7f7f7f", "#bcbd22", "#e377c2", "#8c564b", "#aec7e8")
PIN_PEN_STYLE = Qt.PenStyle.DashLine


@dataclass
class Pin:
    """One pinned report, shown under `label` in `color`."""

    label: str
    report: AppReport
    color: str


class PinBoard:
    """The pinned reports by label, in pinning order."""

    def __init__(self) -> None:
        self._pins: dict[str, Pin] = {}

    def add(self, label: str, report: AppReport) -> Pin:
        """Pin `report` as `label`; pinning a label again replaces its report, keeps its colour."""
        pin = self._pins.get(label)
        if pin is not None:
            pin.report = report
            return pin
        used = {p.color for p in self._pins.values()}
        free = [c for c in PIN_COLORS if c not in used]
        color = free[0] if free else PIN_COLORS[len(self._pins) % len(PIN_COLORS)]
        pin = Pin(label, report, color)
        self._pins[label] = pin
        return pin

    def remove(self, label: str) -> bool:
        """Unpin `label`; whether it was pinned."""
        return self._pins.pop(label, None) is not None

    def clear(self) -> None:
        """Unpin everything."""
        self._pins.clear()

    def labels(self) -> list[str]:
        """The pinned labels, oldest first."""
        return list(self._pins)

    def pins(self) -> list[Pin]:
        """The pins, oldest first."""
        return list(self._pins.values())

    def free_label(self, base: str) -> str:
        """`base`, or "base (2)", "base (3)"… whichever is not pinned yet."""
        if base not in self._pins:
            return base
        n = 2
        while f"{base} ({n})" in self._pins:
            n += 1
        return f"{base} ({n})"


class PinnedCurves:
    """The dashed curves of the pins on one plot, created once per label, then `setData`."""

    def __init__(self, plot: pg.PlotWidget) -> None:
        self.plot = plot
        self.curves: dict[str, pg.PlotDataItem] = {}

    def show(self, entries: Sequence[tuple[Pin, Sequence[float], Sequence[float]]]) -> None:
        """Draw exactly these (pin, x, y) curves; curves of pins not listed are removed."""
        wanted = {pin.label for pin, _xs, _ys in entries}
        for label in [label for label in self.curves if label not in wanted]:
            self.plot.removeItem(self.curves.pop(label))
        for pin, xs, ys in entries:
            curve = self.curves.get(pin.label)
            if curve is None:
                curve = self.plot.plot(
                    pen=pg.mkPen(pin.color, width=2, style=PIN_PEN_STYLE), name=pin.label
                )
                self.curves[pin.label] = curve
            curve.setData(list(xs), list(ys))
