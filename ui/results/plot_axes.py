"""Plot widgets for the results tabs: log axes whose ticks read in engineers' units.

pyqtgraph labels a log axis with powers of ten (10³, 10⁶); `UnitLogAxis` labels the same
ticks as "1 kB", "10 µs" or "100", so a reader sees a message size or a time at a glance.
`result_plot` builds a plain `pg.PlotWidget` (the theme restyles every PlotWidget it finds),
with axis titles that carry their units, a grid and a `FittingLegend`: a legend that takes
more columns when its plot is too short for it, so no entry is clipped in a small window.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

LABELLED_MANTISSAS = (1.0, 2.0, 5.0)
LEGEND_MARGIN = 6.0  # room kept between a legend and the view box's edge
SI_PREFIXES = {-12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T"}


def si_text(value: float, unit: str | None) -> str:
    """`value` with an SI prefix on `unit` ("2 kB", "500 ns"); a plain number without unit."""
    value = float(f"{value:.6g}")  # 10**2.9999999 reads as 1000, not 999.99
    if unit is None:
        return f"{value:g}"
    if value == 0:
        return f"0 {unit}"
    exponent = 3 * math.floor(math.log10(abs(value)) / 3)
    exponent = min(max(exponent, min(SI_PREFIXES)), max(SI_PREFIXES))
    mantissa = value / 10.0**exponent
    return f"{mantissa:.3g} {SI_PREFIXES[exponent]}{unit}"


class UnitLogAxis(pg.AxisItem):
    """An axis whose log-mode ticks read as SI-prefixed values of `unit` (or plain numbers)."""

    def __init__(self, orientation: str, unit: str | None = None) -> None:
        super().__init__(orientation)
        self.unit = unit
        self.enableAutoSIPrefix(False)  # the tick labels carry the prefix themselves

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        """pyqtgraph's log ticks, with the minor ones between decades kept only at 2× and 5×:
        "500 ns, 1 µs, 2 µs, 5 µs" instead of a crowded row of every multiple, and a third
        of the grid lines to draw after every report."""
        levels = super().logTickValues(minVal, maxVal, size, stdTicks)
        return [
            (spacing, values if spacing is not None else [v for v in values if _round_tick(v)])
            for spacing, values in levels
        ]

    def logTickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        """Tick labels at 10**v for each v (pyqtgraph hands log-mode ticks as exponents)."""
        return [si_text(10.0 ** float(v) * scale, self.unit) for v in values]


def _round_tick(exponent: float) -> bool:
    """Whether 10**exponent is 1, 2 or 5 times a power of ten."""
    mantissa = round(10.0 ** (float(exponent) - math.floor(float(exponent) + 1e-9)), 6)
    return mantissa in LABELLED_MANTISSAS


# Name endings that say a value's unit (the engine's naming rule), as an axis title shows it.
UNIT_SUFFIXES = {
    "_ns": "ns",
    "_us": "µs",
    "_ms": "ms",
    "_s": "s",
    "_gbps": "Gb/s",
    "_GBps": "GB/s",
    "_Bps": "B/s",
    "_bytes": "B",
    "_m": "m",
    "_usd": "USD",
    "_w": "W",
    "_gb": "GB",
}
# Words a title spells in capitals.
ACRONYMS = {"gpu": "GPU", "mfu": "MFU", "ecn": "ECN", "pfc": "PFC", "mtu": "MTU", "nic": "NIC"}


def axis_title(name: str) -> str:
    """A sweep's parameter or metric name as words with its unit: ``fabric.switch_latency_ns``
    reads "switch latency (ns)", ``busbw_GBps`` "busbw (GB/s)", ``gpu_utilization`` "GPU
    utilization" (the last part of a dotted path; the unit from the name's ending)."""
    last = name.rsplit(".", 1)[-1]
    unit = None
    for suffix, text in UNIT_SUFFIXES.items():
        if last.endswith(suffix) and len(last) > len(suffix):
            last, unit = last[: -len(suffix)], text
            break
    words = " ".join(ACRONYMS.get(w.lower(), w) for w in last.split("_") if w)
    return f"{words} ({unit})" if unit else words


