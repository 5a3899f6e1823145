"""The storage (front-end) network of a design, kept apart from its compute fabric.

Beside its compute fabric a design may hold a storage network, drawn and edited with the
same groups and bundles: storage node groups (kind ``storage``, a catalog storage device),
the switch groups cabled to them, and bundles from the GPU servers to those switches. Such
a bundle uses the servers' front-end ports (the catalog's `frontend_nic`,
`frontend_nics_per_server` and `frontend_port_gbps`: the DGX H100's two ConnectX-7 storage
ports, as NVIDIA's BasePOD cables them), never their compute NICs, so checkpoint writes on
it leave the compute fabric alone. The storage network is found from its structure: the
storage groups and every switch group reached from them through bundles without crossing a
server group; the storage bundles are those touching one of these.

`split_networks` cuts a scenario into two scenarios of its own. The compute part holds every
other group and bundle: exactly what the engine always evaluated, so a design without
storage is unchanged (the very same object). The storage part holds every GPU server group
(in the same order, so server *i* is the same server in both parts), the storage switches
and the storage node groups; it is expanded, routed and priced by the same engine on
`storage_catalog`, which describes a GPU server's front-end ports as its NICs and a storage
node as a server of one network endpoint, taking every figure from the catalog entries with
their sources.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from engine.catalog.devices import Catalog, Device, Figure
from engine.model.errors import Problem
from engine.model.scenario import (
    DeviceGroup,
    FabricSettings,
    Failures,
    Metadata,
    RoutingPolicy,
    Scenario,
)

FRONTEND = "+frontend"  # suffix of a GPU server's front-end model in `storage_catalog`
NODE = "+node"  # suffix of a storage node's endpoint model in `storage_catalog`
_FRONTEND_FIELDS = {
    "nic": "frontend_nic",
    "nics_per_server": "frontend_nics_per_server",
    "nic_port_gbps": "frontend_port_gbps",
}
_DERIVED: dict[int, tuple[Catalog, Catalog]] = {}  # id(catalog) -> (catalog, derived)


@dataclass
class Networks:
    """A scenario cut into its compute part and its storage part (``None``: no storage
    network), with the problems that stopped the cut."""

    compute: Scenario
    storage: Scenario | None = None
    problems: list[Problem] = field(default_factory=list)


def storage_ids(scenario: Scenario) -> tuple[set[str], set[str]]:
    """The ids of the storage network's groups and bundles (both empty without one)."""
    kinds = {g.id: g.kind for g in scenario.groups}
    groups = {g.id for g in scenario.groups if g.kind == "storage"}
    if not groups:
        return set(), set()
    near: dict[str, list[str]] = {}
    for b in scenario.bundles:
        near.setdefault(b.a, []).append(b.b)
        near.setdefault(b.b, []).append(b.a)
    todo = list(groups)
    while todo:
        for other in near.get(todo.pop(), []):
            if kinds.get(other) in ("switch", "storage") and other not in groups:
                groups.add(other)
                todo.append(other)
    bundles = {b.id for b in scenario.bundles if b.a in groups or b.b in groups}
    return groups, bundles


def has_storage(scenario: Scenario) -> bool:
    """Whether the scenario holds a storage network (a storage node group)."""
    return any(g.kind == "storage" for g in scenario.groups)


def frontend_id(server_model: str) -> str:
    """The model id of a GPU server's front-end ports in `storage_catalog`."""
    return server_model + FRONTEND


def node_id(storage_model: str) -> str:
    """The model id of a storage node's endpoint in `storage_catalog`."""
    return storage_model + NODE


def node_write_Bps(device: Device) -> float:  # noqa: N802 (bytes per second)
    """What a storage node's drives can write, bytes/s: its drive count times each drive's
    sequential write (catalog ``drives``, ``drive_write_GBps``); infinite when the entry
    gives no drive figures. The node writes at the smaller of this and its ports' rate
    (`engine.jobs.interference` adds it as a limit at the node)."""
    if not (device.has("drives") and device.has("drive_write_GBps")):
        return float("inf")
    return float(device.value("drives")) * float(device.value("drive_write_GBps")) * 1e9


def _frontend(device: Device) -> Device:
    fields = {k: v for k, v in device.fields.items() if k != "nic_cages"}
    for name, source in _FRONTEND_FIELDS.items():
        fields[name] = device.fields[source]
    return replace(
        device, id=frontend_id(device.id), name=f"{device.name} front-end ports", fields=fields
    )


def _node(device: Device) -> Device:
    ports, gbps = device.fields["ports"], device.fields["port_gbps"]
    internal = "not crossed: the node's ports end at its one endpoint"
    fields = {
        **device.fields,
        "gpus_per_server": Figure(1, None, note="one network endpoint: the storage node"),
        "nics_per_server": ports,
        "nic_port_gbps": gbps,
        "nvlink_bw_GBps": Figure(float(ports.value) * float(gbps.value) / 8, None, note=internal),
        "nvlink_latency_ns": Figure(0, None, note=internal),
    }
    return replace(device, id=node_id(device.id), kind="server", fields=fields)


