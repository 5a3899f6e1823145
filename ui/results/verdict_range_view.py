"""The Compare dialog's "verdict range" tab: the busbw ratio of two scenarios as a range over
the inputs no source pins down, and a tornado plot of which one moves it most.

The range is `engine.analysis.verdict_range` (computed on the dialog's worker, never here);
this view draws its `VerdictRange`: one horizontal bar per unknown from the lowest to the
highest ratio its alternatives give, the largest swing on top, a vertical line at the ratio
of the defaults, each alternative's ratio marked and named on its bar, and under the plot
the band in words with every unknown's source (or "not published").
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from engine.analysis import VerdictRange
from ui.results.plot_axes import result_plot

BAR_HEIGHT = 0.6
BAR_BRUSH = "#9ecae1"
DEFAULT_PEN = "#d62728"
NAME_WIDTH = 190  # px of the left axis, where the unknowns are named


def band_text(result: VerdictRange) -> str:
    """The band in words: ``"busbw b / a at 1 GiB: 2.013 at the defaults, 1.158 to 6.613"``."""
    return (
        f"{result.metric}, {result.b} / {result.a} at {result.size_bytes / 2**20:,.0f} MiB: "
        f"{result.baseline:.3f} at the catalog's defaults ({result.b_value:.1f} / "
        f"{result.a_value:.1f}), {result.low:.3f} to {result.high:.3f} over the unknowns"
    )


def sources_text(result: VerdictRange) -> str:
    """Each unknown with its default, its alternatives' ratios and its source, one a line."""
    lines = []
    for s in result.swings:
        lines.append(
            f"• {s.name} ({s.applies_to}, default {s.default}; {s.values_text()}). "
            f"Source: {s.source}"
        )
    lines += [f"• {note}" for note in result.notes]
    return "\n".join(lines)


class VerdictRangeView(QWidget):
    """The tornado plot and the band's text (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verdictRange")
        self.plot = result_plot("verdictTornado", "busbw ratio b / a", "", log_x=False, log_y=False)
        self.plot.getPlotItem().showGrid(x=True, y=False, alpha=0.3)
        self.summary = QLabel("Compare two scenarios, then ask for the verdict's range.")
        self.summary.setObjectName("verdictRangeSummary")
        self.summary.setWordWrap(True)
        self.sources = QPlainTextEdit()
        self.sources.setObjectName("verdictRangeSources")
        self.sources.setReadOnly(True)
        self.sources.setPlaceholderText("Each unknown's alternatives and sources come here.")
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.plot)
        body.addWidget(self.sources)
        body.setSizes([300, 110])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(body, 1)
        self.result: VerdictRange | None = None
        self.bars: pg.BarGraphItem | None = None

    def show_range(self, result: VerdictRange) -> None:
        """Draw `result`: a bar per unknown, the largest swing at the top."""
        self.result = result
        plot = self.plot.getPlotItem()
        plot.clear()
        n = len(result.swings)
        tops = [float(n - i) for i in range(n)]  # the first (largest) swing on top
        lows = [s.low for s in result.swings]
        widths = [max(s.high - s.low, 1e-9) for s in result.swings]
        self.bars = pg.BarGraphItem(
            x0=lows, y=tops, width=widths, height=BAR_HEIGHT, brush=BAR_BRUSH, pen="#3182bd"
        )
        plot.addItem(self.bars)
        plot.addItem(
            pg.InfiniteLine(
                result.baseline,
                angle=90,
                pen=pg.mkPen(DEFAULT_PEN, width=2),
                label=f"defaults {result.baseline:.2f}",
                labelOpts={"position": 0.97, "color": DEFAULT_PEN},
            )
        )
        left = plot.getAxis("left")
        left.setTicks([[(top, s.name) for top, s in zip(tops, result.swings, strict=True)], []])
        left.setLabel("")
        left.setWidth(NAME_WIDTH)  # the unknowns' names, not numbers
        for top, s in zip(tops, result.swings, strict=True):
            for label, ratio in zip(s.values, s.b_over_a, strict=True):
                if ratio is None:
                    continue
                # each alternative named beside where its ratio lies, away from the defaults
                side = (1.0, 0.5) if ratio < result.baseline else (0.0, 0.5)
                mark = pg.TextItem(f"{label} {ratio:.2f}", color="#222", anchor=side)
                mark.setPos(ratio, top)
                plot.addItem(mark)
        span = max(result.high - result.low, 1e-3)
        plot.setXRange(result.low - 0.25 * span, result.high + 0.25 * span)
        plot.setYRange(0.2, n + 1.0)
        self.summary.setText(band_text(result))
        self.sources.setPlainText(sources_text(result))

    def say(self, text: str) -> None:
        """Show `text` where the band goes (progress, or why there is none)."""
        self.summary.setText(text)
