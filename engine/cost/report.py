"""Bill of materials, capital cost, power and operating cost of an expanded fabric.

The bill of materials (BOM) is counted from the expanded topology, per group and per bundle
(never per cable, so a 131,072-GPU fabric costs a few milliseconds):

- servers by model, their price including GPUs and NICs (the catalog says so per server in
  ``price_includes_nics``; NICs then appear as zero-cost lines that only carry the count);
- switches by model and tier, their power without optics;
- for every bundle its cables by length class, chosen when ``cable="auto"``: a passive DAC at
  the bundle speed up to the DAC's reach, an AOC up to the AOC's reach, beyond that optical
  transceivers at both ends plus a fiber per link (multimode up to the multimode optics'
  reach, single-mode beyond). Switches whose catalog entry gives OSFP ``cages`` holding two
  (or more) logical ports at the bundle speed take one twin-port module per two ports,
  ``ceil(ports / 2)`` per switch; a server with ``nic_cages`` (DGX H100) likewise. A single
  NIC port takes a single-port module of its form factor. Explicit cable ids are honored.
- failed cables and switches still count: they are installed (``fabric.bundle_cables``).

Every line carries the catalog figures it used and their sources, so each total in
`cost_report` can be traced to catalog entries times counts. Money is in USD, power in W,
energy in kWh, time in years of 8,766 hours.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from engine.catalog.devices import Catalog, Device, default_catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import DeviceGroup, LinkBundle
from engine.model.validation import bundle_where, members
from engine.topology.expand import Fabric, wire_bundle

HOURS_PER_YEAR = 8766.0  # 365.25 days
KIND_ORDER = ("server", "nic", "switch", "cable", "transceiver", "fiber")
MEDIA_BY_PREFERENCE = ("multimode", "singlemode")  # multimode is cheaper where it reaches
_FABRIC_TECH = {"infiniband": "infiniband", "roce": "ethernet"}

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


@dataclass(frozen=True)
class BomLine:
    """One line of the bill of materials: `count` identical items and where their figures come from.

    `network` says whether the line counts toward the network's capex and power (everything
    but the servers). `note` says how the count or price was derived when it is not obvious.
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


# --------------------------------------------------------------------------------------------
# Catalog figures with their provenance


def _trace(device: Device, names: tuple[str, ...], overrides: dict | None = None) -> str:
    """'id.field = value (source)' for each field used, so a line's figures can be traced."""
    parts = []
    for name in names:
        if overrides and name in overrides:
            parts.append(f"{device.id}.{name} = {overrides[name]:g} (group override)")
        elif device.has(name):
            fig = device.fields[name]
            parts.append(f"{device.id}.{name} = {fig.value}: {fig.provenance()}")
    return " | ".join(parts)


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


# --------------------------------------------------------------------------------------------
# Ports per switch or server of a bundle (analytic per pattern: no per-cable arrays)


