"""The results dock: collective busbw against message size, and the permutation test."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


class ResultsPanel(QWidget):
    """A pyqtgraph plot of busbw (GB/s) vs message size (log x), one curve per algorithm.

    Curves are created once per algorithm name and updated with `setData`; an algorithm the
    new report lacks is emptied. The label shows the permutation test's mean throughput.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsPanel")
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("busbwPlot")
        self.plot.setBackground("w")
        self.plot.setLogMode(x=True, y=False)
        self.plot.setLabel("bottom", "message size", units="B")
        self.plot.setLabel("left", "busbw", units="GB/s")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.addLegend()
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.summary = QLabel("No results yet")
        self.summary.setObjectName("permutationSummary")
        self.export_button = QPushButton("Export PNG…")
        self.export_button.setObjectName("exportPngButton")
        self.export_button.clicked.connect(self._export_clicked)
        row = QHBoxLayout()
        row.addWidget(self.summary, 1)
        row.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.plot, 1)
        self.report: dict[str, Any] | None = None

    def show_report(self, report: dict[str, Any]) -> None:
        """Plot the report's collective sweep and summarise its permutation test."""
        self.report = report
        sweep = report.get("collective_sweep")
        if sweep:
            self.plot.setTitle(f"{sweep['op']} on {sweep['ranks']:,} GPUs")
            for name, busbw in sweep["busbw_GBps"].items():
                curve = self.curves.get(name)
                if curve is None:
                    color = COLORS[len(self.curves) % len(COLORS)]
                    curve = self.plot.plot(
                        pen=pg.mkPen(color, width=2),
                        symbol="o",
                        symbolSize=5,
                        symbolBrush=color,
                        name=name,
                    )
                    self.curves[name] = curve
                curve.setData(sweep["sizes"], busbw)
            for name, curve in self.curves.items():
                if name not in sweep["busbw_GBps"]:
                    curve.setData([], [])
        perm = report.get("permutation")
        if perm:
            mean = perm["throughput_fraction"]["mean"]
            self.summary.setText(
                f"Permutation ({perm['routing']}): mean throughput {mean:.1%} of line rate, "
                f"{perm['below_99pct_fraction']:.1%} of flows below 99 %"
            )

    def set_status(self, text: str) -> None:
        """Show a state such as ``cancelled`` or an error instead of the summary."""
        self.summary.setText(text)

    def export_png(self, path: str) -> None:
        """Write the plot to `path` as a PNG image."""
        ImageExporter(self.plot.plotItem).export(path)

    def _export_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plot", "busbw.png", "PNG (*.png)")
        if path:
            self.export_png(path)
