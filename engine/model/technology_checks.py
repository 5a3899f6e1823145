"""Which link layer each part of a scenario speaks, and the checks that InfiniBand and
Ethernet meet only at a gateway.

A switch speaks its catalog technology (``infiniband``, ``ethernet``, or ``gateway`` for an
InfiniBand-to-Ethernet gateway such as NVIDIA's Skyway); a server's NICs speak both (VPI),
so a server group speaks the layer of the switches it is cabled to. A scenario without a
gateway is one technology: every part must speak `fabric.technology`'s layer, as before. A
scenario with a gateway group is *hybrid*: each pod keeps its own layer, every bundle joins
two parts of one layer or a part and a gateway, and a bundle that joins InfiniBand directly
to Ethernet is refused, naming it. The expansion (`engine.topology.expand`) and the
transport (`engine.transport.fabric`) read `bundle_layers` to give each segment its
technology's headers, flow control and marking.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.catalog.devices import Catalog
from engine.model.errors import Problem
from engine.model.scenario import DeviceGroup, LinkBundle, Scenario

GATEWAY = "gateway"
# What each fabric technology forwards: an InfiniBand fabric needs InfiniBand switches and
# NICs, a RoCE fabric Ethernet ones; a NIC or cable marked "both" serves either.
LINK_LAYER = {"infiniband": "infiniband", "roce": "ethernet"}
LAYER_NAME = {"infiniband": "InfiniBand", "ethernet": "Ethernet", GATEWAY: "gateway"}


def _own_layer(g: DeviceGroup, catalog: Catalog) -> str | None:
    """The layer a group's catalog part names (None: both, or not known)."""
    device = catalog.devices.get(g.model)
    if device is None or device.kind != g.kind:
        return None  # an unknown model, or one of another kind, is reported by itself
    if g.kind == "switch":
        layer = device.technology
    elif device.has("nic") and device.value("nic") in catalog.devices:
        layer = catalog.devices[device.value("nic")].technology
    else:
        return None
    return None if layer in (None, "both") else layer


def has_gateway(scenario: Scenario, catalog: Catalog) -> bool:
    """Whether a switch group of the scenario is an InfiniBand-to-Ethernet gateway."""
    return any(g.kind == "switch" and _own_layer(g, catalog) == GATEWAY for g in scenario.groups)


def group_layers(scenario: Scenario, catalog: Catalog) -> dict[str, str]:
    """Per group id its link layer: ``infiniband``, ``ethernet`` or ``gateway``.

    A switch's is its catalog technology; a server group's, its NIC's unless that speaks
    both, then the one layer of the (non-gateway) switches it is cabled to; the fabric's
    technology where that says nothing (no switch, or switches of both layers)."""
    fabric_layer = LINK_LAYER.get(scenario.fabric.technology, "infiniband")
    own = {g.id: _own_layer(g, catalog) for g in scenario.groups}
    kinds = {g.id: g.kind for g in scenario.groups}
    reached: dict[str, set[str]] = {}
    for b in scenario.bundles:
        for here, there in ((b.a, b.b), (b.b, b.a)):
            layer = own.get(there)
            if kinds.get(here) == "server" and kinds.get(there) == "switch" and layer != GATEWAY:
                reached.setdefault(here, set()).add(layer or fabric_layer)
    layers = {}
    for g in scenario.groups:
        layer = own[g.id]
        if layer is None and g.kind == "server" and len(reached.get(g.id, ())) == 1:
            layer = next(iter(reached[g.id]))
        layers[g.id] = layer or fabric_layer
    return layers


def bundle_layers(scenario: Scenario, catalog: Catalog) -> list[str]:
    """Per bundle (in order) the layer its cables speak: that of its end that is not a
    gateway (the fabric's when both are, or an end is unknown)."""
    layers = group_layers(scenario, catalog)
    fabric_layer = LINK_LAYER.get(scenario.fabric.technology, "infiniband")
    out = []
    for b in scenario.bundles:
        ends = [layers.get(b.a), layers.get(b.b)]
        named = [e for e in ends if e not in (None, GATEWAY)]
        out.append(named[0] if named else fabric_layer)
    return out


def check_technology(
    scenario: Scenario,
    catalog: Catalog,
    usable: set[str],
    group_where: Callable[[DeviceGroup], str],
    bundle_where: Callable[[LinkBundle], str],
) -> list[Problem]:
    """Without a gateway, every switch and NIC speaks the fabric's link layer; with one,
    every bundle joins parts of one layer, or a part and a gateway."""
    if has_gateway(scenario, catalog):
        return _check_hybrid(scenario, catalog, usable, bundle_where)
    wanted = LINK_LAYER.get(scenario.fabric.technology)
    if wanted is None:
        return []  # an unknown technology is reported by itself
    other = next(t for t in LINK_LAYER if t != scenario.fabric.technology)
    problems = []
    for g in scenario.groups:
        if g.id not in usable:
            continue
        layer = _own_layer(g, catalog)
        if layer in (None, wanted):
            continue
        device = catalog.get(g.model, g.kind)
        part = (
            f"{g.model} switch" if g.kind == "switch" else f"{device.value('nic')} NIC of {g.model}"
        )
        problems.append(
            Problem(
                group_where(g),
                f"the {part} speaks {LAYER_NAME.get(layer, layer)}, but fabric.technology is "
                f"{scenario.fabric.technology!r}: choose an {LAYER_NAME[wanted]} {g.kind} or set "
                f"fabric.technology to {other!r} (InfiniBand and Ethernet parts meet only "
                "through a gateway group, such as skyway-ga100, between them)",
                "model",
            )
        )
    return problems


def _check_hybrid(
    scenario: Scenario,
    catalog: Catalog,
    usable: set[str],
    bundle_where: Callable[[LinkBundle], str],
) -> list[Problem]:
    """Each bundle of a hybrid scenario: one layer at both ends, or a gateway at one."""
    layers = group_layers(scenario, catalog)
    problems = []
    for b in scenario.bundles:
        if not {b.a, b.b} <= usable:
            continue
        la, lb = layers[b.a], layers[b.b]
        if la == GATEWAY and lb == GATEWAY:
            problems.append(
                Problem(
                    bundle_where(b),
                    f"joins two gateways ({b.a} and {b.b}) directly; a gateway's InfiniBand "
                    "side goes to InfiniBand switches and its Ethernet side to Ethernet ones",
                    "b",
                )
            )
        elif GATEWAY not in (la, lb) and la != lb:
            problems.append(
                Problem(
                    bundle_where(b),
                    f"joins {b.a} ({LAYER_NAME[la]}) directly to {b.b} ({LAYER_NAME[lb]}): "
                    "InfiniBand and Ethernet meet only at a gateway; put a gateway group "
                    "(e.g. skyway-ga100) between them",
                    "b",
                )
            )
    return problems
