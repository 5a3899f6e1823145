"""The parts every topology template is made of: the chosen server and switch's shape, the
leaf's port split for an oversubscription, device groups placed on the canvas by tier, and
the scenario around them.

Shared by the template modules (`generators`, `planes`, `nvl72`) so each of them holds only
its own design.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.devices import Catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import (
    DeviceGroup,
    FabricSettings,
    LinkBundle,
    Metadata,
    RoutingPolicy,
    Scenario,
)

# Canvas layout: tiers stacked from servers (bottom) to core (top), in scene units.
_TIER_Y = {"server": 450.0, "leaf": 300.0, "spine": 150.0, "core": 0.0}


@dataclass(frozen=True)
class Shape:
    """What the generator needs to know of the chosen server and switch."""

    servers: int
    nics: int
    radix: int
    speed_gbps: float


def refuse(template: str, message: str) -> ScenarioError:
    """The refusal of a template, naming it."""
    return ScenarioError(Problem(where=f"template {template}", message=message))


def shape(
    template: str, gpus: int, server: str, switch: str, speed_gbps: float | None, cat: Catalog
) -> Shape:
    """The shape of `gpus` GPUs of a server model on a switch model at a port speed (the
    NIC's by default); refused when a model is unknown, the speed is not a switch port mode
    or the GPUs are not whole servers."""
    try:
        srv = cat.get(server, "server")
    except KeyError:
        raise refuse(template, f"unknown server model {server!r}") from None
    try:
        modes = cat.switch_port_modes(switch)
    except KeyError:
        raise refuse(template, f"unknown switch model {switch!r}") from None
    speed = float(speed_gbps if speed_gbps is not None else srv.value("nic_port_gbps"))
    if speed not in modes:
        have = ", ".join(f"{int(s)}G" for s in sorted(modes))
        raise refuse(template, f"switch {switch} has no {speed:g}G ports (it has {have})")
    per_server = int(srv.value("gpus_per_server"))
    nics = int(srv.value("nics_per_server"))
    if gpus <= 0 or gpus % per_server:
        raise refuse(template, f"GPU count {gpus} must be a positive multiple of {per_server}")
    return Shape(gpus // per_server, nics, modes[speed], speed)


def split_ports(
    radix: int, oversubscription: float, template: str, multiple: int = 1
) -> tuple[int, int]:
    """Down and up ports of a leaf giving exactly `oversubscription` : 1.

    `down` is a multiple of `multiple` (a ToR leaf holds whole servers).
    """
    if oversubscription < 1:
        raise refuse(template, f"oversubscription {oversubscription:g} must be at least 1")
    for up in range(int(radix // (1 + oversubscription)), 0, -1):
        down = oversubscription * up
        exact = abs(down - round(down)) < 1e-9
        if exact and round(down) % multiple == 0 and round(down) + up <= radix:
            return round(down), up
    raise refuse(
        template, f"oversubscription {oversubscription:g}:1 cannot be built on radix {radix}"
    )


def scenario(
    name: str,
    description: str,
    technology: str,
    mode: str,
    groups: list[DeviceGroup],
    bundles: list[LinkBundle],
) -> Scenario:
    """A scenario of a template's groups and bundles, on the switch's technology."""
    return Scenario(
        metadata=Metadata(name=name, description=description, tags=[]),
        groups=groups,
        bundles=bundles,
        fabric=FabricSettings(technology=technology),
        routing=RoutingPolicy(mode=mode),
    )


def group(gid: str, kind: str, model: str, count: int, tier: str, x: float = 0.0) -> DeviceGroup:
    """A device group in its tier's band at `x`, named by its tier when its id is the tier's."""
    names = {"server": "Servers", "leaf": "Leaf", "spine": "Spine", "core": "Core"}
    return DeviceGroup(
        id=gid,
        kind=kind,
        model=model,
        count=count,
        tier=tier,
        name=names.get(tier, gid) if gid == tier or gid.startswith(tier) else gid,
        position=(x, _TIER_Y[tier]),
    )


def technology_of(switch: str, cat: Catalog) -> str:
    """The fabric technology of a switch model: InfiniBand, or RoCE on Ethernet."""
    return "infiniband" if cat.get(switch, "switch").technology == "infiniband" else "roce"


def default_mode(switch: str, cat: Catalog) -> str:
    """Adaptive routing where the switch supports it, static ECMP otherwise."""
    return "adaptive" if cat.get(switch, "switch").value("adaptive_routing") else "ecmp"
