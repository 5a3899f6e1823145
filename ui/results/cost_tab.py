"""The Cost tab: the bill of materials with each part's vendor and second sources, capex and
cost per GPU, the vendor concentration (`supply_view`), and the pinned comparison."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from engine.analysis import AppReport, CostReport
from ui.results.comparison import COST_METRICS, comparison_rows
from ui.results.pins import Pin
from ui.results.plot_export import ExportTarget, write_csv
from ui.results.result_tab import ResultTab
from ui.results.supply_view import SupplyView
from ui.results.tables import fill_table, make_table, set_header, table_header, table_rows


class CostTab(ResultTab):
    """The engine's bill of materials and headline cost figures, pins side by side."""

    def __init__(self) -> None:
        self.table = make_table(
            "costTable",
            [
                "item",
                "count",
                "unit price (USD)",
                "price (USD)",
                "power (W)",
                "vendor",
                "second sources",
                "lead time",
                "open standard",
                "host cores saved",
            ],
        )
        self.supply = SupplyView()
        self.capex_label = QLabel("Capex: –")
        self.capex_label.setObjectName("capexLabel")
        self.network_share_label = QLabel("Network share: –")
        self.network_share_label.setObjectName("networkShareLabel")
        self.cost_per_gpu_label = QLabel("Cost per GPU: –")
        self.cost_per_gpu_label.setObjectName("costPerGpuLabel")
        self.comparison = make_table("costComparison", ["metric", "current"])
        self.comparison.setVisible(False)
        self.comparison.setWordWrap(False)
        figures = QHBoxLayout()
        for label in (self.capex_label, self.network_share_label, self.cost_per_gpu_label):
            figures.addWidget(label)
        figures.addStretch(1)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.setObjectName("costSplitter")
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(figures)
        left_layout.addWidget(self.table, 1)
        body.addWidget(left)
        body.addWidget(self.supply)
        body.addWidget(self.comparison)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        body.setStretchFactor(2, 2)
        super().__init__("costTab", body)
        self.set_exports(
            [
                ExportTarget("bill of materials", "bom", self.export_table_csv),
                ExportTarget("comparison table", "cost_comparison", self.export_comparison_csv),
            ]
        )

    def show_cost(self, cost: CostReport | None, error: str | None) -> None:
        """The bill of materials and capex figures, or why cost was not evaluated."""
        if cost is None:
            fill_table(self.table, [])
            self.capex_label.setText("Capex: –")
            self.network_share_label.setText("Network share: –")
            self.cost_per_gpu_label.setText("Cost per GPU: –")
            self.supply.show_cost(None)
            self.set_error(f"Cost not evaluated: {error}" if error else "")
            return
        rows = [
            [
                line.item,
                int(line.count),
                float(line.unit_price_usd),
                float(line.price_usd),
                float(line.power_w),
                line.vendor,
                "no data" if line.second_sources is None else int(line.second_sources),
                line.lead_time,
                {True: "yes", False: "no", None: "unknown"}[line.open_standard],
                int(line.host_cores_saved),
            ]
            for line in cost.bom
        ]
        fill_table(self.table, rows)
        self.supply.show_cost(cost)
        self.capex_label.setText(f"Capex: ${cost.capex_usd:,.0f}")
        self.network_share_label.setText(f"Network share: {cost.network_share:.1%}")
        self.cost_per_gpu_label.setText(f"Cost per GPU: ${cost.cost_per_gpu_usd:,.0f}")
        self.set_info(f"Bill of materials, {len(rows)} line(s)")

    def show_pins(self, pins: list[Pin], current: AppReport | None) -> None:
        """The comparison table: headline cost figures of the current and pinned scenarios."""
        self.comparison.setVisible(bool(pins))
        set_header(
            self.comparison,
            ["metric", "current", *(p.label for p in pins)],
        )
        sections = [current.cost if current else None, *(p.report.cost for p in pins)]
        fill_table(self.comparison, comparison_rows(COST_METRICS, sections))

    def export_table_csv(self, path: str) -> None:
        """The bill of materials as shown."""
        write_csv(path, table_header(self.table), table_rows(self.table))

    def export_comparison_csv(self, path: str) -> None:
        """The comparison with the pinned scenarios as shown."""
        write_csv(path, table_header(self.comparison), table_rows(self.comparison))
