"""The Collective tab: bus bandwidth and time vs message size, one curve per algorithm.

Both plots are log-log with readable size and time ticks. Each algorithm's curve is created
once and updated with `setData`; an algorithm the report lacks (another op, a forced
algorithm) leaves the legend until it comes back. Each pinned scenario adds its best curve
(the algorithm NCCL's tuner picks per size), dashed in its own colour; in auto mode the
scenario's own pick is drawn too, a wide grey line under the algorithms' curves, so that
where it leaves the best curve the fabric is seen punishing NCCL's choice. The Export menu saves
each plot as PNG, SVG or CSV (the plotted curves, one column per curve).

Above the plots, `CollectiveControls` shows and edits the workload's NCCL algorithm and
protocol through the document. The titles say what the shown report forced ("ring, LL128
(forced)"), the info line the pick per size the report carries ("tree/LL ≤ 32 KiB, ring/
Simple above") and, where another pair is faster on this fabric, what forcing it would gain;
hovering a point names its size, value, NCCL's pick there and the fastest pair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter

from engine.analysis import AppReport, CollectiveRow, CollectiveSweep
from ui.document.document import ScenarioDocument
from ui.results.collective_controls import (
    AUTO,
    CollectiveControls,
    choice_text,
    forcing_text,
    picks_text,
    protocol_label,
    size_text,
    workload_choice,
)
from ui.results.measured_curves import MeasuredPoints, MeasuredSeries
from ui.results.pins import Pin, PinnedCurves
from ui.results.plot_axes import result_plot, si_text
from ui.results.plot_export import ExportTarget, plotted_series, write_series_csv
from ui.results.result_tab import ResultTab

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
SIZE_TITLE = "message size (B)"
BUSBW_TITLE = "busbw (GB/s)"
PICK_COLOR = (120, 120, 120, 110)
TIME_TITLE = "time (s)"


def best_curves(report: AppReport) -> tuple[list[float], list[float], list[float]]:
    """Sizes, busbw (GB/s) and time (s) of the best algorithm per size of a report."""
    rows = report.collective.rows if report.collective is not None else ()
    return (
        [float(r.bytes) for r in rows],
        [float(r.busbw_GBps) for r in rows],
        [float(r.time_s) for r in rows],
    )


def point_tips(
    name: str,
    sizes: Sequence[float],
    values: Sequence[float],
    unit: str,
    rows: Sequence[CollectiveRow],
) -> list[str]:
    """The hover text of each point of algorithm `name`'s curve: size and value, and the
    algorithm and protocol the report picked at that size (`rows`, when they match)."""
    tips = []
    for i, (size, value) in enumerate(zip(sizes, values, strict=True)):
        text = f"{name}, {size_text(size)}: {si_text(value, unit)}"
        if i < len(rows) and rows[i].bytes == int(size):
            row = rows[i]
            if row.algorithm == name:
                text += f"\nNCCL's pick here, with {protocol_label(row.protocol)}"
            else:
                text += f"\nNCCL's pick here: {row.algorithm}/{protocol_label(row.protocol)}"
            if row.forcing_gain() >= 0.005:
                fastest = f"{row.fastest_algorithm}/{protocol_label(row.fastest_protocol)}"
                text += f"\nfastest if forced: {fastest}, {row.forcing_gain():.0%} less time"
        tips.append(text)
    return tips


def _tip(x: float, y: float, data: object) -> str:
    """A hovered point's tooltip: the text its curve stored with it."""
    return str(data)


