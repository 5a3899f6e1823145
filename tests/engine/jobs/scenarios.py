"""The small shared-cluster scenario the engine and GUI tests of jobs both use."""

from __future__ import annotations

from engine.model.scenario import DeviceGroup, LinkBundle, Scenario


def bottleneck() -> Scenario:
    """4 DGX H100, servers 0-1 on leaf 0 and 2-3 on leaf 1, one 400G cable from each leaf
    to the one spine: everything between the leaves crosses that cable."""
    return Scenario(
        groups=[
            DeviceGroup("servers", "server", "dgx-h100", 4, "server"),
            DeviceGroup("leaf", "switch", "qm9700", 2, "leaf"),
            DeviceGroup("spine", "switch", "qm9700", 1, "spine"),
        ],
        bundles=[
            LinkBundle("servers-leaf", "servers", "leaf", "full", blocks=2),
            LinkBundle("leaf-spine", "leaf", "spine", "full"),
        ],
    )
