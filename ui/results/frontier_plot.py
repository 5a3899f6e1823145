"""The compare view's decision frontier: cost against performance, the front marked.

Each compared scenario is a point (its cost on x, its performance on y, both as the engine
reads them from the scenario's report with `engine.analysis.frontier_of_reports`). The points
on the Pareto front are drawn in colour and joined cheapest first; the dominated ones are
grey, and the table under the plot names for each one a front point that beats it. The two
axes are chosen in combo boxes (capex, network capex or capex per GPU; step time, tokens/s,
GPU utilization, MFU or busbw). `show_frontier` draws a frontier the engine made elsewhere
(the Sweep panel's, over a sweep). Nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from engine.analysis import (
    FRONTIER_COSTS,
    FRONTIER_REPORT_PERFORMANCE,
    AppReport,
    Frontier,
    frontier_of_reports,
)
from ui.results.tables import fill_table, make_table

FRONT_COLOR = "#1f77b4"
DOMINATED_COLOR = "#b0b0b0"
TITLES = {
    "capex_usd": "capex (USD)",
    "network_capex_usd": "network capex (USD)",
    "cost_per_gpu_usd": "capex per GPU (USD)",
    "step_s": "training step time (s)",
    "tokens_per_s": "tokens/s",
    "gpu_utilization": "GPU utilization",
    "mfu": "MFU",
    "busbw_GBps": "busbw (GB/s)",
    "goodput_tokens_per_s": "goodput (tokens/s)",
}


class FrontierPlot(QWidget):
    """Cost vs performance of the compared scenarios, the non-dominated ones joined."""

    def __init__(self, choose_axes: bool = True, name: str = "frontierView") -> None:
        super().__init__()
        self.setObjectName(name)
        self.result: Frontier | None = None
        self._labels: list[str] = []
        self._reports: list[AppReport] = []
        self.cost_combo = QComboBox()
        self.cost_combo.setObjectName("frontierCost")
        for key in FRONTIER_COSTS:
            self.cost_combo.addItem(TITLES.get(key, key), key)
        self.performance_combo = QComboBox()
        self.performance_combo.setObjectName("frontierPerformance")
        for key in FRONTIER_REPORT_PERFORMANCE:
            self.performance_combo.addItem(TITLES.get(key, key), key)
        self.cost_combo.currentIndexChanged.connect(self._redraw)
        self.performance_combo.currentIndexChanged.connect(self._redraw)
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("frontierPlot")
        self.plot.setBackground("w")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.front_curve = self.plot.plot(
            [], [], pen=pg.mkPen(FRONT_COLOR, width=2), symbol="o", symbolBrush=FRONT_COLOR
        )
        self.dominated_points = pg.ScatterPlotItem(
            [], [], brush=pg.mkBrush(DOMINATED_COLOR), pen=pg.mkPen(DOMINATED_COLOR), size=9
        )
        self.plot.addItem(self.dominated_points)
        self._texts: list[pg.TextItem] = []
        self.table = make_table("frontierTable", ["scenario", "cost", "performance", "front"])
        self.summary = QLabel("Compare two or more scenarios to see their frontier.")
        self.summary.setObjectName("frontierSummary")
        self.summary.setWordWrap(True)
        axes = QHBoxLayout()
        axes.addWidget(QLabel("Cost:"))
        axes.addWidget(self.cost_combo)
        axes.addWidget(QLabel("Performance:"))
        axes.addWidget(self.performance_combo)
        axes.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        if choose_axes:
            layout.addLayout(axes)
        else:  # the axes come with the result (the Sweep panel's frontier)
            for combo in (self.cost_combo, self.performance_combo):
                combo.setParent(self)
                combo.hide()
        layout.addWidget(self.plot, 3)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 2)

    def show_reports(self, labels: Sequence[str], reports: Sequence[AppReport]) -> None:
        """Draw the frontier of these evaluated scenarios on the chosen axes."""
        self._labels, self._reports = list(labels), list(reports)
        self._redraw()

    def _redraw(self) -> None:
        if not self._reports:
            return
        cost, performance = self.cost_combo.currentData(), self.performance_combo.currentData()
        self.show_frontier(frontier_of_reports(self._labels, self._reports, cost, performance))

    def show_frontier(self, result: Frontier) -> None:
        """Draw `result` as it is: the front joined in colour, the dominated points grey."""
        self.result = result
        cost, performance = result.cost_metric, result.performance_metric
        for text in self._texts:
            self.plot.removeItem(text)
        self._texts = []
        front = [result.points[i] for i in result.front]
        self.front_curve.setData([p.cost for p in front], [p.performance for p in front])
        dominated = [
            p
            for p in result.points
            if not p.on_front and p.cost is not None and p.performance is not None
        ]
        self.dominated_points.setData(
            [p.cost for p in dominated], [p.performance for p in dominated]
        )
        for p in result.points:
            if p.cost is None or p.performance is None:
                continue
            text = pg.TextItem(p.label, color=FRONT_COLOR if p.on_front else DOMINATED_COLOR)
            text.setPos(p.cost, p.performance)
            self.plot.addItem(text)
            self._texts.append(text)
        self.plot.setLabel("bottom", f"{TITLES.get(cost, cost)}, lower is better")
        self.plot.setLabel(
            "left", f"{TITLES.get(performance, performance)}, {result.better} is better"
        )
        fill_table(
            self.table,
            [
                [
                    p.label,
                    p.cost,
                    p.performance,
                    "on the front"
                    if p.on_front
                    else (f"beaten by {p.dominated_by}" if p.dominated_by else "–"),
                ]
                for p in result.points
            ],
        )
        self.summary.setText(
            f"Front (cheapest first): {' → '.join(result.front_labels()) or 'none'}; "
            f"{len(dominated)} dominated."
        )
