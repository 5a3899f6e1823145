"""Ports and optical modules at the two ends of a bundle, counted per switch or server.

Cables per wiring member are computed analytically per pattern (never per cable, so a
131,072-GPU fabric costs a few milliseconds) and checked against the expansion's count.
Switches whose catalog entry gives OSFP ``cages`` holding two (or more) logical ports at the
bundle speed take one twin-port module per two ports, ``ceil(ports / 2)`` per switch; a
server with ``nic_cages`` (DGX H100) likewise. A single NIC port takes a single-port module of
its form factor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.catalog.devices import Catalog
from engine.model.scenario import DeviceGroup, LinkBundle
from engine.model.validation import members
from engine.topology.expand import Fabric, wire_bundle


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
class BundleEnd:
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


def _switch_end(g: DeviceGroup, speed_gbps: float, degrees: np.ndarray, cat: Catalog) -> BundleEnd:
    """A switch end: twin-port when its cages hold several logical ports at this speed."""
    sw = cat.get(g.model, "switch")
    form = str(sw.value("cage_form_factor")) if sw.has("cage_form_factor") else "OSFP"
    modes = cat.switch_port_modes(g.model)
    if not sw.has("cages"):
        return BundleEnd(g, form, 1, speed_gbps, None)
    cages = int(sw.value("cages"))
    per_cage = modes[speed_gbps] / cages
    if per_cage < 2 or not float(per_cage).is_integer():
        return BundleEnd(g, form, 1, speed_gbps, None)
    cage_gbps = max(s * n for s, n in modes.items()) / cages
    return BundleEnd(g, form, int(per_cage), cage_gbps, degrees)


def _server_end(
    g: DeviceGroup, speed_gbps: float, nic_degrees: np.ndarray, cat: Catalog
) -> BundleEnd:
    """A server end: single-port modules in each NIC, or twin-port cages (DGX H100)."""
    srv = cat.get(g.model, "server")
    nic = cat.get(srv.value("nic"), "nic")
    form = str(nic.value("form_factor")) if nic.has("form_factor") else "OSFP"
    nics = int(srv.value("nics_per_server"))
    if not srv.has("nic_cages") or nics <= int(srv.value("nic_cages")):
        return BundleEnd(g, form, 1, speed_gbps, None)
    per_cage = nics // int(srv.value("nic_cages"))
    per_server = nic_degrees.reshape(g.count, nics).sum(axis=1)
    return BundleEnd(g, "OSFP", per_cage, speed_gbps * per_cage, per_server)


def bundle_ends(fabric: Fabric, bi: int, cat: Catalog) -> tuple[BundleEnd, BundleEnd]:
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
