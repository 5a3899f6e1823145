"""Structural checks of a scenario against the catalog, before anything is expanded.

These are the mistakes a person makes while editing: an unknown model, a zero count, a bundle
to a group that does not exist, a port speed the device does not support, a wiring pattern
that cannot divide the groups it joins. Each is a `Problem` naming the element and field.
Checks needing the expanded arrays (ports per switch, reachability) are in `engine.topology.expand`.
"""

from __future__ import annotations

import contextlib

from engine.catalog.devices import Catalog
from engine.model.calibration_checks import check_calibration
from engine.model.catalogs import scenario_catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.job_checks import check_jobs
from engine.model.networks import split_networks, storage_catalog
from engine.model.part_checks import check_parts
from engine.model.scenario import (
    GROUP_KINDS,
    LOSS_RECOVERY,
    PATTERNS,
    ROUTING_MODES,
    TECHNOLOGIES,
    TIERS,
    WORKLOAD_KINDS,
    DeviceGroup,
    LinkBundle,
    RoutingPolicy,
    Scenario,
)
from engine.model.sizes import check_sizes
from engine.model.technology_checks import check_technology
from engine.model.traffic import check_traffic
from engine.model.training_checks import check_training
from engine.model.transport_checks import check_transport

MAX_SEED = 2**63 - 1  # seeds feed 64-bit hashes and numpy's random generator


def group_where(g: DeviceGroup) -> str:
    """How problems name a group."""
    return f"groups[{g.id}]"


def bundle_where(b: LinkBundle) -> str:
    """How problems name a bundle."""
    return f"bundles[{b.id}]"


def members(group: DeviceGroup, catalog: Catalog) -> int:
    """Wiring members of a group: its switches, or its servers' NICs."""
    if group.kind == "server":
        return group.count * int(catalog.get(group.model, "server").value("nics_per_server"))
    return group.count