class CollectiveTab(ResultTab):
    """busbw and time vs message size side by side, with the pinned scenarios' best curves.

    With a `document` (or after `set_document`) the bar above the plots edits the workload's
    algorithm and protocol (`CollectiveControls`).
    """

    def __init__(self, document: ScenarioDocument | None = None) -> None:
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
        self.controls = CollectiveControls(document)
        self.body_layout.insertWidget(1, self.controls)  # between the message line and plots
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.time_curves: dict[str, pg.PlotDataItem] = {}
        # what NCCL runs, under the per-algorithm curves: where it leaves the best one, the
        # fabric punishes NCCL's choice
        self.pick_busbw = self._pick_curve(self.busbw_plot)
        self.pick_time = self._pick_curve(self.time_plot)
        self.pinned_busbw = PinnedCurves(self.busbw_plot)
        self.pinned_time = PinnedCurves(self.time_plot)
        self.measured_busbw = MeasuredPoints(self.busbw_plot)
        self.measured_time = MeasuredPoints(self.time_plot)
        self.set_exports(
            [
                ExportTarget("busbw plot", "busbw", self.export_busbw_csv, self.busbw_plot),
                ExportTarget("time plot", "collective_time", self.export_time_csv, self.time_plot),
            ]
        )

    def set_document(self, document: ScenarioDocument) -> None:
        """Show and edit `document`'s workload algorithm and protocol above the plots."""
        self.controls.set_document(document)

    def show_report(self, report: AppReport) -> None:
        """Draw the report's collective: its curves, what its workload forced, its picks."""
        collective = report.collective
        rows = collective.rows if collective is not None else ()
        algorithm, protocol = workload_choice(report.scenario)
        self.show_sweep(report.collective_sweep, rows, algorithm, protocol)

    def show_sweep(
        self,
        sweep: CollectiveSweep | None,
        rows: Sequence[CollectiveRow] = (),
        algorithm: str = AUTO,
        protocol: str = AUTO,
    ) -> None:
        """Draw the per-algorithm busbw and time curves (``collective_sweep``).

        `rows` (the report's best algorithm and protocol per size) go into the info line
        and the point tooltips; `algorithm` and `protocol` (the report's workload) into the
        titles when they were forced.
        """
        if sweep is None:
            return
        what = f"{sweep.op} on {sweep.ranks:,} GPUs"
        forced = choice_text(algorithm, protocol)
        shown = f"{what}, {forced}" if forced else what
        for plot, title in ((self.busbw_plot, "Bus bandwidth"), (self.time_plot, "Time")):
            if plot.getPlotItem().titleLabel.text != f"{title}, {shown}":
                plot.setTitle(f"{title}, {shown}")  # a new title lays the plot out again
        sizes = list(sweep.sizes)
        picked = algorithm == AUTO and len(sweep.best_busbw_GBps) == len(sizes)
        self._update(self.busbw_plot, self.curves, sizes, sweep.busbw_GBps, "GB/s", rows)
        self._update(self.time_plot, self.time_curves, sizes, sweep.time_s, "s", rows)
        self.pick_busbw.setData(
            sizes if picked else [], list(sweep.best_busbw_GBps) if picked else []
        )
        self.pick_time.setData(sizes if picked else [], list(sweep.best_time_s) if picked else [])
        info = f"{what}: {len(sizes)} message sizes"
        if algorithm == AUTO:
            count = len(sweep.busbw_GBps)
            info += f", {count} algorithm{'s' if count != 1 else ''}"
        if forced:
            info += f"; {forced}"
        picks = picks_text(rows, algorithm_forced=algorithm != AUTO)
        if picks:
            info += f"; {'protocol' if algorithm != AUTO else 'NCCL picks'} by size: {picks}"
        forcing = forcing_text(rows)
        if forcing:
            info += f"; {forcing}"
        if picked:
            info += " (the wide grey line: NCCL's pick)"
        self.set_info(info)

    @staticmethod
    def _pick_curve(plot: pg.PlotWidget) -> pg.PlotDataItem:
        """A wide grey line behind the algorithms' curves: NCCL's pick at each size."""
        # unnamed: no legend row (the legends are crowded already) and no CSV column; the
        # info line names it
        curve = plot.plot(pen=pg.mkPen(PICK_COLOR, width=7))
        curve.setZValue(-1)
        return curve

    @staticmethod
    def _update(
        plot: pg.PlotWidget,
        curves: dict[str, pg.PlotDataItem],
        sizes: list[float],
        values: Mapping[str, Sequence[float]],
        unit: str,
        rows: Sequence[CollectiveRow],
    ) -> None:
        legend = plot.getPlotItem().legend
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
                curve.scatter.opts["hoverable"] = True  # a tooltip per point
                curve.scatter.opts["tip"] = _tip
                curves[name] = curve
            elif legend is not None and legend.getLabel(curve) is None:
                legend.addItem(curve, name)  # back after a report without it
            ys = list(ys)
            curve.setData(sizes, ys, data=point_tips(name, sizes, ys, unit, rows))
        for name, curve in curves.items():
            if name not in values:
                curve.setData([], [])
                if legend is not None:
                    legend.removeItem(curve)

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

    def show_measured(self, runs: Sequence[MeasuredSeries]) -> None:
        """Draw these measured runs as points beside the curves (none: remove them all)."""
        self.measured_busbw.show([(r.label, r.sizes, r.busbw_GBps) for r in runs])
        self.measured_time.show([(r.label, r.sizes, r.time_s) for r in runs])

    def export_busbw_csv(self, path: str) -> None:
        """The busbw plot's curves: message size (bytes), then busbw (GB/s) per curve."""
        write_series_csv(path, "bytes", BUSBW_TITLE, plotted_series(self.busbw_plot))

    def export_time_csv(self, path: str) -> None:
        """The time plot's curves: message size (bytes), then time (s) per curve."""
        write_series_csv(path, "bytes", TIME_TITLE, plotted_series(self.time_plot))