def member_degrees(
    b: LinkBundle, n_a: int, n_b: int, rails: int, servers: int
) -> tuple[np.ndarray, np.ndarray]:
    """Cables at each wiring member of sides a and b, the same as counting `wire_bundle`'s rows.

    Arrays have one entry per member (switch, or NIC of a server group), so this costs
    O(members), not O(cables).
    """
    lpp = b.links_per_pair
    deg_a = np.ones(n_a, dtype=np.int64)
    deg_b = np.zeros(n_b, dtype=np.int64)
    if b.pattern == "full":
        block_a, block_b = -(-n_a // b.blocks), n_b // b.blocks
        deg_a[:] = block_b
        per_block = np.clip(n_a - np.arange(b.blocks) * block_a, 0, block_a)
        deg_b[: b.blocks * block_b] = np.repeat(per_block, block_b)
    elif b.pattern == "striped":
        block_b = n_b // b.blocks
        deg_a[:] = block_b
        planes = np.arange(b.blocks)
        per_plane = np.maximum(0, -(-(n_a - planes) // b.blocks))
        deg_b[: b.blocks * block_b] = np.repeat(per_plane, block_b)
    elif b.pattern == "one-to-one":
        deg_b[: min(n_a, n_b)] = 1
    elif b.pattern == "rail":
        blocks = n_b // rails
        per_block = -(-servers // blocks)
        deg_a = np.ones(servers * rails, dtype=np.int64)
        per = np.clip(servers - np.arange(blocks) * per_block, 0, per_block)
        deg_b[: blocks * rails] = np.repeat(per, rails)
    else:
        raise ValueError(b.pattern)
    return deg_a * lpp, deg_b * lpp


def _bundle_degrees(fabric: Fabric, bi: int, cat: Catalog) -> tuple[np.ndarray, np.ndarray]:
    """Per-member cable counts of bundle `bi`, checked against the expansion's cable count."""
    s = fabric.scenario
    b = s.bundles[bi]
    ga, gb = s.group(b.a), s.group(b.b)
    rails = servers = 0
    if ga.kind == "server":
        rails = int(cat.get(ga.model, "server").value("nics_per_server"))
        servers = ga.count
    n_a, n_b = members(ga, cat), members(gb, cat)
    try:
        deg_a, deg_b = member_degrees(b, n_a, n_b, rails, servers)
        if int(deg_a.sum()) == int(deg_b.sum()) == int(fabric.bundle_cables[bi]):
            return deg_a, deg_b
    except (ValueError, ZeroDivisionError):
        pass
    wiring = wire_bundle(b, n_a, n_b, rails, servers)  # fallback for a pattern not modelled here
    return np.bincount(wiring.a, minlength=n_a), np.bincount(wiring.b, minlength=n_b)


@dataclass(frozen=True)
class _End:
    """One end of a bundle as optics see it: which module fits and how many are needed."""

    group: DeviceGroup
    form_factor: str
    ports_per_cage: int  # logical ports sharing one module: 1 single-port, 2 twin-port
    module_gbps: float  # module speed: the port speed, or the whole cage for twin-port
    holder_degrees: np.ndarray | None  # cables per switch or per server; None if 1 per port

    def modules(self, cables: int, ports_per_module: int | None = None) -> int:
        """Modules at this end: one per cable, or ceil(ports / ports per cage) per holder."""
        per = self.ports_per_cage if ports_per_module is None else ports_per_module
        if per <= 1 or self.holder_degrees is None:
            return cables
        return int((-(-self.holder_degrees // per)).sum())


def _switch_end(g: DeviceGroup, speed_gbps: float, degrees: np.ndarray, cat: Catalog) -> _End:
    """A switch end: twin-port when its cages hold several logical ports at this speed."""
    sw = cat.get(g.model, "switch")
    form = str(sw.value("cage_form_factor")) if sw.has("cage_form_factor") else "OSFP"
    modes = cat.switch_port_modes(g.model)
    if not sw.has("cages"):
        return _End(g, form, 1, speed_gbps, None)
    cages = int(sw.value("cages"))
    per_cage = modes[speed_gbps] / cages
    if per_cage < 2 or not float(per_cage).is_integer():
        return _End(g, form, 1, speed_gbps, None)
    cage_gbps = max(s * n for s, n in modes.items()) / cages
    return _End(g, form, int(per_cage), cage_gbps, degrees)


def _server_end(g: DeviceGroup, speed_gbps: float, nic_degrees: np.ndarray, cat: Catalog) -> _End:
    """A server end: single-port modules in each NIC, or twin-port cages (DGX H100)."""
    srv = cat.get(g.model, "server")
    nic = cat.get(srv.value("nic"), "nic")
    form = str(nic.value("form_factor")) if nic.has("form_factor") else "OSFP"
    nics = int(srv.value("nics_per_server"))
    if not srv.has("nic_cages") or nics <= int(srv.value("nic_cages")):
        return _End(g, form, 1, speed_gbps, None)
    per_cage = nics // int(srv.value("nic_cages"))
    per_server = nic_degrees.reshape(g.count, nics).sum(axis=1)
    return _End(g, "OSFP", per_cage, speed_gbps * per_cage, per_server)


def _ends(fabric: Fabric, bi: int, cat: Catalog) -> tuple[_End, _End]:
    """Both ends of bundle `bi` with their module counting rules."""
    s = fabric.scenario
    b = s.bundles[bi]
    deg_a, deg_b = _bundle_degrees(fabric, bi, cat)
    result = []
    for gid, deg in ((b.a, deg_a), (b.b, deg_b)):
        g = s.group(gid)
        maker = _switch_end if g.kind == "switch" else _server_end
        result.append(maker(g, b.speed_gbps, deg, cat))
    return result[0], result[1]


# --------------------------------------------------------------------------------------------
# Lines of one bundle


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
        provenance=_trace(dev, ("price_usd", "power_w", "powered_ends", "max_length_m")),
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
        provenance=_trace(dev, ("price_usd", "price_usd_per_m", "power_w", "max_length_m")),
        note=f"price_usd + price_usd_per_m x {b.length_m:g} m; one cord per link",
    )


def _module_line(dev: Device, end: _End, tier: str, count: int) -> BomLine:
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
        provenance=_trace(dev, ("price_usd", "power_w", "max_length_m")),
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
    cat: Catalog, b: LinkBundle, tier: str, cables: int, ends: tuple[_End, _End], tech: str
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
    cat: Catalog, b: LinkBundle, tier: str, cables: int, ends: tuple[_End, _End], tech: str
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
        return _explicit_lines(cat, b, tier, cables, _ends(fabric, bi, cat), tech)
    for kind in ("dac", "aoc"):
        dev = pick_cable(cat, kind, b.speed_gbps, b.length_m, tech)
        if dev is not None:
            return [_cable_line(dev, b, tier, cables)]
    return _optics_lines(cat, b, tier, cables, _ends(fabric, bi, cat), tech)


# --------------------------------------------------------------------------------------------
# Lines of the device groups


def _server_lines(g: DeviceGroup, cat: Catalog) -> list[BomLine]:
    """A server group, and its NICs (zero-cost when the server price includes them)."""
    srv = cat.get(g.model, "server")
    nic = cat.get(srv.value("nic"), "nic")
    gpus, nics = int(srv.value("gpus_per_server")), int(srv.value("nics_per_server"))
    included = bool(srv.value("price_includes_nics")) if srv.has("price_includes_nics") else False
    server = BomLine(
        item=f"{srv.name} ({gpus} x {srv.value('gpu')} GPUs"
        + (f", {nics} x {nic.id} NICs included)" if included else " included)"),
        catalog_id=srv.id,
        kind="server",
        tier=g.tier,
        count=g.count,
        unit_price_usd=float(srv.value("price_usd", g.overrides)),
        unit_power_w=float(srv.value("power_w", g.overrides)),
        provenance=_trace(srv, ("price_usd", "power_w", "price_includes_nics"), g.overrides),
        network=False,
        note="price includes GPUs" + (" and NICs" if included else ""),
    )
    nic_line = BomLine(
        item=f"{nic.name}" + (f" (in the {srv.id} price)" if included else ""),
        catalog_id=nic.id,
        kind="nic",
        tier=g.tier,
        count=g.count * nics,
        unit_price_usd=0.0 if included else float(nic.value("price_usd")),
        unit_power_w=0.0 if included else float(nic.value("power_w")),
        provenance=(
            f"{_trace(srv, ('price_includes_nics',))} | not added: "
            f"{_trace(nic, ('price_usd', 'power_w'))}"
        )
        if included
        else _trace(nic, ("price_usd", "power_w")),
        note="counted in the server price and power" if included else "priced separately",
    )
    return [server, nic_line]


def _switch_line(g: DeviceGroup, cat: Catalog) -> BomLine:
    """A switch group: price and power without optics."""
    sw = cat.get(g.model, "switch")
    return BomLine(
        item=sw.name,
        catalog_id=sw.id,
        kind="switch",
        tier=g.tier,
        count=g.count,
        unit_price_usd=float(sw.value("price_usd", g.overrides)),
        unit_power_w=float(sw.value("power_w", g.overrides)),
        provenance=_trace(sw, ("price_usd", "power_w"), g.overrides),
        note="power without optics",
    )


def _merge(lines: list[BomLine]) -> list[BomLine]:
    """Identical items of the same tier summed into one line, ordered by kind."""
    merged: dict[tuple, BomLine] = {}
    for line in lines:
        key = (
            line.kind,
            line.catalog_id,
            line.tier,
            line.item,
            line.unit_price_usd,
            line.unit_power_w,
        )
        if key in merged:
            old = merged[key]
            merged[key] = BomLine(**{**asdict(old), "count": old.count + line.count})
        else:
            merged[key] = line
    ordered = sorted(enumerate(merged.values()), key=lambda p: (KIND_ORDER.index(p[1].kind), p[0]))
    return [line for _, line in ordered if line.count > 0]


def bill_of_materials(fabric: Fabric, catalog: Catalog | None = None) -> list[BomLine]:
    """The BOM of an expanded fabric: servers, NICs, switches per tier, cables and optics.

    `ScenarioError` names a bundle the catalog has no cable or optics for.
    """
    cat = catalog or default_catalog()
    lines: list[BomLine] = []
    for g in fabric.scenario.groups:
        lines += _server_lines(g, cat) if g.kind == "server" else [_switch_line(g, cat)]
    for bi in range(len(fabric.scenario.bundles)):
        lines += bundle_lines(fabric, bi, cat)
    return _merge(lines)


# --------------------------------------------------------------------------------------------
# The report


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


def _site_figures(
    cat: Catalog, usd_per_kwh: float | None, pue: float | None
) -> tuple[float, float, str, str]:
    """Electricity price and PUE: the arguments, or the catalog's data-center profile."""
    dc = cat.technology("datacenter")
    price_src = "argument usd_per_kwh" if usd_per_kwh is not None else _trace(dc, ("usd_per_kwh",))
    pue_src = "argument pue" if pue is not None else _trace(dc, ("pue",))
    price = usd_per_kwh if usd_per_kwh is not None else float(dc.value("usd_per_kwh"))
    factor = pue if pue is not None else float(dc.value("pue"))
    return price, factor, price_src, pue_src


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
    cat = catalog or default_catalog()
    years_ = _number("years", years, 0.0)
    price_ = _number("usd_per_kwh", usd_per_kwh, 0.0, allow_none=True)
    pue_ = _number("pue", pue, 1.0, allow_none=True)
    busbw = _number("busbw_GBps", busbw_GBps, 0.0, allow_none=True)
    tokens = _number("tokens_per_s", tokens_per_s, 0.0, allow_none=True)
    price, factor, price_src, pue_src = _site_figures(cat, price_, pue_)
    bom = bill_of_materials(fabric, cat)

    capex = sum(line.price_usd for line in bom)
    network_capex = sum(line.price_usd for line in bom if line.network)
    power = sum(line.power_w for line in bom)
    network_power = sum(line.power_w for line in bom if line.network)
    hours = years_ * HOURS_PER_YEAR
    energy_kwh = power / 1e3 * hours * factor
    opex = energy_kwh * price
    network_opex = network_power / 1e3 * hours * factor * price
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
        "energy_kwh": energy_kwh,
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
