"""The Collective tab: bus bandwidth and time vs message size, one curve per algorithm.

Both plots are log-log with readable size and time ticks. Each algorithm's curve is created
once and updated with `setData`; each pinned scenario adds its best curve (the algorithm the
tuner picks per size), dashed in its own colour. The Export menu saves each plot as PNG, SVG
or CSV (the plotted curves, one column per curve).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter

from engine.analysis import AppReport, CollectiveSweep
from ui.results.pins import Pin, PinnedCurves
from ui.results.plot_axes import result_plot
from ui.results.plot_export import ExportTarget, plotted_series, write_series_csv
from ui.results.result_tab import ResultTab

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
SIZE_TITLE = "message size (B)"
BUSBW_TITLE = "busbw (GB/s)"
TIME_TITLE = "time (s)"


def best_curves(report: AppReport) -> tuple[list[float], list[float], list[float]]:
    """Sizes, busbw (GB/s) and time (s) of the best algorithm per size of a report."""
    rows = report.collective.rows if report.collective is not None else ()
    return (
        [float(r.bytes) for r in rows],
        [float(r.busbw_GBps) for r in rows],
        [float(r.time_s) for r in rows],
    )


class CollectiveTab(ResultTab):
    """busbw and time vs message size side by side, with the pinned scenarios' best curves."""

    def __init__(self) -> None:
        # both curves rise to the right: the legends go bottom right
        self.busbw_plot = result_plot(
            "busbwPlot", SIZE_TITLE, BUSBW_TITLE, x_unit="B", legend_offset=(-10, -10)
        )
        self.time_plot = result_plot(
            "collectiveTimePlot",
            SIZE_TITLE,
            TIME_TITLE,
            x_unit="B",
            y_unit="s",
            legend_offset=(-10, -10),
        )
        body = QSplitter(Qt.Orientation.Horizontal)
        body.setObjectName("collectivePlots")
        body.addWidget(self.busbw_plot)
        body.addWidget(self.time_plot)
        super().__init__("collectiveTab", body)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.time_curves: dict[str, pg.PlotDataItem] = {}
        self.pinned_busbw = PinnedCurves(self.busbw_plot)
        self.pinned_time = PinnedCurves(self.time_plot)
        self.set_exports(
            [
                ExportTarget("busbw plot", "busbw", self.export_busbw_csv, self.busbw_plot),
                ExportTarget("time plot", "collective_time", self.export_time_csv, self.time_plot),
            ]
        )

    def show_sweep(self, sweep: CollectiveSweep | None) -> None:
        """Draw the report's per-algorithm busbw and time curves (``collective_sweep``)."""
        if sweep is None:
            return
        what = f"{sweep.op} on {sweep.ranks:,} GPUs"
        for plot, title in ((self.busbw_plot, "Bus bandwidth"), (self.time_plot, "Time")):
            if plot.getPlotItem().titleLabel.text != f"{title}, {what}":
                plot.setTitle(f"{title}, {what}")  # a new title lays the plot out again
        sizes = list(sweep.sizes)
        self._update(self.busbw_plot, self.curves, sizes, sweep.busbw_GBps)
        self._update(self.time_plot, self.time_curves, sizes, sweep.time_s)
        self.set_info(f"{what}: {len(sizes)} message sizes, {len(sweep.busbw_GBps)} algorithms")

    @staticmethod
    def _update(
        plot: pg.PlotWidget,
        curves: dict[str, pg.PlotDataItem],
        sizes: list[float],
        values: Mapping[str, Sequence[float]],
    ) -> None:
        for name, ys in values.items():
            curve = curves.get(name)
            if curve is None:
                color = COLORS[len(curves) % len(COLORS)]
                curve = plot.plot(
                    pen=pg.mkPen(color, width=2),
                    symbol="o",
                    symbolSize=5,
                    symbolBrush=color,
                    symbolPen=None,
                    name=name,
                )
                curves[name] = curve
            curve.setData(sizes, list(ys))
        for name, curve in curves.items():
            if name not in values:
                curve.setData([], [])

    def show_pins(self, pins: list[Pin]) -> None:
        """Draw each pin's best busbw and time curve, dashed, labelled with the pin's label."""
        busbw, times = [], []
        for pin in pins:
            sizes, bw, t = best_curves(pin.report)
            if sizes:
                busbw.append((pin, sizes, bw))
                times.append((pin, sizes, t))
        self.pinned_busbw.show(busbw)
        self.pinned_time.show(times)

    def export_busbw_csv(self, path: str) -> None:
        """The busbw plot's curves: message size (bytes), then busbw (GB/s) per curve."""
        write_series_csv(path, "bytes", BUSBW_TITLE, plotted_series(self.busbw_plot))

    def export_time_csv(self, path: str) -> None:
        """The time plot's curves: message size (bytes), then time (s) per curve."""
        write_series_csv(path, "bytes", TIME_TITLE, plotted_series(self.time_plot))
