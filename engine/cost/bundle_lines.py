"""The bill-of-materials lines of one bundle: its cables, transceivers and fiber.

Cables are chosen when ``cable="auto"`` (engine.cost.parts); explicit cable ids are honored:
a transceiver id takes fiber of its media, a fiber id takes transceivers that fit both ends,
a DAC or AOC id is used as given (a twin-port assembly carrying several links). Failed cables
still count: they are installed (``fabric.bundle_cables``).
"""

from __future__ import annotations

from engine.catalog.devices import Catalog, Device
from engine.cost.bom_line import BomLine, trace
from engine.cost.bundle_ends import BundleEnd, bundle_ends
from engine.cost.parts import (
    MEDIA_BY_PREFERENCE,
    cable_type,
    pick_cable,
    pick_fiber,
    pick_transceiver,
)
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import LinkBundle
from engine.model.validation import bundle_where
from engine.topology.expand import Fabric


def _tier(fabric: Fabric, b: LinkBundle) -> str:
    """The tier pair of a bundle, as in `engine.flows.utilization.tier_label` (``server->leaf``)."""
    s = fabric.scenario
    return f"{s.group(b.a).tier}->{s.group(b.b).tier}"


def _cable_line(dev: Device, b: LinkBundle, tier: str, count: int, note: str = "") -> BomLine:
    """DAC or AOC line: price per cable, power per powered end."""
    ends = int(dev.value("powered_ends")) if dev.has("powered_ends") else 1
    return BomLine(
        item=f"{dev.name}, {b.length_m:g} m",
        catalog_id=dev.id,
        kind="cable",
        tier=tier,
        count=count,
        unit_price_usd=float(dev.value("price_usd")),
        unit_power_w=float(dev.value("power_w")) * ends,
        provenance=trace(dev, ("price_usd", "power_w", "powered_ends", "max_length_m")),
        note=note or (f"{ends} powered ends per cable" if ends > 1 else ""),
    )


def _fiber_line(dev: Device, b: LinkBundle, tier: str, count: int) -> BomLine:
    """Passive fiber: fixed price for the terminated ends plus a price per metre."""
    per_m = float(dev.value("price_usd_per_m")) if dev.has("price_usd_per_m") else 0.0
    return BomLine(
        item=f"{dev.name}, {b.length_m:g} m",
        catalog_id=dev.id,
        kind="fiber",
        tier=tier,
        count=count,
        unit_price_usd=float(dev.value("price_usd")) + per_m * b.length_m,
        unit_power_w=float(dev.value("power_w")),
        provenance=trace(dev, ("price_usd", "price_usd_per_m", "power_w", "max_length_m")),
        note=f"price_usd + price_usd_per_m x {b.length_m:g} m; one cord per link",
    )


def _module_line(dev: Device, end: BundleEnd, tier: str, count: int) -> BomLine:
    """Transceivers at one end of a bundle."""
    twin = end.ports_per_cage > 1 and bool(dev.has("twin_port") and dev.value("twin_port"))
    note = (
        f"ceil(ports / {end.ports_per_cage}) per {end.group.kind} ({end.group.id})"
        if twin
        else "one per port"
    )
    return BomLine(
        item=f"{dev.name} at the {end.group.tier} end",
        catalog_id=dev.id,
        kind="transceiver",
        tier=tier,
        count=count,
        unit_price_usd=float(dev.value("price_usd")),
        unit_power_w=float(dev.value("power_w")),
        provenance=trace(dev, ("price_usd", "power_w", "max_length_m")),
        note=note,
    )


def _no_optics(b: LinkBundle, detail: str) -> ScenarioError:
    return ScenarioError(
        Problem(
            bundle_where(b),
            f"the catalog has no cable or optics for this bundle ({detail}); "
            f"set its cable to a catalog id or shorten it",
            "cable",
        )
    )


def _optics_lines(
    cat: Catalog,
    b: LinkBundle,
    tier: str,
    cables: int,
    ends: tuple[BundleEnd, BundleEnd],
    tech: str,
) -> list[BomLine]:
    """Transceivers at both ends plus fiber, multimode where it reaches, else single-mode."""
    for media in MEDIA_BY_PREFERENCE:
        fiber = pick_fiber(cat, media, b.length_m)
        modules = [
            pick_transceiver(
                cat, e.module_gbps, e.ports_per_cage > 1, e.form_factor, media, b.length_m, tech
            )
            for e in ends
        ]
        if fiber is None or None in modules:
            continue
        lines = [
            _module_line(m, e, tier, e.modules(cables))
            for m, e in zip(modules, ends, strict=True)
            if m is not None
        ]
        return [*lines, _fiber_line(fiber, b, tier, cables)]
    sides = " and ".join(
        f"{e.group.id}: {e.module_gbps:g}G {'twin-port' if e.ports_per_cage > 1 else 'single-port'}"
        f" {e.form_factor}"
        for e in ends
    )
    raise _no_optics(b, f"{b.length_m:g} m at {b.speed_gbps:g}G, {tech}; {sides}")


def _explicit_lines(
    cat: Catalog,
    b: LinkBundle,
    tier: str,
    cables: int,
    ends: tuple[BundleEnd, BundleEnd],
    tech: str,
) -> list[BomLine]:
    """Lines for a bundle whose cable is a named catalog id."""
    dev = cat.get(b.cable)
    if dev.kind == "transceiver":
        fiber = pick_fiber(cat, str(dev.value("media")), b.length_m)
        if fiber is None:
            raise _no_optics(b, f"no {dev.value('media')} fiber reaches {b.length_m:g} m")
        twin = bool(dev.has("twin_port") and dev.value("twin_port"))
        lines = [
            _module_line(dev, e, tier, e.modules(cables, e.ports_per_cage if twin else 1))
            for e in ends
        ]
        return [*lines, _fiber_line(fiber, b, tier, cables)]
    kind = cable_type(dev)
    if kind == "fiber":
        modules = [
            pick_transceiver(
                cat,
                e.module_gbps,
                e.ports_per_cage > 1,
                e.form_factor,
                str(dev.value("media")),
                b.length_m,
                tech,
            )
            for e in ends
        ]
        if None in modules:
            raise _no_optics(b, f"no {dev.value('media')} transceiver fits both ends")
        lines = [
            _module_line(m, e, tier, e.modules(cables))
            for m, e in zip(modules, ends, strict=True)
            if m is not None
        ]
        return [*lines, _fiber_line(dev, b, tier, cables)]
    links = 1
    if dev.has("twin_port") and dev.value("twin_port"):
        links = max(1, round(float(dev.value("speed_gbps")) / b.speed_gbps))
    note = f"one cable carries {links} links" if links > 1 else ""
    return [_cable_line(dev, b, tier, -(-cables // links), note)]


def bundle_lines(fabric: Fabric, bi: int, cat: Catalog) -> list[BomLine]:
    """Cables, transceivers and fiber of bundle `bi` (failed cables included)."""
    b = fabric.scenario.bundles[bi]
    tier = _tier(fabric, b)
    cables = int(fabric.bundle_cables[bi])
    tech = fabric.scenario.fabric.technology
    if b.cable != "auto":
        return _explicit_lines(cat, b, tier, cables, bundle_ends(fabric, bi, cat), tech)
    for kind in ("dac", "aoc"):
        dev = pick_cable(cat, kind, b.speed_gbps, b.length_m, tech)
        if dev is not None:
            return [_cable_line(dev, b, tier, cables)]
    return _optics_lines(cat, b, tier, cables, bundle_ends(fabric, bi, cat), tech)
