"""The results dock: tabs for the collective plot, hottest links, training step and cost.

Every tab shows what the worker's report holds (no computation here) and exports its
table or plot data as CSV.
"""

from __future__ import annotations

import csv
from typing import Any

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
COMM_KINDS = ("tp", "cp", "ep", "pp", "dp")


def write_csv(path: str, header: list[str], rows: list[list[Any]]) -> None:
    """Write `header` and `rows` to `path` with the csv module."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def make_table(name: str, header: list[str]) -> QTableWidget:
    """A read-only, row-selecting table with `header` columns."""
    table = QTableWidget(0, len(header))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(header)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    table.verticalHeader().setVisible(False)
    return table


def fill_table(table: QTableWidget, rows: list[list[Any]]) -> None:
    """Replace the table's rows (large numbers with thousands separators, small ones with 4
    significant digits)."""
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.setItem(r, c, QTableWidgetItem(_cell_text(value)))


def _cell_text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def table_rows(table: QTableWidget) -> list[list[str]]:
    """The table's cell texts, row by row."""
    return [
        [table.item(r, c).text() if table.item(r, c) else "" for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]


def table_header(table: QTableWidget) -> list[str]:
    """The table's column titles."""
    return [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]


class _Tab(QWidget):
    """A tab with a message label, an Export CSV button and a body widget."""

    def __init__(self, name: str, body: QWidget, default_file: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self.default_file = default_file
        self.message = QLabel()
        self.message.setObjectName(f"{name}Message")
        self.message.setWordWrap(True)
        self.export_csv_button = QPushButton("Export CSV…")
        self.export_csv_button.setObjectName(f"{name}ExportCsv")
        self.top = QHBoxLayout()
        self.top.addWidget(self.message, 1)
        self.top.addWidget(self.export_csv_button)
        layout = QVBoxLayout(self)
        layout.addLayout(self.top)
        self.body_layout = layout
        layout.addWidget(body, 1)

    def set_error(self, text: str) -> None:
        """Show a failure message in red."""
        self.message.setStyleSheet("color: #d62728")
        self.message.setText(text)

    def set_info(self, text: str) -> None:
        """Show an informational line."""
        self.message.setStyleSheet("")
        self.message.setText(text)


class ResultsPanel(QWidget):
    """The summary line above four tabs: Collective, Links, Training, Cost.

    Collective: a pyqtgraph plot of busbw (GB/s) vs message size (log x), one curve per
    algorithm, created once per name and updated with `setData`. Links: the permutation
    test's hottest links; clicking a row emits `bundleActivated(bundle_id)`. Training: the
    step breakdown, GPU utilization and MFU. Cost: the bill of materials and capex figures.
    """

    bundleActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsPanel")
        self.report: dict[str, Any] | None = None
        self.summary = QLabel("No results yet")
        self.summary.setObjectName("permutationSummary")
        self.tabs = QTabWidget()
        self.tabs.setObjectName("resultsTabs")
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs, 1)
        self._build_collective()
        self._build_links()
        self._build_training()
        self._build_cost()

    # ---- construction -------------------------------------------------------------------------

    def _build_collective(self) -> None:
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("busbwPlot")
        self.plot.setBackground("w")
        self.plot.setLogMode(x=True, y=False)
        self.plot.setLabel("bottom", "message size", units="B")
        self.plot.setLabel("left", "busbw", units="GB/s")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.addLegend()
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.collective_tab = _Tab("collectiveTab", self.plot, "collective.csv")
        self.export_button = QPushButton("Export PNG…")
        self.export_button.setObjectName("exportPngButton")
        self.export_button.clicked.connect(self._export_png_clicked)
        self.collective_tab.top.addWidget(self.export_button)
        self.collective_tab.export_csv_button.clicked.connect(
            lambda: self._ask_csv(self.collective_tab, self.export_collective_csv)
        )
        self.tabs.addTab(self.collective_tab, "Collective")

    def _build_links(self) -> None:
        self.links_table = make_table("linksTable", ["link", "bundle", "utilization"])
        self.links_table.cellClicked.connect(self._link_clicked)
        self.links_tab = _Tab("linksTab", self.links_table, "hottest_links.csv")
        self.links_tab.export_csv_button.clicked.connect(
            lambda: self._ask_csv(self.links_tab, lambda p: self._table_csv(self.links_table, p))
        )
        self.tabs.addTab(self.links_tab, "Links")

    def _build_training(self) -> None:
        self.training_table = make_table("trainingTable", ["component", "seconds", "share"])
        self.training_tab = _Tab("trainingTab", self.training_table, "training_step.csv")
        self.gpu_util_label = QLabel("GPU utilization: –")
        self.gpu_util_label.setObjectName("gpuUtilizationLabel")
        self.mfu_label = QLabel("MFU: –")
        self.mfu_label.setObjectName("mfuLabel")
        row = QHBoxLayout()
        row.addWidget(self.gpu_util_label)
        row.addWidget(self.mfu_label)
        row.addStretch(1)
        self.training_tab.body_layout.insertLayout(1, row)
        self.training_tab.export_csv_button.clicked.connect(
            lambda: self._ask_csv(
                self.training_tab, lambda p: self._table_csv(self.training_table, p)
            )
        )
        self.tabs.addTab(self.training_tab, "Training")

    def _build_cost(self) -> None:
        self.cost_table = make_table(
            "costTable", ["item", "count", "unit price (USD)", "price (USD)", "power (W)"]
        )
        self.cost_tab = _Tab("costTab", self.cost_table, "bom.csv")
        self.capex_label = QLabel("Capex: –")
        self.capex_label.setObjectName("capexLabel")
        self.network_share_label = QLabel("Network share: –")
        self.network_share_label.setObjectName("networkShareLabel")
        self.cost_per_gpu_label = QLabel("Cost per GPU: –")
        self.cost_per_gpu_label.setObjectName("costPerGpuLabel")
        row = QHBoxLayout()
        for label in (self.capex_label, self.network_share_label, self.cost_per_gpu_label):
            row.addWidget(label)
        row.addStretch(1)
        self.cost_tab.body_layout.insertLayout(1, row)
        self.cost_tab.export_csv_button.clicked.connect(
            lambda: self._ask_csv(self.cost_tab, lambda p: self._table_csv(self.cost_table, p))
        )
        self.tabs.addTab(self.cost_tab, "Cost")

    # ---- showing a report ---------------------------------------------------------------------

    def show_report(self, report: dict[str, Any]) -> None:
        """Fill every tab from the report and summarise its permutation test."""
        self.report = report
        self._show_collective(report.get("collective_sweep"))
        perm = report.get("permutation")
        if perm:
            mean = perm["throughput_fraction"]["mean"]
            self.summary.setText(
                f"Permutation ({perm['routing']}): mean throughput {mean:.1%} of line rate, "
                f"{perm['below_99pct_fraction']:.1%} of flows below 99 %"
            )
            self._show_links(perm.get("hottest_links") or [])
        self._show_training(report.get("training"), report.get("training_error"))
        self._show_cost(report.get("cost"), report.get("cost_error"))

    def _show_collective(self, sweep: dict[str, Any] | None) -> None:
        if not sweep:
            return
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

    def _show_links(self, links: list[dict[str, Any]]) -> None:
        fill_table(
            self.links_table,
            [[h["link"], h.get("bundle", ""), float(h["utilization"])] for h in links],
        )
        self.links_tab.set_info(
            f"{len(links)} hottest link(s) of the permutation test" if links else "No loaded links"
        )

    def _show_training(self, training: dict[str, Any] | None, error: str | None) -> None:
        if training is None:
            fill_table(self.training_table, [])
            self.gpu_util_label.setText("GPU utilization: –")
            self.mfu_label.setText("MFU: –")
            self.training_tab.set_error(f"Training not evaluated: {error}" if error else "")
            return
        step = float(training["step_s"]) or 1.0
        rows: list[list[Any]] = [["compute", float(training["compute_s"])]]
        comm = training.get("comm_s") or {}
        for kind in COMM_KINDS:
            if kind in comm:
                rows.append([f"exposed {kind} comm", float(comm[kind]["exposed_s"])])
        rows.append(["pipeline bubble", float(training["bubble_s"])])
        rows = [[name, s, f"{s / step:.1%}"] for name, s in rows]
        rows.append(["step", float(training["step_s"]), "100.0%"])
        fill_table(self.training_table, rows)
        self.gpu_util_label.setText(f"GPU utilization: {training['gpu_utilization']:.1%}")
        self.mfu_label.setText(f"MFU: {training['mfu']:.1%}")
        self.training_tab.set_info(
            f"{training.get('model_name', training.get('model', ''))}: "
            f"{training['tokens_per_s']:,.0f} tokens/s on {training['gpus']:,} GPUs"
        )

    def _show_cost(self, cost: dict[str, Any] | None, error: str | None) -> None:
        if cost is None:
            fill_table(self.cost_table, [])
            self.capex_label.setText("Capex: –")
            self.network_share_label.setText("Network share: –")
            self.cost_per_gpu_label.setText("Cost per GPU: –")
            self.cost_tab.set_error(f"Cost not evaluated: {error}" if error else "")
            return
        rows = [
            [
                line["item"],
                int(line["count"]),
                float(line["unit_price_usd"]),
                float(line["price_usd"]),
                float(line["power_w"]),
            ]
            for line in cost.get("bom", [])
        ]
        fill_table(self.cost_table, rows)
        self.capex_label.setText(f"Capex: ${cost['capex_usd']:,.0f}")
        self.network_share_label.setText(f"Network share: {cost['network_share']:.1%}")
        self.cost_per_gpu_label.setText(f"Cost per GPU: ${cost['cost_per_gpu_usd']:,.0f}")
        self.cost_tab.set_info(f"Bill of materials, {len(rows)} line(s)")

    def set_status(self, text: str) -> None:
        """Show a state such as ``cancelled`` or an error instead of the summary."""
        self.summary.setText(text)

    # ---- links --------------------------------------------------------------------------------

    def _link_clicked(self, row: int, _column: int) -> None:
        item = self.links_table.item(row, 1)
        bundle = item.text() if item else ""
        link = self.links_table.item(row, 0)
        self.links_tab.set_info(f"Selected {link.text() if link else ''}")
        self.bundleActivated.emit(bundle)

    # ---- export -------------------------------------------------------------------------------

    def export_png(self, path: str) -> None:
        """Write the plot to `path` as a PNG image."""
        ImageExporter(self.plot.plotItem).export(path)

    def export_collective_csv(self, path: str) -> None:
        """Message size and busbw (GB/s) of every algorithm, one row per size."""
        sweep = (self.report or {}).get("collective_sweep") or {}
        names = list(sweep.get("busbw_GBps", {}))
        rows = [
            [size, *(sweep["busbw_GBps"][n][i] for n in names)]
            for i, size in enumerate(sweep.get("sizes", []))
        ]
        write_csv(path, ["bytes", *(f"{n} busbw GB/s" for n in names)], rows)

    def export_links_csv(self, path: str) -> None:
        """The hottest links table."""
        self._table_csv(self.links_table, path)

    def export_training_csv(self, path: str) -> None:
        """The training step breakdown table."""
        self._table_csv(self.training_table, path)

    def export_cost_csv(self, path: str) -> None:
        """The bill of materials table."""
        self._table_csv(self.cost_table, path)

    @staticmethod
    def _table_csv(table: QTableWidget, path: str) -> None:
        write_csv(path, table_header(table), table_rows(table))

    def _ask_csv(self, tab: _Tab, export) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export CSV", tab.default_file, "CSV (*.csv)")
        if not path:
            return
        try:
            export(path)
        except OSError as exc:
            tab.set_error(f"Cannot write {path}: {exc}")

    def _export_png_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plot", "busbw.png", "PNG (*.png)")
        if path:
            self.export_png(path)
