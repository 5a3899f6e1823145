"""The Cost tab's supply view: who the capex goes to, beside the price.

Shows the engine's vendor concentration (`CostReport.supply`): one line with the largest
vendor's share of the capex and of the network capex, the share spent on single-source parts
and on open-standard network parts, the host CPU cores the NICs' offload saves, and a table
of capex per vendor. Nothing is computed here; every figure comes from the report.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from engine.analysis import CostReport
from ui.results.tables import fill_table, make_table


class SupplyView(QWidget):
    """Vendor concentration of the bill of materials and the NICs' host cores saved."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("supplyView")
        self.summary = QLabel("Vendors: –")
        self.summary.setObjectName("supplySummary")
        self.summary.setWordWrap(True)
        self.notes = QLabel("")
        self.notes.setObjectName("supplyNotes")
        self.notes.setWordWrap(True)
        self.vendors = make_table(
            "vendorTable", ["vendor", "capex (USD)", "share of capex", "share of network"]
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.vendors, 1)
        layout.addWidget(self.notes)

    def show_cost(self, cost: CostReport | None) -> None:
        """The concentration figures of `cost`, or dashes when there is none."""
        if cost is None:
            self.summary.setText("Vendors: –")
            self.notes.setText("")
            fill_table(self.vendors, [])
            return
        s = cost.supply
        self.summary.setText(
            f"Largest vendor: {s.top_vendor} {s.top_vendor_share:.1%} of capex; "
            f"single-source parts {s.single_source_share:.1%}. "
            f"Network: {s.network_top_vendor} {s.network_top_vendor_share:.1%}, "
            f"single-source {s.network_single_source_share:.1%}, "
            f"open-standard {s.network_open_standard_share:.1%}. "
            f"Host CPU cores saved by NIC offload: {cost.host_cores_saved:,}"
        )
        network = {v.vendor: v.share for v in s.network_by_vendor}
        rows = [
            [v.vendor, float(v.capex_usd), f"{v.share:.1%}", _percent(network.get(v.vendor))]
            for v in s.by_vendor
        ]
        fill_table(self.vendors, rows)
        parts = ", ".join(s.single_source_parts) or "none"
        self.notes.setText(" ".join([f"Single-source parts: {parts}.", *s.notes]))


def _percent(share: float | None) -> str:
    return "–" if share is None else f"{share:.1%}"
