"""Plot widgets for the results tabs: log axes whose ticks read in engineers' units.

pyqtgraph labels a log axis with powers of ten (10³, 10⁶); `UnitLogAxis` labels the same
ticks as "1 kB", "10 µs" or "100", so a reader sees a message size or a time at a glance.
`result_plot` builds a plain `pg.PlotWidget` (the theme restyles every PlotWidget it finds),
with axis titles that carry their units, a grid and a legend.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

LABELLED_MANTISSAS = (1.0, 2.0, 5.0)
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
    plot.addLegend(offset=legend_offset)
    plot.setMenuEnabled(True)
    return plot
