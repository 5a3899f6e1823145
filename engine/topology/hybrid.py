"""The hybrid template: InfiniBand pods joined by an Ethernet core through gateways.

"InfiniBand inside each pod, Ethernet between the pods": each pod is a rail-optimized
2-tier InfiniBand fabric (one leaf per rail, non-blocking, its spines keeping half their
ports for the way out), the spines of each pod are cabled to the pod's gateways' InfiniBand
ports, and the gateways' Ethernet ports go to a shared Ethernet core. NVIDIA's Skyway
GA100 (the default gateway) has 8 InfiniBand and 8 Ethernet ports and is deployed with one
or two layer-3 Ethernet switches beside it (MLNX-GW manual, "Gateway Networking Features";
catalog source ``nv-mlnx-gw-features``), so the core here is two Ethernet switches.
Every flow between pods crosses two gateways and the core; traffic inside a pod never
does (a path through a gateway is always longer than one through the pod's spines).

With `ethernet_pod`, the last pod is an Ethernet (RoCE) pod of that switch model, built the
same way, whose spines reach the core directly: "an InfiniBand pod and a RoCE pod joined
through gateways", where a flow between them crosses one gateway, the InfiniBand pod's.
"""

from __future__ import annotations

import math

from engine.catalog.devices import Catalog, default_catalog
from engine.model.scenario import DeviceGroup, LinkBundle, Scenario
from engine.topology.template_parts import (
    default_mode,
    group,
    refuse,
    scenario,
    shape,
    technology_of,
)

_POD_WIDTH = 720.0  # scene units between the pods' columns (the core card fits between)
CORE_SWITCHES = 2  # the Skyway design's one or two layer-3 Ethernet switches: two


def _side_speed(cat: Catalog, gateway: str, switch: str, template: str) -> float:
    """The fastest speed both a gateway and a switch offer (the gateway's cables run at it)."""
    try:
        ours = cat.switch_port_modes(gateway)
    except KeyError:
        raise refuse(template, f"unknown gateway model {gateway!r}") from None
    common = set(ours) & set(cat.switch_port_modes(switch))
    if not common:
        raise refuse(
            template,
            f"gateway {gateway} ({', '.join(f'{s:g}G' for s in sorted(ours))}) shares no port "
            f"speed with {switch}",
        )
    return max(common)


def _spines(per_pod: int, nics: int, half: int) -> int:
    """The fewest spines (a divisor of the pod's servers) taking every leaf's uplinks."""
    return next(
        d for d in range(max(1, math.ceil(nics * per_pod / half)), per_pod + 1) if per_pod % d == 0
    )


def _pod_half(cat: Catalog, switch: str, speed: float, per_pod: int, gpus_per_pod: int) -> int:
    """A `switch` leaf's down ports at `speed` (half its ports: non-blocking), refused when
    the pod's servers do not fit or the switch has no such ports."""
    modes = cat.switch_port_modes(switch)
    if speed not in modes:
        raise refuse("hybrid", f"switch {switch} has no {speed:g}G ports for its pod")
    half = modes[speed] // 2
    if per_pod > half:
        raise refuse(
            "hybrid",
            f"{per_pod} servers a pod exceed a {switch} leaf's {half} down ports at {speed:g}G; "
            f"at most {half * gpus_per_pod // per_pod:,} GPUs a pod",
        )
    return half


def _ethernet_pod(
    cat: Catalog, p: int, x: float, per_pod: int, plan: dict
) -> tuple[list[DeviceGroup], list[LinkBundle]]:
    """Pod `p` on Ethernet switches (`plan["switch"]`): its spines go straight to the
    Ethernet core, taking the core ports an InfiniBand pod's gateways would (`plan["links"]`
    cables at the gateways' Ethernet speed), so every pod reaches the core alike."""
    switch, speed, nics = plan["switch"], plan["speed"], plan["nics"]
    half = _pod_half(cat, switch, speed, per_pod, plan["gpus_per_pod"])
    spines = _spines(per_pod, nics, half)
    links, eth_speed = plan["links"], plan["eth_speed"]
    if links % (spines * CORE_SWITCHES):
        raise refuse(
            "hybrid",
            f"the Ethernet pod's {spines} spines cannot split {links} core cables evenly over "
            f"{CORE_SWITCHES} core switches; use another pod size",
        )
    ids = {t: f"p{p}-{t}" for t in ("servers", "leaf", "spine")}
    groups = [
        group(ids["servers"], "server", plan["server"], per_pod, "server", x),
        group(ids["leaf"], "switch", switch, nics, "leaf", x),
        group(ids["spine"], "switch", switch, spines, "spine", x),
    ]
    groups[0].name = f"Pod {p} servers"
    groups[1].name = f"Pod {p} leaves (Ethernet)"
    groups[2].name = f"Pod {p} spines (Ethernet)"
    bundles = [
        LinkBundle(
            f"{ids['servers']}-leaf", ids["servers"], ids["leaf"], "rail", speed_gbps=speed,
            length_m=10.0,
        ),
        LinkBundle(
            f"{ids['leaf']}-spine", ids["leaf"], ids["spine"], "full",
            links_per_pair=per_pod // spines, speed_gbps=speed, length_m=30.0,
        ),
        LinkBundle(
            f"{ids['spine']}-core", ids["spine"], "eth-core", "full",
            links_per_pair=links // (spines * CORE_SWITCHES), speed_gbps=eth_speed,
            length_m=30.0,
        ),
    ]  # fmt: skip
    return groups, bundles


