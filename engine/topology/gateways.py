"""Gateways in the expansion: what an InfiniBand-to-Ethernet gateway does to the cables
around it, and the per-segment technology of a hybrid fabric.

A gateway group (a catalog switch whose technology is ``gateway``, e.g. NVIDIA's Skyway
GA100) forwards between its InfiniBand ports and its Ethernet ports. Its ports limit what
crosses it like any link: every cable into or out of a gateway carries at most the
gateway's forwarding rate per port (`forwarding_gbps_per_port`; the Skyway forwards 100 Gb/s
per port on its 200G cables); its own latency (`latency_ns`, not the fabric-wide switch
latency, which is a switch's) is paid on every link into it; and its two sides have their
own port counts (`infiniband_ports`, `ethernet_ports`), checked here. Each bundle of a
hybrid fabric carries its own layer's headers (26 bytes a packet on InfiniBand, 82 on RoCE),
so a cable's capacity follows its segment's technology.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.catalog.devices import Catalog
from engine.model.errors import Problem
from engine.model.scenario import DeviceGroup, Scenario
from engine.model.technology_checks import GATEWAY, LAYER_NAME, bundle_layers, has_gateway
from engine.model.validation import group_where

# The catalog technology profile of each link layer.
PROFILE = {"infiniband": "infiniband", "ethernet": "roce"}
_SIDE_FIELD = {"infiniband": "infiniband_ports", "ethernet": "ethernet_ports"}


def is_gateway(g: DeviceGroup, cat: Catalog) -> bool:
    """Whether a group is a gateway (a switch model whose catalog technology is gateway)."""
    device = cat.devices.get(g.model)
    return g.kind == "switch" and device is not None and device.technology == GATEWAY


def forwarding_gbps(g: DeviceGroup, cat: Catalog) -> float:
    """The most a gateway forwards per port, Gb/s (the group's override, else the catalog's)."""
    return float(cat.get(g.model, "switch").value("forwarding_gbps_per_port", g.overrides))


class Segments:
    """Per bundle its link layer and header efficiency in a hybrid fabric; in a fabric of
    one technology, `hybrid` is false and every bundle keeps the fabric's efficiency."""

    def __init__(
        self,
        scenario: Scenario,
        cat: Catalog,
        efficiency: float,
        header_of: Callable[[str], float],
    ) -> None:
        """`efficiency` is the fabric's; `header_of` gives a technology profile's."""
        self.hybrid = has_gateway(scenario, cat)
        self.layers = bundle_layers(scenario, cat) if self.hybrid else []
        forced = scenario.fabric.header_efficiency
        self.efficiency = [
            forced if forced is not None else header_of(PROFILE[layer]) for layer in self.layers
        ]
        self.default_efficiency = efficiency
        self.side_use: dict[int, dict[str, np.ndarray]] = {}

    def cable_rate(
        self, bi: int, speed_gbps: float, ends: tuple[DeviceGroup, DeviceGroup], cat: Catalog
    ) -> float:
        """Bytes/s of one cable of bundle `bi`: its speed, capped by a gateway end's
        forwarding rate, after its segment's header efficiency."""
        if not self.hybrid:
            return speed_gbps * 1e9 / 8 * self.default_efficiency
        gbps = speed_gbps
        for g in ends:
            if is_gateway(g, cat):
                gbps = min(gbps, forwarding_gbps(g, cat))
        return gbps * 1e9 / 8 * self.efficiency[bi]

    def note(self, bi: int, g: DeviceGroup, gi: int, use: np.ndarray, cat: Catalog) -> None:
        """Count bundle `bi`'s cables on gateway group `g` (index `gi`) by side."""
        if self.hybrid and is_gateway(g, cat):
            sides = self.side_use.setdefault(gi, {})
            layer = self.layers[bi]
            sides[layer] = sides.get(layer, 0) + use

    def ethernet(self) -> np.ndarray | None:
        """Per bundle whether its cables speak Ethernet (``None`` outside a hybrid fabric)."""
        if not self.hybrid:
            return None
        return np.array([layer == "ethernet" for layer in self.layers], dtype=bool)

    def problems(self, scenario: Scenario, cat: Catalog) -> list[Problem]:
        """Gateways wired to more ports on one side than that side has."""
        out = []
        for gi, sides in self.side_use.items():
            g = scenario.groups[gi]
            device = cat.get(g.model, "switch")
            for layer, use in sides.items():
                have = int(device.value(_SIDE_FIELD[layer]))
                worst = int(np.argmax(use))
                if int(use[worst]) > have:
                    out.append(
                        Problem(
                            group_where(g),
                            f"gateway {worst} of {g.id} has {int(use[worst])} "
                            f"{LAYER_NAME[layer]} cables but a {g.model} has {have} "
                            f"{LAYER_NAME[layer]} ports; add gateways or reduce links_per_pair",
                            "count",
                        )
                    )
        return out
