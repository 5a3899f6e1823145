"""The Cost tab's supply view: who the capex goes to, beside the price.

Shows the engine's vendor concentration (`CostReport.supply`) in two tables side by side:
the figures (the largest vendor's share of the capex and of the network capex, the share
spent on single-source parts and on open-standard network parts, the host CPU cores the
NICs' offload saves, which parts are single-source, notes such as parts without supply
data) and the capex per vendor. Tables, not wrapped labels, so that the tab can shrink with
the window. Nothing is computed here; every figure comes from the report.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QWidget

from engine.analysis import CostReport
from ui.results.tables import fill_table, make_table


class SupplyView(QWidget):
    """Vendor concentration of the bill of materials and the NICs' host cores saved."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("supplyView")
        self.figures = make_table("supplyFigures", ["supply", "value"])
        self.vendors = make_table(
            "vendorTable", ["vendor", "capex (USD)", "share of capex", "share of network"]
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.figures, 1)
        layout.addWidget(self.vendors, 1)

    def figure(self, title: str) -> str:
        """The value shown for the figure `title` ("" when there is none)."""
        for r in range(self.figures.rowCount()):
            if self.figures.item(r, 0) and self.figures.item(r, 0).text() == title:
                return self.figures.item(r, 1).text()
        return ""

    def show_cost(self, cost: CostReport | None) -> None:
        """The concentration figures of `cost`, or empty tables when there is none."""
        if cost is None:
            fill_table(self.figures, [])
            fill_table(self.vendors, [])
            return
        s = cost.supply
        rows = [
            ["largest vendor", f"{s.top_vendor} {s.top_vendor_share:.1%}"],
            ["single-source share", f"{s.single_source_share:.1%}"],
            ["network: largest vendor", f"{s.network_top_vendor} {s.network_top_vendor_share:.1%}"],
            ["network: single-source share", f"{s.network_single_source_share:.1%}"],
            ["network: open-standard share", f"{s.network_open_standard_share:.1%}"],
            ["host CPU cores saved by NIC offload", f"{cost.host_cores_saved:,}"],
            ["single-source parts", ", ".join(s.single_source_parts) or "none"],
            *(["note", note] for note in s.notes),
        ]
        fill_table(self.figures, rows)
        network = {v.vendor: v.share for v in s.network_by_vendor}
        fill_table(
            self.vendors,
            [
                [v.vendor, float(v.capex_usd), f"{v.share:.1%}", _percent(network.get(v.vendor))]
                for v in s.by_vendor
            ],
        )


def _percent(share: float | None) -> str:
    return "–" if share is None else f"{share:.1%}"