def hybrid(
    gpus: int,
    server: str = "dgx-h100",
    switch: str = "qm9700",
    speed_gbps: float | None = None,
    pods: int = 2,
    gateways_per_pod: int = 2,
    gateway: str = "skyway-ga100",
    core_switch: str = "sn5600",
    catalog: Catalog | None = None,
    ethernet_pod: str | None = None,
) -> Scenario:
    """`pods` InfiniBand pods of `switch` (rail-optimized, 2 tiers) whose spines reach an
    Ethernet core of `core_switch` through `gateways_per_pod` gateways per pod; with
    `ethernet_pod` (an Ethernet switch model), the last pod is a RoCE pod of that switch
    whose spines reach the core directly (`_ethernet_pod`)."""
    cat = catalog or default_catalog()
    name = "hybrid"
    if pods < 2:
        raise refuse(name, f"{pods} pod(s): a hybrid fabric joins at least 2")
    if gateways_per_pod < 1:
        raise refuse(name, "each pod needs at least one gateway")
    if ethernet_pod is not None:
        device = cat.devices.get(ethernet_pod)
        if device is None or device.kind != "switch" or device.technology != "ethernet":
            raise refuse(name, f"the Ethernet pod needs an Ethernet switch, not {ethernet_pod!r}")
    s = shape(name, gpus, server, switch, speed_gbps, cat)
    if s.servers % pods:
        raise refuse(name, f"{s.servers} servers do not split evenly into {pods} pods")
    per_pod = s.servers // pods
    half = _pod_half(cat, switch, s.speed_gbps, per_pod, gpus // pods)
    device = cat.get(gateway, "switch")
    ib_ports = int(device.value("infiniband_ports"))
    eth_ports = int(device.value("ethernet_ports"))
    spines = _spines(per_pod, s.nics, half)
    if spines > ib_ports:
        raise refuse(
            name,
            f"a pod's {spines} spines exceed a {gateway}'s {ib_ports} InfiniBand ports; use fewer "
            "servers a pod",
        )
    ib_speed = _side_speed(cat, gateway, switch, name)
    eth_speed = _side_speed(cat, gateway, core_switch, name)
    plan = {
        "switch": ethernet_pod,
        "server": server,
        "speed": s.speed_gbps,
        "nics": s.nics,
        "gpus_per_pod": gpus // pods,
        "links": gateways_per_pod * eth_ports,
        "eth_speed": eth_speed,
    }
    groups: list[DeviceGroup] = []
    bundles: list[LinkBundle] = []
    for p in range(1, pods + 1):
        x = (p - 0.5) * _POD_WIDTH  # never 0: a group at (0, 0) is laid out anew
        if ethernet_pod is not None and p == pods:
            pod_groups, pod_bundles = _ethernet_pod(cat, p, x, per_pod, plan)
            groups += pod_groups
            bundles += pod_bundles
            continue
        ids = {t: f"p{p}-{t}" for t in ("servers", "leaf", "spine", "gw")}
        groups += [
            group(ids["servers"], "server", server, per_pod, "server", x),
            group(ids["leaf"], "switch", switch, s.nics, "leaf", x),
            group(ids["spine"], "switch", switch, spines, "spine", x),
            group(ids["gw"], "switch", gateway, gateways_per_pod, "core", x),
        ]
        groups[-4].name = f"Pod {p} servers"
        groups[-3].name = f"Pod {p} leaves (InfiniBand)"
        groups[-2].name = f"Pod {p} spines (InfiniBand)"
        groups[-1].name = f"Pod {p} gateways"
        bundles += [
            LinkBundle(
                f"{ids['servers']}-leaf",
                ids["servers"],
                ids["leaf"],
                "rail",
                speed_gbps=s.speed_gbps,
                length_m=10.0,
            ),
            LinkBundle(
                f"{ids['leaf']}-spine",
                ids["leaf"],
                ids["spine"],
                "full",
                links_per_pair=per_pod // spines,
                speed_gbps=s.speed_gbps,
                length_m=30.0,
            ),
            LinkBundle(
                f"{ids['spine']}-gw",
                ids["spine"],
                ids["gw"],
                "full",
                links_per_pair=ib_ports // spines,
                speed_gbps=ib_speed,
                length_m=30.0,
            ),
            LinkBundle(
                f"{ids['gw']}-core",
                ids["gw"],
                "eth-core",
                "full",
                links_per_pair=eth_ports // CORE_SWITCHES,
                speed_gbps=eth_speed,
                length_m=30.0,
            ),
        ]
    core = group("eth-core", "switch", core_switch, CORE_SWITCHES, "core", pods * _POD_WIDTH / 2)
    core.name = "Ethernet core"
    groups.append(core)
    ib_pods = pods - (ethernet_pod is not None)
    extra = f" and a RoCE pod of {ethernet_pod} straight on the core" if ethernet_pod else ""
    return scenario(
        f"hybrid {gpus} GPUs",
        f"{ib_pods} InfiniBand pod{'s' if ib_pods > 1 else ''} of {per_pod} × {server} "
        f"({switch}, rail-optimized, {s.nics} leaves and {spines} spines at "
        f"{s.speed_gbps:g}G){extra} joined by an Ethernet core of {CORE_SWITCHES} {core_switch} "
        f"through {gateways_per_pod} {gateway} gateways a{'n InfiniBand' if extra else ''} pod "
        f"({ib_speed:g}G InfiniBand side, {eth_speed:g}G Ethernet side)",
        technology_of(switch, cat),
        default_mode(switch, cat),
        groups,
        bundles,
    )
