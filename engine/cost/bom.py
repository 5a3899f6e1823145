"""The bill of materials (BOM) of an expanded fabric, counted per group and per bundle.

- servers by model, their price including GPUs and NICs (the catalog says so per server in
  ``price_includes_nics``; NICs then appear as zero-cost lines that only carry the count);
- switches by model and tier, their power without optics;
- for every bundle its cables, transceivers and fiber (engine.cost.bundle_lines);
- a design's storage network (`engine.model.networks`): its storage nodes, switches, cables
  and optics, on lines whose tier says ``storage``.

A line of a device the scenario defines itself (`engine.catalog.custom`) says so in its item
(`USER_DEFINED`); its figures' provenance reads "assumption: user-defined".

Failed cables and switches still count: they are installed. Identical items of one tier are
merged into one line, ordered by kind.
"""

from __future__ import annotations

from dataclasses import asdict, replace

from engine.catalog.devices import Catalog, Device
from engine.cost.bom_line import BomLine, trace
from engine.cost.bundle_lines import bundle_lines
from engine.cost.supply import annotate_lines
from engine.model.catalogs import scenario_catalog
from engine.model.networks import NODE, storage_catalog
from engine.model.scenario import DeviceGroup
from engine.topology.expand import Fabric

KIND_ORDER = ("server", "storage", "nic", "switch", "cable", "transceiver", "fiber")
USER_DEFINED = " [user-defined]"  # marks a line of a device the scenario defines itself


def user_mark(device: Device) -> str:
    """The mark a BOM line of a user-defined device carries (empty for a shipped one)."""
    return USER_DEFINED if device.user_defined else ""


def _server_lines(g: DeviceGroup, cat: Catalog) -> list[BomLine]:
    """A server group, and its NICs (zero-cost when the server price includes them)."""
    srv = cat.get(g.model, "server")
    nic = cat.get(srv.value("nic"), "nic")
    gpus, nics = int(srv.value("gpus_per_server")), int(srv.value("nics_per_server"))
    included = bool(srv.value("price_includes_nics")) if srv.has("price_includes_nics") else False
    server = BomLine(
        item=f"{srv.name} ({gpus} x {srv.value('gpu')} GPUs"
        + (f", {nics} x {nic.id} NICs included)" if included else " included)")
        + user_mark(srv),
        catalog_id=srv.id,
        kind="server",
        tier=g.tier,
        count=g.count,
        unit_price_usd=float(srv.value("price_usd", g.overrides)),
        unit_power_w=float(srv.value("power_w", g.overrides)),
        provenance=trace(srv, ("price_usd", "power_w", "price_includes_nics"), g.overrides),
        network=False,
        note="price includes GPUs" + (" and NICs" if included else ""),
    )
    nic_line = BomLine(
        item=f"{nic.name}" + (f" (in the {srv.id} price)" if included else "") + user_mark(nic),
        catalog_id=nic.id,
        kind="nic",
        tier=g.tier,
        count=g.count * nics,
        unit_price_usd=0.0 if included else float(nic.value("price_usd")),
        unit_power_w=0.0 if included else float(nic.value("power_w")),
        provenance=(
            f"{trace(srv, ('price_includes_nics',))} | not added: "
            f"{trace(nic, ('price_usd', 'power_w'))}"
        )
        if included
        else trace(nic, ("price_usd", "power_w")),
        note="counted in the server price and power" if included else "priced separately",
    )
    return [server, nic_line]


def _switch_line(g: DeviceGroup, cat: Catalog) -> BomLine:
    """A switch group: price and power without optics."""
    sw = cat.get(g.model, "switch")
    return BomLine(
        item=sw.name + user_mark(sw),
        catalog_id=sw.id,
        kind="switch",
        tier=g.tier,
        count=g.count,
        unit_price_usd=float(sw.value("price_usd", g.overrides)),
        unit_power_w=float(sw.value("power_w", g.overrides)),
        provenance=trace(sw, ("price_usd", "power_w"), g.overrides),
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
    """The BOM of an expanded fabric: servers, NICs, switches per tier, cables and optics,
    each line with its supply facts on the fabric's technology (`annotate_lines`).

    `ScenarioError` names a bundle the catalog has no cable or optics for.
    """
    cat = scenario_catalog(fabric.scenario, catalog)
    lines: list[BomLine] = []
    for g in fabric.scenario.groups:
        lines += _server_lines(g, cat) if g.kind == "server" else [_switch_line(g, cat)]
    for bi in range(len(fabric.scenario.bundles)):
        lines += bundle_lines(fabric, bi, cat)
    lines = annotate_lines(_merge(lines), cat, fabric.scenario.fabric.technology)
    if fabric.storage is not None:
        lines = _merge(lines + storage_lines(fabric.storage, cat))
    return lines


def storage_lines(net: Fabric, cat: Catalog) -> list[BomLine]:
    """The storage network's lines (`engine.model.networks`), their tiers marked
    ``storage``: its storage nodes, switches, cables and optics. The GPU servers are priced
    with the compute fabric; their front-end ports come with them (a DGX's price includes
    its ConnectX-7 cards)."""
    derived = storage_catalog(cat)
    lines: list[BomLine] = []
    for g in net.scenario.groups:
        if g.model.endswith(NODE):
            node = cat.get(g.model.removesuffix(NODE), "storage")
            lines.append(
                BomLine(
                    item=node.name + user_mark(node),
                    catalog_id=node.id,
                    kind="storage",
                    tier=g.tier,
                    count=g.count,
                    unit_price_usd=float(node.value("price_usd")),
                    unit_power_w=float(node.value("power_w")),
                    provenance=trace(node, ("price_usd", "power_w")),
                    network=False,
                    note="storage node of the storage network",
                )
            )
        elif g.kind == "switch":
            lines.append(_switch_line(g, derived))
    for bi in range(len(net.scenario.bundles)):
        lines += bundle_lines(net, bi, derived)
    lines = annotate_lines(lines, cat, net.scenario.fabric.technology)
    return [replace(line, tier=f"storage {line.tier}") for line in lines]
