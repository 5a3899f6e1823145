"""Which catalog cable, fiber cord or optical module a link of a bundle takes.

A bundle at ``cable="auto"`` takes the cheapest passive DAC at its speed that reaches its
length, else the cheapest AOC, else optical transceivers at both ends plus a fiber per link
(multimode where its optics reach, single-mode beyond). Only parts made for the fabric's
technology (InfiniBand or Ethernet) are considered; catalog order breaks price ties.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog, Device

MEDIA_BY_PREFERENCE = ("multimode", "singlemode")  # multimode is cheaper where it reaches
_FABRIC_TECH = {"infiniband": "infiniband", "roce": "ethernet"}


def _compatible(device: Device, technology: str) -> bool:
    """Whether a cable or module can be used on a fabric of `technology`."""
    return device.technology in (None, "both", _FABRIC_TECH.get(technology, technology))


def cable_type(device: Device) -> str:
    """``dac``, ``aoc`` or ``fiber`` for a catalog cable (copper, active optical, passive glass)."""
    if device.value("media") == "copper":
        return "dac"
    return "fiber" if device.has("price_usd_per_m") else "aoc"


def _cheapest(candidates: list[Device]) -> Device | None:
    """The lowest-priced candidate (catalog order breaks ties)."""
    if not candidates:
        return None
    return min(candidates, key=lambda d: float(d.value("price_usd")))


def pick_cable(
    cat: Catalog, kind: str, speed_gbps: float, length_m: float, technology: str
) -> Device | None:
    """The cheapest single-link DAC or AOC (`kind`) at the bundle speed that reaches `length_m`.

    Twin-port assemblies are left to explicit cable ids: pairing two links per cable depends
    on how the ports of both ends line up, which the bundle does not say.
    """
    found = [
        d
        for d in cat.of_kind("cable")
        if cable_type(d) == kind
        and _compatible(d, technology)
        and float(d.value("speed_gbps")) == speed_gbps
        and float(d.value("max_length_m")) >= length_m
        and not (d.has("twin_port") and d.value("twin_port"))
    ]
    return _cheapest(found)


def pick_fiber(cat: Catalog, media: str, length_m: float) -> Device | None:
    """The cheapest passive fiber cord of `media` that reaches `length_m`."""
    found = [
        d
        for d in cat.of_kind("cable")
        if cable_type(d) == "fiber"
        and d.value("media") == media
        and float(d.value("max_length_m")) >= length_m
    ]
    return _cheapest(found)


def pick_transceiver(
    cat: Catalog,
    speed_gbps: float,
    twin_port: bool,
    form_factor: str,
    media: str,
    length_m: float,
    technology: str,
) -> Device | None:
    """The cheapest optical module of this speed, port structure, form factor and media."""
    found = [
        d
        for d in cat.of_kind("transceiver")
        if float(d.value("speed_gbps")) == speed_gbps
        and bool(d.has("twin_port") and d.value("twin_port")) == twin_port
        and (not d.has("form_factor") or d.value("form_factor") == form_factor)
        and d.value("media") == media
        and float(d.value("max_length_m")) >= length_m
        and _compatible(d, technology)
    ]
    return _cheapest(found)