def _check_groups(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    problems = []
    seen: set[str] = set()
    for g in scenario.groups:
        where = group_where(g)
        if not g.id:
            problems.append(Problem(where, "every group needs an id", "id"))
        if g.id in seen:
            problems.append(Problem(where, f"id {g.id!r} is used by another group", "id"))
        seen.add(g.id)
        if g.kind not in GROUP_KINDS:
            problems.append(
                Problem(
                    where, f"unknown kind {g.kind!r}; use one of {', '.join(GROUP_KINDS)}", "kind"
                )
            )
            continue
        try:
            catalog.get(g.model, g.kind)
        except KeyError:
            known = ", ".join(d.id for d in catalog.of_kind(g.kind))
            problems.append(
                Problem(where, f"unknown {g.kind} model {g.model!r}; catalog has {known}", "model")
            )
        if g.count <= 0:
            problems.append(Problem(where, f"count must be at least 1, not {g.count}", "count"))
        if g.tier not in TIERS:
            problems.append(
                Problem(where, f"unknown tier {g.tier!r}; use one of {', '.join(TIERS)}", "tier")
            )
        elif (g.kind == "server") != (g.tier == "server"):
            problems.append(
                Problem(where, f"a {g.kind} group cannot sit in tier {g.tier!r}", "tier")
            )
        for key, value in g.overrides.items():
            if value < 0:
                problems.append(
                    Problem(where, f"override {key} must not be negative ({value})", "overrides")
                )
        problems += _check_override_keys(g, catalog, where)
    return problems


def _override_fields(g: DeviceGroup, catalog: Catalog) -> set[str]:
    """The catalog fields a group's overrides may replace: its device's, and for a server
    group its NIC's too (a server group sets its NICs' latency)."""
    device = catalog.get(g.model, g.kind)
    fields = set(device.fields)
    if g.kind == "server" and device.has("nic"):
        # a server whose NIC is not in the catalog is reported where the NIC is used
        with contextlib.suppress(KeyError):
            fields |= set(catalog.get(device.value("nic"), "nic").fields)
    return fields


def _check_override_keys(g: DeviceGroup, catalog: Catalog, where: str) -> list[Problem]:
    if not g.overrides:
        return []
    try:
        known = _override_fields(g, catalog)
    except KeyError:
        return []  # an unknown model is reported by itself
    unknown = sorted(set(g.overrides) - known)
    if not unknown:
        return []
    return [
        Problem(
            where,
            f"unknown override(s) {', '.join(map(repr, unknown))} for {g.model}; "
            f"it has {', '.join(sorted(known))}",
            "overrides",
        )
    ]


def _check_pattern(
    b: LinkBundle, ga: DeviceGroup, gb: DeviceGroup, catalog: Catalog
) -> list[Problem]:
    where = bundle_where(b)
    na, nb = members(ga, catalog), members(gb, catalog)
    if b.pattern == "rail":
        if ga.kind != "server" or gb.kind != "switch":
            return [
                Problem(
                    where, "a rail bundle joins a server group (a) to a switch group (b)", "pattern"
                )
            ]
        rails = int(catalog.get(ga.model, "server").value("nics_per_server"))
        if gb.count % rails:
            return [
                Problem(
                    where,
                    f"rail wiring needs a multiple of {rails} switches (one per rail); "
                    f"{gb.id} has {gb.count}",
                    "pattern",
                )
            ]
    elif b.pattern == "full":
        if nb % b.blocks:
            return [
                Problem(
                    where,
                    f"{b.blocks} blocks do not divide {gb.id} ({nb} members) evenly",
                    "blocks",
                )
            ]
        if b.blocks > na:
            return [
                Problem(
                    where,
                    f"{b.blocks} blocks for {ga.id}'s {na} members leave some empty",
                    "blocks",
                )
            ]
    elif b.pattern == "striped":
        if nb % b.blocks:
            return [
                Problem(where, f"{b.blocks} planes do not divide {gb.id} ({nb} members)", "blocks")
            ]
    elif b.pattern == "one-to-one" and na != nb:
        return [
            Problem(
                where,
                f"one-to-one needs equal members: {ga.id} has {na}, {gb.id} has {nb}",
                "pattern",
            )
        ]
    return []


def _check_speed(b: LinkBundle, g: DeviceGroup, catalog: Catalog) -> list[Problem]:
    where = bundle_where(b)
    if g.kind == "switch":
        modes = catalog.switch_port_modes(g.model)
        if b.speed_gbps not in modes:
            have = ", ".join(f"{s:g}" for s in sorted(modes))
            return [
                Problem(
                    where,
                    f"{g.model} ({g.id}) has no {b.speed_gbps:g}G ports; it supports {have} Gb/s",
                    "speed_gbps",
                )
            ]
        return []
    nic = catalog.get(catalog.get(g.model, "server").value("nic"), "nic")
    speeds = [float(s) for s in nic.value("port_modes_gbps")]
    if b.speed_gbps not in speeds:
        have = ", ".join(f"{s:g}" for s in sorted(speeds))
        return [
            Problem(
                where,
                f"NIC {nic.id} of {g.id} does not run at {b.speed_gbps:g}G; it supports {have} Gb/s",
                "speed_gbps",
            )
        ]
    return []


def _check_cable(b: LinkBundle, catalog: Catalog) -> list[Problem]:
    where = bundle_where(b)
    if b.cable == "auto":
        return []
    try:
        cable = catalog.get(b.cable)
    except KeyError:
        return [
            Problem(where, f"unknown cable {b.cable!r}; use 'auto' or a catalog cable id", "cable")
        ]
    problems = []
    if cable.kind not in ("cable", "transceiver"):
        problems.append(
            Problem(where, f"{b.cable} is a {cable.kind}, not a cable or transceiver", "cable")
        )
    elif cable.has("max_length_m") and b.length_m > float(cable.value("max_length_m")):
        problems.append(
            Problem(
                where,
                f"{b.cable} reaches {cable.value('max_length_m')} m, "
                f"the bundle is {b.length_m:g} m long",
                "length_m",
            )
        )
    return problems


def _check_bundles(
    scenario: Scenario, catalog: Catalog, groups: dict[str, DeviceGroup], usable: set[str]
) -> list[Problem]:
    problems = []
    seen: set[str] = set()
    for b in scenario.bundles:
        where = bundle_where(b)
        first = len(problems)
        if b.id in seen:
            problems.append(Problem(where, f"id {b.id!r} is used by another bundle", "id"))
        seen.add(b.id)
        ends = []
        for side in ("a", "b"):
            gid = getattr(b, side)
            if gid not in groups:
                problems.append(Problem(where, f"no group {gid!r} to connect to", side))
            else:
                ends.append(groups[gid])
        if b.pattern not in PATTERNS:
            problems.append(
                Problem(
                    where,
                    f"unknown wiring pattern {b.pattern!r}; use one of {', '.join(PATTERNS)}",
                    "pattern",
                )
            )
        for name in ("links_per_pair", "blocks"):
            if getattr(b, name) < 1:
                problems.append(
                    Problem(where, f"{name} must be at least 1, not {getattr(b, name)}", name)
                )
        for name in ("speed_gbps", "length_m"):
            if getattr(b, name) <= 0:
                problems.append(
                    Problem(where, f"{name} must be positive, not {getattr(b, name):g}", name)
                )
        problems += _check_cable(b, catalog)
        if len(ends) < 2 or len(problems) > first or not {b.a, b.b} <= usable:
            continue
        ga, gb = ends
        if b.a == b.b:
            problems.append(Problem(where, "a bundle must join two different groups", "b"))
            continue
        if ga.kind == "server" and gb.kind == "server":
            problems.append(
                Problem(where, "servers connect to switches, not to other servers directly", "b")
            )
            continue
        problems += _check_pattern(b, ga, gb, catalog)
        for g in ends:
            problems += _check_speed(b, g, catalog)
    return problems


def _check_settings(scenario: Scenario, groups: dict[str, DeviceGroup]) -> list[Problem]:
    problems = []
    f, r, w = scenario.fabric, scenario.routing, scenario.workload
    if f.technology not in TECHNOLOGIES:
        problems.append(
            Problem(
                "fabric",
                f"unknown technology {f.technology!r}; use one of {', '.join(TECHNOLOGIES)}",
                "technology",
            )
        )
    for name in ("switch_latency_ns", "nic_latency_ns"):
        value = getattr(f, name)
        if value is not None and value < 0:
            problems.append(Problem("fabric", f"{name} must not be negative ({value:g})", name))
    # No link carries less than half payload: the smallest MTU allowed (256 bytes) under
    # RoCE's 82 bytes of headers, preamble and gap still keeps 76%.
    if f.header_efficiency is not None and not 0.5 <= f.header_efficiency <= 1:
        problems.append(
            Problem(
                "fabric",
                f"header_efficiency must be between 0.5 and 1 (the payload share of a link), "
                f"not {f.header_efficiency:g}",
                "header_efficiency",
            )
        )
    if f.mtu_bytes is not None and f.mtu_bytes < 256:
        problems.append(
            Problem("fabric", f"mtu_bytes must be at least 256, not {f.mtu_bytes}", "mtu_bytes")
        )
    if f.packet_loss_rate is not None and not 0 <= f.packet_loss_rate < 1:
        problems.append(
            Problem(
                "fabric",
                f"packet_loss_rate must be in [0, 1), not {f.packet_loss_rate:g}",
                "packet_loss_rate",
            )
        )
    if f.loss_recovery is not None and f.loss_recovery not in LOSS_RECOVERY:
        problems.append(
            Problem(
                "fabric",
                f"unknown loss_recovery {f.loss_recovery!r}; use one of {', '.join(LOSS_RECOVERY)}",
                "loss_recovery",
            )
        )
    if w.ranks < 0:
        problems.append(
            Problem("workload", f"ranks must be 0 (all GPUs) or positive, not {w.ranks}", "ranks")
        )
    if r.mode not in ROUTING_MODES:
        problems.append(
            Problem(
                "routing", f"unknown mode {r.mode!r}; use one of {', '.join(ROUTING_MODES)}", "mode"
            )
        )
    if r.flows_per_connection < 1:
        problems.append(
            Problem(
                "routing",
                f"flows_per_connection must be at least 1, not {r.flows_per_connection}",
                "flows_per_connection",
            )
        )
    if r.hash_scope not in RoutingPolicy.HASH_SCOPES:
        problems.append(
            Problem(
                "routing",
                f"unknown hash_scope {r.hash_scope!r}; use one of "
                f"{', '.join(RoutingPolicy.HASH_SCOPES)}",
                "hash_scope",
            )
        )
    for where, obj in (("routing", r), ("workload", w)):
        if not 0 <= obj.seed <= MAX_SEED:
            problems.append(
                Problem(
                    where,
                    f"seed must be a whole number from 0 to {MAX_SEED}, not {obj.seed}",
                    "seed",
                )
            )
    if w.kind not in WORKLOAD_KINDS:
        problems.append(
            Problem(
                "workload",
                f"unknown workload {w.kind!r}; use one of {', '.join(WORKLOAD_KINDS)}",
                "kind",
            )
        )
    for i, sf in enumerate(scenario.failures.switches):
        where = f"failures.switches[{i}]"
        g = groups.get(sf.group)
        if g is None or g.kind != "switch":
            problems.append(Problem(where, f"no switch group {sf.group!r}", "group"))
        elif g.count >= 1 and not 0 <= sf.index < g.count:
            problems.append(
                Problem(where, f"index {sf.index} outside {sf.group} (0..{g.count - 1})", "index")
            )
    bundle_ids = {b.id for b in scenario.bundles}
    for i, lf in enumerate(scenario.failures.links):
        where = f"failures.links[{i}]"
        if lf.bundle not in bundle_ids:
            problems.append(Problem(where, f"no bundle {lf.bundle!r}", "bundle"))
        elif lf.links_down < 0:
            problems.append(
                Problem(where, f"links_down must not be negative ({lf.links_down})", "links_down")
            )
    return problems


def check_structure(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """Every structural problem of `scenario`, in the order of its elements (checked
    against `catalog` with the scenario's own devices merged in). A design with a storage
    network (`engine.model.networks`) has its compute part and its storage part checked
    each as a network of its own, and its jobs against the whole."""
    try:
        catalog = scenario_catalog(scenario, catalog)
    except ScenarioError as exc:  # an unusable user-defined device: the rest waits on it
        return exc.problems
    parts = split_networks(scenario, catalog)
    if parts.storage is None and not parts.problems:
        return _check_network(scenario, catalog) + check_jobs(scenario, catalog)
    problems = _check_network(parts.compute, catalog) + parts.problems
    if parts.storage is not None:
        problems += _check_network(parts.storage, storage_catalog(catalog))
    return problems + check_jobs(scenario, catalog)


def _check_network(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """The structural problems of one network (all but the jobs'), `catalog` merged."""
    problems = _check_groups(scenario, catalog)
    groups = {g.id: g for g in scenario.groups}
    bad_groups = {p.where for p in problems}
    usable = {gid for gid, g in groups.items() if group_where(g) not in bad_groups}
    problems += _check_bundles(scenario, catalog, groups, usable)
    problems += _check_settings(scenario, groups)
    problems += check_training(scenario.workload.training)
    problems += check_technology(scenario, catalog, usable, group_where, bundle_where)
    problems += check_transport(scenario, catalog) + check_calibration(scenario)
    problems += check_parts(scenario, catalog)
    problems += check_traffic(scenario.workload.kind, scenario.workload.matrix)
    problems += check_sizes(scenario.workload)
    if not any(g.kind == "server" for g in scenario.groups):
        problems.append(Problem("groups", "the scenario has no server group, so no GPUs"))
    return problems
