"""One line of the bill of materials, and the trace of the catalog figures it used.

Every line carries the catalog figures it used and their sources (``id.field = value:
source``), so each total of the cost report can be traced to catalog entries times counts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from engine.catalog.devices import Device


@dataclass(frozen=True)
class BomLine:
    """One line of the bill of materials: `count` identical items and where their figures come from.

    `network` says whether the line counts toward the network's capex and power (everything
    but the servers). `note` says how the count or price was derived when it is not obvious.
    The supply fields (`vendor`, `second_sources`, `lead_time`, `open_standard`; None and
    "unknown" where the catalog has no supply data) and, on NIC lines, the host CPU cores the
    NICs' offload saves (`host_cores_saved`, for the whole line) are filled in by
    `engine.cost.supply.annotate_lines`.
    """

    item: str
    catalog_id: str
    kind: str
    tier: str
    count: int
    unit_price_usd: float
    unit_power_w: float
    provenance: str
    network: bool = True
    note: str = ""
    vendor: str = ""
    second_sources: int | None = None
    lead_time: str = "unknown"
    open_standard: bool | None = None
    host_cores_saved: int = 0

    @property
    def price_usd(self) -> float:
        """Capital cost of the line."""
        return self.count * self.unit_price_usd

    @property
    def power_w(self) -> float:
        """Power of the line."""
        return self.count * self.unit_power_w

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready line with its totals."""
        return {**asdict(self), "price_usd": self.price_usd, "power_w": self.power_w}


def trace(device: Device, names: tuple[str, ...], overrides: dict | None = None) -> str:
    """'id.field = value (source)' for each field used, so a line's figures can be traced."""
    parts = []
    for name in names:
        if overrides and name in overrides:
            parts.append(f"{device.id}.{name} = {overrides[name]:g} (group override)")
        elif device.has(name):
            fig = device.fields[name]
            parts.append(f"{device.id}.{name} = {fig.value}: {fig.provenance()}")
    return " | ".join(parts)
