"""The transport configuration and network of a scenario: catalog defaults, then its settings.

A scenario's `transport` section chooses the mechanisms (PFC, DCQCN, IB CC), the DCQCN
profile (default: the one the servers' NICs run) and its firmware readings, the ECN
thresholds and the port buffer;
everything it leaves at ``None`` is the catalog's default for the fabric's technology. The
fabric's MTU (`fabric.mtu_bytes`) is the packet size of marking, headroom and IB CC, and its
loss recovery (`fabric.loss_recovery`) what a drop costs (go-back-N: the window in flight).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.catalog.devices import Catalog
from engine.model.catalogs import scenario_catalog
from engine.model.scenario import Scenario
from engine.routing.router import RoutedFlows
from engine.topology.expand import Fabric
from engine.transport.defaults import transport_config
from engine.transport.fabric import network_from_routes
from engine.transport.network import TransportNetwork
from engine.transport.params import Mechanisms, TransportConfig
from engine.transport.readings import DcqcnReadings

DEFAULT_DCQCN_PROFILE = "dcqcn-nvidia"


def nic_dcqcn_profile(scenario: Scenario, catalog: Catalog) -> str:
    """The DCQCN profile the servers' NICs run (the first server group's NIC that names
    one; NVIDIA's firmware defaults when none does)."""
    for g in scenario.groups:
        if g.kind != "server":
            continue
        server = catalog.get(g.model, "server")
        if not server.has("nic"):
            continue
        nic = catalog.get(server.value("nic"), "nic")
        if nic.has("cc_profile"):
            return str(nic.value("cc_profile"))
    return DEFAULT_DCQCN_PROFILE


def _a_switch(scenario: Scenario) -> str | None:
    return next((g.model for g in scenario.groups if g.kind == "switch"), None)


def scenario_transport_config(scenario: Scenario, catalog: Catalog) -> TransportConfig:
    """The transport configuration of `scenario`: the technology's defaults with the
    scenario's transport settings and MTU applied."""
    catalog = scenario_catalog(scenario, catalog)
    t = scenario.transport
    technology = scenario.fabric.technology
    profile = t.dcqcn_profile or nic_dcqcn_profile(scenario, catalog)
    switch = _a_switch(scenario)
    if switch is None:
        switch = "qm9700" if technology == "infiniband" else "sn5600"
    readings = DcqcnReadings(
        t.dcqcn_g_reading, t.dcqcn_byte_unit_bytes, t.dcqcn_byte_counter, t.dcqcn_cnp_pacing
    )
    config = transport_config(catalog, technology, switch, dcqcn_profile=profile, readings=readings)
    m = config.mechanisms
    if technology == "roce":
        lossless = m.lossless if t.pfc is None else ("pfc" if t.pfc else "none")
        dcqcn = m.dcqcn if t.dcqcn is None else bool(t.dcqcn)
        mechanisms = Mechanisms(lossless, dcqcn, False)
    else:
        mechanisms = Mechanisms(m.lossless, False, m.ib_cc if t.ib_cc is None else bool(t.ib_cc))
    pfc = (
        config.pfc if t.pfc_xoff_bytes is None else replace(config.pfc, xoff_bytes=t.pfc_xoff_bytes)
    )
    mtu = (
        config.mtu_bytes if scenario.fabric.mtu_bytes is None else float(scenario.fabric.mtu_bytes)
    )
    tech = catalog.technology(technology)
    recovery = scenario.fabric.loss_recovery or str(tech.value("loss_recovery"))
    return replace(config, mechanisms=mechanisms, pfc=pfc, mtu_bytes=mtu, loss_recovery=recovery)


def scenario_network(
    fabric: Fabric,
    routed: RoutedFlows,
    catalog: Catalog,
    capacity_Bps: np.ndarray | None = None,
    start_s: np.ndarray | None = None,
    keep_apart: np.ndarray | None = None,
    ports: np.ndarray | None = None,
) -> TransportNetwork:
    """The transport network of `routed` flows on `fabric`, with the scenario's port buffer
    and ECN thresholds replacing the switches' catalog figures where it sets them.

    `capacity_Bps` (per fabric link) replaces the fabric's link capacities, so that the
    transport sees the same links as the caller's ideal; `start_s` (per routed flow) gives
    each flow its start time; flows of different `keep_apart` values (per routed flow)
    never share a class; `ports` (per fabric link) makes a link stand for that many equal
    ports (sprayed flows, `engine.transport.spray`), the scenario's figures per port.
    """
    network = network_from_routes(fabric, routed, catalog, capacity_Bps, start_s, keep_apart, ports)
    t = fabric.scenario.transport
    links = network.links
    k = 1.0 if links.ports is None else links.ports.astype(np.float64)
    changes: dict[str, np.ndarray] = {}
    if t.port_buffer_bytes is not None:
        size = float(t.port_buffer_bytes) * k
        changes["buffer_bytes"] = np.where(links.into_switch, size, links.buffer_bytes)
        changes["egress_buffer_bytes"] = np.where(
            links.from_switch, size, links.egress_buffer_bytes
        )
    if fabric.scenario.fabric.technology == "roce":
        marks = links.from_switch if links.ethernet is None else links.from_switch & links.ethernet
        for name in ("ecn_kmin_bytes", "ecn_kmax_bytes", "ecn_pmax"):
            value = getattr(t, name)
            if value is not None:
                per_port = float(value) * (k if name != "ecn_pmax" else 1.0)
                changes[name] = np.where(marks, per_port, getattr(links, name))
    if not changes:
        return network
    return replace(network, links=replace(links, **changes))
