"""The bundle a connection drag on the canvas proposes between two groups.

Connecting two groups needs a pattern and a link speed; both follow from the catalog (the
server's NIC count and port speed), so they are worked out here rather than in the editor.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog
from engine.catalog.errors import CatalogError
from engine.model.errors import ScenarioError
from engine.model.networks import storage_ids
from engine.model.scenario import TIERS, DeviceGroup, LinkBundle, Scenario

DEFAULT_SPEED_GBPS = 400.0


def default_bundle(
    scenario: Scenario, catalog: Catalog, first: str, second: str
) -> LinkBundle | None:
    """A sensible bundle between two groups of `scenario` (lower tier first), or ``None``.

    Server→switch: ``rail`` when the switch count is a multiple of the server's NICs per
    server, else ``full``, at the server NIC's port speed. Switch→switch: ``full`` at
    400 G. Into a storage network (`engine.model.networks`) the storage node's ports, or the
    server's front-end ports, set the rail (``striped`` over the switches when a server has
    a whole multiple of their count) and the speed. Two server groups, a group with
    itself or an unknown group give ``None``.
    """
    try:
        a, b = scenario.group(first), scenario.group(second)
    except (KeyError, ScenarioError):
        return None
    if a.id == b.id or (a.kind == "server" and b.kind == "server"):
        return None
    rank = {t: i for i, t in enumerate(TIERS)}
    if b.kind == "server" or rank.get(a.tier, 0) > rank.get(b.tier, 0):
        a, b = b, a
    pattern, speed = "full", DEFAULT_SPEED_GBPS
    storage, _ = storage_ids(scenario)
    ports = _storage_ports(a, catalog) if b.id in storage else None
    blocks = 1
    if ports is not None:  # into the storage network: the front-end or storage node ports
        nics, port = ports
        if nics > 0 and b.count % nics == 0:
            pattern = "rail"
        elif b.count > 0 and nics % b.count == 0:  # more ports than switches: round robin
            pattern, blocks = "striped", b.count
        speed = float(port)
    elif a.kind == "server":
        nics, port = 0, None
        try:
            server = catalog.get(a.model, "server")
            nics = int(server.value("nics_per_server", a.overrides))
            if server.has("nic_port_gbps"):
                port = server.value("nic_port_gbps", a.overrides)
            else:
                nic = catalog.get(server.value("nic"), "nic")
                port = nic.value("port_gbps")
        except (KeyError, CatalogError, TypeError, ValueError):
            pass
        if nics > 0 and b.count % nics == 0:
            pattern = "rail"
        if port:
            speed = float(port)
    return LinkBundle(
        id=f"{a.id}-{b.id}", a=a.id, b=b.id, pattern=pattern, speed_gbps=speed, blocks=blocks
    )


def _storage_ports(g: DeviceGroup, catalog: Catalog) -> tuple[int, float] | None:
    """Ports per member and their speed of a group cabled into the storage network: a
    storage node's own, a server's front-end ones (``None``: neither, or not known)."""
    device = catalog.devices.get(g.model)
    if device is None:
        return None
    try:
        if g.kind == "storage":
            return int(device.value("ports")), float(device.value("port_gbps"))
        if g.kind == "server" and device.has("frontend_nics_per_server"):
            return (
                int(device.value("frontend_nics_per_server")),
                float(device.value("frontend_port_gbps")),
            )
    except (CatalogError, TypeError, ValueError):
        return None
    return None
