"""The bill of materials, capex, power and energy cost, as the door returns them.

`CostReport` wraps what `engine.cost` computes: every headline figure is a typed field
(``None`` where there is nothing to divide by, e.g. cost per busbw without a collective),
each line of the bill of materials is a `BomRow`. The sources of the figures, the
arithmetic behind them (`derivation`) and the notes are texts for people and stay so.
"""

# Field names are the JSON keys, units spelled as the engine spells them (GBps, Bps).
# ruff: noqa: N815

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.analysis.results.codec import JsonResult


@dataclass(frozen=True)
class BomRow(JsonResult):
    """One line of the bill of materials: `count` identical items, their unit figures and
    totals, where the figures come from (`provenance`), and whether the line counts toward
    the network (everything but the servers)."""

    item: str
    catalog_id: str
    kind: str
    tier: str
    count: int
    unit_price_usd: float
    unit_power_w: float
    provenance: str
    network: bool
    note: str
    vendor: str
    second_sources: int | None
    lead_time: str
    open_standard: bool | None
    host_cores_saved: int
    price_usd: float
    power_w: float


@dataclass(frozen=True)
class VendorShare(JsonResult):
    """One vendor's capex in a bill of materials and its share of the bill (0..1)."""

    vendor: str
    capex_usd: float
    share: float


@dataclass(frozen=True)
class SupplySummary(JsonResult):
    """Vendor concentration of a bill of materials (engine.cost.supply): capex per vendor,
    the largest vendor's share, the share spent on single-source parts (no second source on
    the fabric's technology), the same for the network lines alone, the network's share in
    open-standard parts, which parts are single-source and which have no supply data."""

    by_vendor: tuple[VendorShare, ...]
    top_vendor: str
    top_vendor_share: float
    single_source_share: float
    network_by_vendor: tuple[VendorShare, ...]
    network_top_vendor: str
    network_top_vendor_share: float
    network_single_source_share: float
    network_open_standard_share: float
    single_source_parts: tuple[str, ...]
    missing_supply: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class CostReport(JsonResult):
    """Capex, power, energy cost over `years`, cost per GPU and per unit of performance.

    The ``*_per_busbw_GBps`` and ``*_per_token_per_s`` figures are ``None`` when the report
    was made without the collective's busbw or the training's tokens/s. `host_cores_saved`
    sums the host CPU cores the NICs' offload saves; `supply` is the vendor concentration.
    The CLI's JSON writes any value JSON cannot hold as its text.
    """

    JSON_DEFAULT = str

    gpus: int
    capex_usd: float
    network_capex_usd: float
    server_capex_usd: float
    network_share: float
    cost_per_gpu_usd: float
    network_cost_per_gpu_usd: float
    power_w: float
    network_power_w: float
    network_power_share: float
    power_per_gpu_w: float
    years: float
    usd_per_kwh: float
    pue: float
    energy_kwh: float
    opex_usd: float
    network_opex_usd: float
    tco_usd: float
    tco_per_gpu_usd: float
    busbw_GBps: float | None
    usd_per_busbw_GBps: float | None
    network_usd_per_busbw_GBps: float | None
    tokens_per_s: float | None
    usd_per_token_per_s: float | None
    tco_usd_per_token_per_s: float | None
    host_cores_saved: int
    supply: SupplySummary
    bom: tuple[BomRow, ...]
    sources: tuple[Mapping[str, Any], ...]
    derivation: Mapping[str, str]
    notes: tuple[str, ...]
