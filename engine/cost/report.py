"""The cost report of an expanded fabric: capital cost, power, energy and operating cost.

From the bill of materials (engine.cost.bom) it sums capex and power, overall and for the
network (switches, cables, transceivers, fiber and separately priced NICs); from the site's
electricity price and PUE (engine.cost.energy) the energy and its cost over the years asked;
then cost per GPU and, given delivered performance, per unit of it; beside the price, the
vendor concentration of the bill (engine.cost.supply) and the host CPU cores the NICs'
offload saves. Every figure comes with
its sources and the arithmetic behind it. Money is in USD, power in W, energy in kWh, time in
years of 8,766 hours.
"""

from __future__ import annotations

import math
from typing import Any

from engine.catalog.devices import Catalog
from engine.cost.bom import bill_of_materials
from engine.cost.bom_line import BomLine
from engine.cost.energy import HOURS_PER_YEAR, energy_kwh, site_figures
from engine.cost.supply import vendor_concentration
from engine.model.catalogs import scenario_catalog
from engine.model.errors import Problem, ScenarioError
from engine.topology.expand import Fabric

NOTES = (
    "Server prices include their GPUs and NICs where the catalog's price_includes_nics says "
    "so; those NIC lines carry the count at zero cost and zero extra power.",
    "Switch power excludes optics; every transceiver and AOC is its own line with its power.",
    "Power is each device's catalog maximum (power_w); the energy cost assumes it all year.",
    "Failed cables and switches are counted: they are installed.",
    "A twin-port cage holds ports of one bundle: modules are ceil(ports / ports per cage) per "
    "switch (or server) per bundle.",
    "Network capex and power are switches, cables, transceivers, fiber and separately priced "
    "NICs; the network share is of the whole capex.",
)


def _number(name: str, value: Any, minimum: float, allow_none: bool = False) -> float | None:
    """`value` as a finite float of at least `minimum`; `ScenarioError` naming `name` otherwise."""
    if value is None and allow_none:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < minimum:
        raise ScenarioError(
            Problem("cost", f"{name} must be a finite number >= {minimum:g}, not {value!r}", name)
        )
    return number


def _per(amount: float, per: float | None) -> float | None:
    """`amount / per`, or None when there is nothing to divide by."""
    return amount / per if per else None


def cost_report(
    fabric: Fabric,
    catalog: Catalog | None = None,
    years: float = 5.0,
    usd_per_kwh: float | None = None,
    pue: float | None = None,
    busbw_GBps: float | None = None,
    tokens_per_s: float | None = None,
) -> dict[str, Any]:
    """Capex, power, energy cost over `years`, cost per GPU and per unit of performance.

    `usd_per_kwh` and `pue` default to the catalog's ``datacenter`` profile. `busbw_GBps`
    (all-reduce bus bandwidth) and `tokens_per_s` (training throughput) add cost per unit of
    delivered performance; zero leaves those figures out. Bad arguments raise `ScenarioError`
    naming the argument.
    """
    cat = scenario_catalog(fabric.scenario, catalog)
    years_ = _number("years", years, 0.0)
    price_ = _number("usd_per_kwh", usd_per_kwh, 0.0, allow_none=True)
    pue_ = _number("pue", pue, 1.0, allow_none=True)
    busbw = _number("busbw_GBps", busbw_GBps, 0.0, allow_none=True)
    tokens = _number("tokens_per_s", tokens_per_s, 0.0, allow_none=True)
    price, factor, price_src, pue_src = site_figures(cat, price_, pue_)
    bom = bill_of_materials(fabric, cat)

    capex = sum(line.price_usd for line in bom)
    network_capex = sum(line.price_usd for line in bom if line.network)
    power = sum(line.power_w for line in bom)
    network_power = sum(line.power_w for line in bom if line.network)
    energy = energy_kwh(power, years_, factor)
    opex = energy * price
    network_opex = energy_kwh(network_power, years_, factor) * price
    gpus = fabric.n_gpus
    sources = [
        {"item": line.item, "catalog_id": line.catalog_id, "provenance": line.provenance}
        for line in bom
    ]
    sources += [
        {
            "item": "electricity price",
            "catalog_id": "datacenter.usd_per_kwh",
            "provenance": price_src,
        },
        {"item": "PUE", "catalog_id": "datacenter.pue", "provenance": pue_src},
    ]
    return {
        "gpus": gpus,
        "capex_usd": capex,
        "network_capex_usd": network_capex,
        "server_capex_usd": capex - network_capex,
        "network_share": _per(network_capex, capex) or 0.0,
        "cost_per_gpu_usd": capex / gpus,
        "network_cost_per_gpu_usd": network_capex / gpus,
        "power_w": power,
        "network_power_w": network_power,
        "network_power_share": _per(network_power, power) or 0.0,
        "power_per_gpu_w": power / gpus,
        "years": years_,
        "usd_per_kwh": price,
        "pue": factor,
        "energy_kwh": energy,
        "opex_usd": opex,
        "network_opex_usd": network_opex,
        "tco_usd": capex + opex,
        "tco_per_gpu_usd": (capex + opex) / gpus,
        "busbw_GBps": busbw,
        "usd_per_busbw_GBps": _per(capex, busbw),
        "network_usd_per_busbw_GBps": _per(network_capex, busbw),
        "tokens_per_s": tokens,
        "usd_per_token_per_s": _per(capex, tokens),
        "tco_usd_per_token_per_s": _per(capex + opex, tokens),
        "host_cores_saved": sum(line.host_cores_saved for line in bom),
        "supply": vendor_concentration(bom),
        "bom": [line.to_dict() for line in bom],
        "sources": sources,
        "derivation": _derivation(bom, capex, network_capex, power, gpus, years_, price, factor),
        "notes": list(NOTES),
    }


def _derivation(
    bom: list[BomLine],
    capex: float,
    network_capex: float,
    power: float,
    gpus: int,
    years: float,
    price: float,
    factor: float,
) -> dict[str, str]:
    """The arithmetic behind the headline figures, with the numbers filled in."""
    terms = " + ".join(f"{line.count} x {line.unit_price_usd:,.0f}" for line in bom if line.count)
    return {
        "capex_usd": f"sum over {len(bom)} BOM lines of count x unit price: {terms}",
        "network_capex_usd": "capex of every line but the servers",
        "network_share": f"{network_capex:,.0f} / {capex:,.0f}",
        "cost_per_gpu_usd": f"{capex:,.0f} / {gpus} GPUs",
        "power_w": "sum over BOM lines of count x unit power",
        "opex_usd": (
            f"{power / 1e3:,.1f} kW x PUE {factor:g} x {years:g} y x {HOURS_PER_YEAR:g} h/y "
            f"x {price:g} USD/kWh"
        ),
        "tco_usd": "capex_usd + opex_usd",
        "usd_per_busbw_GBps": "capex_usd / busbw_GBps",
        "usd_per_token_per_s": "capex_usd / tokens_per_s",
    }
