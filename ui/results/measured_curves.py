"""Measured nccl-tests runs drawn beside the model's curves: points, no line, one per run.

A measured run belongs on the collective plots as what it is, a set of measurements: hollow
markers in a colour of their own, labelled "measured: NAME" in the legend, so the model's
curves and the cluster's points can be read against each other at every size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyqtgraph as pg

MEASURED_COLORS = ("#111111", "#8c564b", "#e377c2", "#7f7f7f")


@dataclass(frozen=True)
class MeasuredSeries:
    """One measured run as the plots draw it: sizes (bytes), busbw (GB/s), time (s)."""

    label: str
    sizes: tuple[float, ...]
    busbw_GBps: tuple[float, ...]
    time_s: tuple[float, ...]


class MeasuredPoints:
    """The measured runs on one plot, one scatter item per run label, updated in place."""

    def __init__(self, plot: pg.PlotWidget) -> None:
        self.plot = plot
        self.items: dict[str, pg.PlotDataItem] = {}

    def show(self, entries: Sequence[tuple[str, Sequence[float], Sequence[float]]]) -> None:
        """Draw exactly these (label, x, y) runs; runs not listed leave the plot."""
        wanted = {label for label, _xs, _ys in entries}
        for label in [label for label in self.items if label not in wanted]:
            self.plot.removeItem(self.items.pop(label))
        for label, xs, ys in entries:
            item = self.items.get(label)
            if item is None:
                color = MEASURED_COLORS[len(self.items) % len(MEASURED_COLORS)]
                item = self.plot.plot(
                    pen=None,
                    symbol="s",
                    symbolSize=8,
                    symbolBrush=None,
                    symbolPen=pg.mkPen(color, width=2),
                    name=f"measured: {label}",
                )
                self.items[label] = item
            item.setData(list(xs), list(ys))
