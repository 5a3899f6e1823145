"""Vendor concentration of a bill of materials, and each line's supply facts and offload.

Beside the price, an operator wants to know how much of it one vendor holds: the share of
capex per vendor, the share from the single largest one, and the share spent on parts that
have no second source (catalog ``supply``). The network (every line but the servers) is
summarized on its own too, since the GPU servers of the catalog all come from one vendor and
would otherwise hide the difference between fabrics. NIC lines also carry the host CPU cores
their offload saves (catalog ``host_cores_saved`` per NIC, times the count).

A part the catalog has no supply data for is counted under its device's vendor and listed in
``missing_supply`` with a note, never an error.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.catalog.devices import Catalog
from engine.cost.bom_line import BomLine


def annotate_lines(lines: list[BomLine], catalog: Catalog, technology: str) -> list[BomLine]:
    """`lines` with their supply facts on `technology` and NIC host cores saved filled in."""
    out = []
    for line in lines:
        supply = catalog.supply_of(line.catalog_id)
        device = catalog.devices.get(line.catalog_id)
        cores = 0
        if line.kind == "nic" and device is not None and device.has("host_cores_saved"):
            cores = line.count * int(device.value("host_cores_saved"))
        if supply is None:
            vendor = device.vendor if device is not None and device.vendor else "unknown"
            out.append(replace(line, vendor=vendor, host_cores_saved=cores))
            continue
        out.append(
            replace(
                line,
                vendor=supply.vendor,
                second_sources=supply.second_sources(technology),
                lead_time=supply.lead_time_text(),
                open_standard=supply.open_standard(technology),
                host_cores_saved=cores,
            )
        )
    return out


def _shares(lines: list[BomLine]) -> tuple[list[dict[str, Any]], float]:
    """Capex per vendor (largest first) with its share of the lines' total, and the total."""
    total = sum(line.price_usd for line in lines)
    by_vendor: dict[str, float] = {}
    for line in lines:
        by_vendor[line.vendor] = by_vendor.get(line.vendor, 0.0) + line.price_usd
    ranked = sorted(by_vendor.items(), key=lambda item: (-item[1], item[0]))
    rows = [
        {"vendor": vendor, "capex_usd": usd, "share": usd / total if total else 0.0}
        for vendor, usd in ranked
    ]
    return rows, total


def _single_source_share(lines: list[BomLine], total: float) -> float:
    usd = sum(line.price_usd for line in lines if line.second_sources == 0)
    return usd / total if total else 0.0


def vendor_concentration(lines: list[BomLine]) -> dict[str, Any]:
    """Capex per vendor, the largest vendor's share, the single-source share and the
    parts behind it, for the whole bill and for the network lines; `lines` annotated by
    `annotate_lines`."""
    network = [line for line in lines if line.network]
    by_vendor, total = _shares(lines)
    network_by_vendor, network_total = _shares(network)
    single = sorted(
        {line.catalog_id for line in lines if line.second_sources == 0 and line.count > 0}
    )
    missing = sorted({line.catalog_id for line in lines if line.second_sources is None})
    open_usd = sum(line.price_usd for line in network if line.open_standard)
    notes = []
    if missing:
        notes.append(
            "no supply data in the catalog for "
            + ", ".join(missing)
            + ": counted under the device's vendor, second sources unknown"
        )
    return {
        "by_vendor": by_vendor,
        "top_vendor": by_vendor[0]["vendor"] if by_vendor else "",
        "top_vendor_share": by_vendor[0]["share"] if by_vendor else 0.0,
        "single_source_share": _single_source_share(lines, total),
        "network_by_vendor": network_by_vendor,
        "network_top_vendor": network_by_vendor[0]["vendor"] if network_by_vendor else "",
        "network_top_vendor_share": network_by_vendor[0]["share"] if network_by_vendor else 0.0,
        "network_single_source_share": _single_source_share(network, network_total),
        "network_open_standard_share": open_usd / network_total if network_total else 0.0,
        "single_source_parts": single,
        "missing_supply": missing,
        "notes": notes,
    }