def storage_catalog(catalog: Catalog) -> Catalog:
    """`catalog` plus, for every server with front-end ports, its front-end model
    (`frontend_id`: those ports as its NICs) and, for every storage device, its endpoint
    model (`node_id`: a server of one endpoint behind the node's ports). The same catalog
    gives the same derived catalog, so expanded storage graphs are cached like others."""
    known = _DERIVED.get(id(catalog))
    if known is not None and known[0] is catalog:
        return known[1]
    devices = dict(catalog.devices)
    for d in catalog.devices.values():
        if d.kind == "server" and all(d.has(f) for f in _FRONTEND_FIELDS.values()):
            devices[frontend_id(d.id)] = _frontend(d)
        elif d.kind == "storage":
            devices[node_id(d.id)] = _node(d)
    derived = replace(catalog, devices=devices)
    if len(_DERIVED) > 16:
        _DERIVED.clear()
    _DERIVED[id(catalog)] = (catalog, derived)
    return derived


def _storage_mode(switches: list[DeviceGroup], catalog: Catalog) -> str:
    """Adaptive routing where every storage switch offers it, static ECMP otherwise."""
    for g in switches:
        device = catalog.devices.get(g.model)
        if device is None or device.kind != "switch" or not device.value("adaptive_routing"):
            return "ecmp"
    return "adaptive"


def _storage_problems(scenario: Scenario, catalog: Catalog, groups: set[str]) -> list[Problem]:
    """Storage node groups of an unknown model, outside the server tier or cabled to
    nothing; server groups not cabled to the storage network, or cabled to it with a
    model that has no front-end ports."""
    problems = []
    cabled = {b.a for b in scenario.bundles if b.b in groups} | {
        b.b for b in scenario.bundles if b.a in groups
    }
    cabled |= {g for g in groups if any(g in (b.a, b.b) for b in scenario.bundles)}
    for g in scenario.groups:
        where = f"groups[{g.id}]"
        if g.kind == "storage":
            if g.model not in catalog.devices or catalog.devices[g.model].kind != "storage":
                known = ", ".join(d.id for d in catalog.of_kind("storage"))
                problems.append(
                    Problem(
                        where, f"unknown storage model {g.model!r}; catalog has {known}", "model"
                    )
                )
            if g.tier != "server":
                problems.append(
                    Problem(
                        where,
                        f"storage nodes sit in tier 'server', not {g.tier!r}: set the tier to "
                        "'server'",
                        "tier",
                    )
                )
            if g.count <= 0:
                problems.append(Problem(where, f"count must be at least 1, not {g.count}", "count"))
            if g.id not in cabled:
                problems.append(
                    Problem(where, "storage nodes cabled to no switch: connect them to one")
                )
        elif g.kind == "server" and g.id not in cabled:
            problems.append(
                Problem(
                    where,
                    "not cabled to the storage network: connect these servers' front-end "
                    "ports to a switch of the storage network, or remove the storage nodes",
                )
            )
        elif g.kind == "server":
            device = catalog.devices.get(g.model)
            if device is not None and not all(device.has(f) for f in _FRONTEND_FIELDS.values()):
                problems.append(
                    Problem(
                        where,
                        f"{g.model} has no front-end (storage) ports in the catalog, so it "
                        "cannot join a storage network; use a server that has them (e.g. "
                        "dgx-h100) or remove its storage bundle",
                        "model",
                    )
                )
    return problems


def split_networks(scenario: Scenario, catalog: Catalog) -> Networks:
    """The compute part and the storage part of `scenario` (see the module's text); the
    scenario itself as the compute part when it has no storage network."""
    groups, bundles = storage_ids(scenario)
    if not groups:
        return Networks(scenario)
    problems = _storage_problems(scenario, catalog, groups)
    failures = scenario.failures
    compute = replace(
        scenario,
        groups=[g for g in scenario.groups if g.id not in groups],
        bundles=[b for b in scenario.bundles if b.id not in bundles],
        failures=Failures(
            switches=[f for f in failures.switches if f.group not in groups],
            links=[f for f in failures.links if f.bundle not in bundles],
        ),
    )
    if problems:
        return Networks(compute, None, problems)
    parts = []
    for g in scenario.groups:
        if g.kind == "server":
            device = catalog.devices.get(g.model)
            model = g.model
            if device is not None and all(device.has(f) for f in _FRONTEND_FIELDS.values()):
                model = frontend_id(g.model)
            parts.append(replace(g, model=model, overrides={}))
    nodes = [
        replace(g, kind="server", model=node_id(g.model), overrides={})
        for g in scenario.groups
        if g.kind == "storage"
    ]
    switches = [g for g in scenario.groups if g.kind == "switch" and g.id in groups]
    storage = Scenario(
        metadata=Metadata(name=f"{scenario.metadata.name} storage network"),
        groups=parts + nodes + switches,
        bundles=[b for b in scenario.bundles if b.id in bundles],
        fabric=FabricSettings(technology="roce"),
        routing=RoutingPolicy(mode=_storage_mode(switches, catalog), seed=scenario.routing.seed),
        failures=Failures(
            switches=[f for f in failures.switches if f.group in groups],
            links=[f for f in failures.links if f.bundle in bundles],
        ),
    )
    return Networks(compute, storage)
