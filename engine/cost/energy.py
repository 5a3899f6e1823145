"""Electricity and energy: the site's price and PUE, and the energy a fabric draws over years.

Power is each device's catalog maximum (power_w) and is assumed drawn all year; a year is
8,766 hours (365.25 days). The price per kWh and the PUE come from the arguments or, by
default, from the catalog's ``datacenter`` profile, with their source.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog
from engine.cost.bom_line import trace

HOURS_PER_YEAR = 8766.0  # 365.25 days


def site_figures(
    cat: Catalog, usd_per_kwh: float | None, pue: float | None
) -> tuple[float, float, str, str]:
    """Electricity price and PUE: the arguments, or the catalog's data-center profile."""
    dc = cat.technology("datacenter")
    price_src = "argument usd_per_kwh" if usd_per_kwh is not None else trace(dc, ("usd_per_kwh",))
    pue_src = "argument pue" if pue is not None else trace(dc, ("pue",))
    price = usd_per_kwh if usd_per_kwh is not None else float(dc.value("usd_per_kwh"))
    factor = pue if pue is not None else float(dc.value("pue"))
    return price, factor, price_src, pue_src


def energy_kwh(power_w: float, years: float, pue: float) -> float:
    """Energy in kWh that `power_w` draws over `years`, facility overhead (`pue`) included."""
    hours = years * HOURS_PER_YEAR
    return power_w / 1e3 * hours * pue