class FittingLegend(pg.LegendItem):
    """A legend that stays inside its view box: with `preferred_columns` (1 unless set with
    `setColumnCount`) when it fits, else with as few more columns (fewer, wider rows) as make
    it fit; it fits itself again when an entry comes or goes and when the box is resized."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.preferred_columns = 1

    def setColumnCount(self, columnCount: int) -> None:
        """Prefer `columnCount` columns (more only when the legend would not fit)."""
        self.preferred_columns = max(1, int(columnCount))
        self.fit()

    def addItem(self, item: object, name: str) -> None:
        """Add an entry, then fit."""
        super().addItem(item, name)
        self.fit()

    def removeItem(self, item: object) -> None:
        """Remove an entry, then fit."""
        super().removeItem(item)
        self.fit()

    def updateSize(self) -> None:
        """Size the legend to its entries' own sizes. (pyqtgraph sums the entries' current
        widths, which the grid has stretched to the last size, so a legend never shrinks.)"""
        if self.size is not None:
            return
        layout = self.layout
        widths: dict[int, float] = {}
        heights: dict[int, float] = {}
        for row in range(layout.rowCount()):
            for column in range(layout.columnCount()):
                item = layout.itemAt(row, column)
                if item is not None:
                    widths[column] = max(widths.get(column, 0.0), item.minimumWidth())
                    heights[row] = max(heights.get(row, 0.0), item.minimumHeight())
        left, top, right, bottom = layout.getContentsMargins()
        h_gap, v_gap = layout.horizontalSpacing(), layout.verticalSpacing()
        width = sum(widths.values()) + h_gap * max(len(widths) - 1, 0) + left + right
        height = sum(heights.values()) + v_gap * max(len(heights) - 1, 0) + top + bottom
        self.setGeometry(0, 0, width, height)

    def fit(self) -> None:
        """Take the fewest columns, from the preferred count up, with which the legend fits
        the view box below and beside its offset; when none does, the one that overflows
        it least."""
        count = len(self.items)
        parent = self.parentItem()
        start = min(self.preferred_columns, max(count, 1))
        if parent is None or count == 0:
            pg.LegendItem.setColumnCount(self, start)
            return
        offset = self.opts.get("offset") or (0.0, 0.0)
        box = parent.boundingRect()
        room_w = box.width() - abs(offset[0]) - LEGEND_MARGIN
        room_h = box.height() - abs(offset[1]) - LEGEND_MARGIN
        overflows = []
        for columns in range(start, count + 1):
            pg.LegendItem.setColumnCount(self, columns)
            rect = self.boundingRect()
            over = max(0.0, rect.width() - room_w) + max(0.0, rect.height() - room_h)
            if over == 0.0:
                return
            overflows.append((over, columns))
        pg.LegendItem.setColumnCount(self, min(overflows)[1])


def result_plot(
    name: str,
    x_title: str,
    y_title: str,
    x_unit: str | None = None,
    y_unit: str | None = None,
    log_x: bool = True,
    log_y: bool = True,
    legend_offset: tuple[int, int] = (10, 10),
) -> pg.PlotWidget:
    """A PlotWidget named `name` with titled axes, a light grid and a legend.

    `x_unit` / `y_unit` label log-mode ticks with SI prefixes ("B" gives 1 kB, 1 MB); the
    titles should carry the unit too, e.g. "message size (B)".
    """
    axes = {"bottom": UnitLogAxis("bottom", x_unit), "left": UnitLogAxis("left", y_unit)}
    plot = pg.PlotWidget(axisItems=axes)
    plot.setObjectName(name)
    plot.setBackground("w")
    plot.setLogMode(x=log_x, y=log_y)
    plot.setLabel("bottom", x_title)
    plot.setLabel("left", y_title)
    plot.showGrid(x=True, y=True, alpha=0.3)
    item = plot.getPlotItem()
    legend = FittingLegend(offset=legend_offset, labelTextSize="8pt", verSpacing=-4)
    legend.setParentItem(item.vb)
    item.legend = legend  # where plot() puts named curves, and what the theme restyles
    item.vb.sigResized.connect(lambda *_: legend.fit())
    plot.setMenuEnabled(True)
    return plot
