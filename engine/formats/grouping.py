"""A link list grouped back into a scenario: device groups and bundles with wiring patterns.

Servers are the nodes the file calls servers (a `kind` hint, or a name starting ``server``,
``srv``, ``host``, ``node``, ``gpu``, ``dgx`` or ``hgx``; ``leaf``, ``spine``, ``core``,
``switch``, ``sw``, ``tor`` and ``agg`` name switches), else those whose every neighbour has
more cables than they have (a server's few NICs against a switch's many ports); switch tiers follow
the distance from the servers (leaf, spine, core). Nodes of one kind, tier and model that
see the same neighbourhood (colour refinement: the multiset of their neighbours' classes,
repeated until it settles) form one group; all the cables between two groups form one
bundle, whose pattern (one-to-one, rail, full or striped, with its blocks and links per
pair) is found by wiring each candidate and comparing it with the cables read. Members are
ordered by the file's member hints, else by name in natural order. What cannot be grouped
that way is refused with the groups it concerns, never guessed. A server whose NIC count no
catalog server has (a packet simulator's 1-NIC host) gets a user-defined server carried by
the scenario (`engine.formats.hosts`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict, deque

import numpy as np

from engine.catalog.custom import merge_devices
from engine.catalog.devices import Catalog
from engine.catalog.errors import CatalogError
from engine.formats.hosts import host_server
from engine.formats.lines import refuse
from engine.formats.linklist import LinkList, PortLink
from engine.model.devices import CustomDevice
from engine.model.scenario import (
    DeviceGroup,
    FabricSettings,
    LinkBundle,
    Metadata,
    RoutingPolicy,
    Scenario,
)
from engine.topology.expand import wire_bundle

TIER_ORDER = ("server", "leaf", "spine", "core")
TIER_Y = {"server": 450.0, "leaf": 300.0, "spine": 150.0, "core": 0.0}
DEFAULT_LENGTH_M = {"server": 3.0, "leaf": 30.0, "spine": 100.0}
SERVER_NAME = re.compile(r"^(server|srv|host|node|gpu|dgx|hgx)", re.IGNORECASE)
SWITCH_NAME = re.compile(r"^(leaf|spine|core|switch|sw|tor|agg)", re.IGNORECASE)
GROUP_NAMES = {"server": "servers", "leaf": "leaf", "spine": "spine", "core": "core"}


def natural_key(text: str) -> list:
    """Sort key putting ``leaf2`` before ``leaf10``."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def to_scenario(links: LinkList, catalog: Catalog, switch_model: str | None = None) -> Scenario:
    """The grouped scenario of `links`; `switch_model` names the switches' catalog model
    where the file does not (default: the first catalog switch with the ports needed)."""
    src = links.source
    neighbours: dict[str, list[str]] = defaultdict(list)
    for link in links.links:
        neighbours[link.a].append(link.b)
        neighbours[link.b].append(link.a)
    kinds = _kinds(links, neighbours)
    tiers = _tiers(links, neighbours, kinds)
    hosts = {str(e.get("id")): CustomDevice.from_entry(e) for e in links.devices}
    catalog = _with_devices(catalog, hosts, src)
    models = _models(links, neighbours, kinds, catalog, switch_model, hosts)
    catalog = _with_devices(catalog, hosts, src)
    classes = _classes(links, neighbours, tiers, models)
    groups, member_of = _groups(links, classes, tiers, models, kinds, catalog)
    bundles = _bundles(links, groups, member_of, catalog)
    switch = next((g.model for g in groups if g.kind == "switch"), None)
    technology = links.technology or "infiniband"
    adaptive = False
    if switch is not None:
        dev = catalog.get(switch, "switch")
        technology = "infiniband" if dev.technology == "infiniband" else "roce"
        adaptive = bool(dev.value("adaptive_routing"))
    name = links.name or src.rsplit("/", 1)[-1]
    servers = sum(g.count for g in groups if g.kind == "server")
    return Scenario(
        metadata=Metadata(
            name=name, description=f"imported from {src}: {servers} servers", tags=["imported"]
        ),
        groups=groups,
        bundles=bundles,
        fabric=FabricSettings(technology=technology),
        routing=RoutingPolicy(mode="adaptive" if adaptive else "ecmp"),
        devices=list(hosts.values()),
    )


def _with_devices(catalog: Catalog, devices: dict[str, CustomDevice], source: str) -> Catalog:
    """`catalog` with the user-defined `devices` (a refusal names the file and the entry)."""
    try:
        return merge_devices(catalog, [d.entry() for d in devices.values()])
    except CatalogError as exc:
        raise refuse(source, None, str(exc)) from None


def _kinds(links: LinkList, neighbours: dict[str, list[str]]) -> dict[str, str]:
    degree = {n: len(v) for n, v in neighbours.items()}
    kinds = {}
    for node, hint in links.nodes.items():
        if hint.kind in ("server", "host"):
            kinds[node] = "server"
        elif hint.kind == "switch":
            kinds[node] = "switch"
        elif SERVER_NAME.match(node):
            kinds[node] = "server"
        elif SWITCH_NAME.match(node):
            kinds[node] = "switch"
        else:
            kinds[node] = (
                "server" if all(degree[m] > degree[node] for m in neighbours[node]) else "switch"
            )
    if "server" not in kinds.values():
        raise refuse(
            links.source, None, "no servers found: no node has fewer cables than all its neighbours"
        )
    for link in links.links:
        if kinds[link.a] == kinds[link.b] == "server":
            raise refuse(
                links.source, link.line, f"a cable between two servers ({link.a}, {link.b})"
            )
    return kinds


def _tiers(
    links: LinkList, neighbours: dict[str, list[str]], kinds: dict[str, str]
) -> dict[str, str]:
    distance = {n: 0 for n, k in kinds.items() if k == "server"}
    queue = deque(distance)
    while queue:
        node = queue.popleft()
        for m in neighbours[node]:
            if m not in distance:
                distance[m] = distance[node] + 1
                queue.append(m)
    tiers = {}
    for node in links.nodes:
        hint = links.nodes[node].tier
        if hint in TIER_ORDER:
            tiers[node] = hint
            continue
        d = distance.get(node)
        if d is None or d >= len(TIER_ORDER):
            far = (
                "not connected to any server"
                if d is None
                else f"{d} cables from the nearest server"
            )
            raise refuse(
                links.source,
                None,
                f"switch {node!r} is {far}; FabricLab models up to three switch tiers",
            )
        tiers[node] = TIER_ORDER[d]
    return tiers


def _models(
    links, neighbours, kinds, catalog: Catalog, switch_model: str | None, hosts: dict
) -> dict[str, str]:
    """Each node's catalog model; a server no catalog model fits gets a user-defined one,
    added to `hosts` (`engine.formats.hosts`)."""
    ports: dict[str, set[str]] = defaultdict(set)
    rates: dict[str, set[float]] = defaultdict(set)
    for link in links.links:
        ports[link.a].add(link.port_a)
        ports[link.b].add(link.port_b)
        rates[link.a].add(link.rate_gbps)
        rates[link.b].add(link.rate_gbps)
    models = {}
    for node, kind in kinds.items():
        hint = links.nodes[node].model
        if kind == "switch" and switch_model and not hint:
            hint = switch_model
        if kind == "server" and (not hint or hint not in catalog.devices):
            model = None if hint else _server_model(len(ports[node]), rates[node], catalog)
            if model is None:  # no catalog server has these NICs, or the file's is unknown
                model = _host(node, len(ports[node]), rates[node], hint, catalog, links, hosts)
            models[node] = model
        elif hint:
            try:
                catalog.get(hint, kind)
            except KeyError:
                raise refuse(
                    links.source, None, f"{node!r}: {hint!r} is not a {kind} in the catalog"
                ) from None
            models[node] = hint
        else:
            models[node] = _switch_model(
                node, len(neighbours[node]), rates[node], catalog, links.source
            )
    return models


def _server_model(nics: int, rates: set[float], catalog: Catalog) -> str | None:
    """The first catalog server with `nics` NICs (at one of `rates`, if one is); None."""
    fits = [d for d in catalog.of_kind("server") if int(d.value("nics_per_server")) == nics]
    same_rate = [d for d in fits if float(d.value("nic_port_gbps")) in rates]
    return (same_rate or fits)[0].id if fits else None


def _host(node, nics: int, rates: set[float], hint, catalog: Catalog, links, hosts) -> str:
    """The user-defined server of `node` (one per NIC count, rate and file model)."""
    if len(rates) != 1:
        shown = ", ".join(f"{r:g}G" for r in sorted(rates))
        raise refuse(links.source, None, f"server {node!r} has NICs at several rates ({shown})")
    device = host_server(catalog, nics, next(iter(rates)), hint, links.source)
    known = hosts.setdefault(device.id, device)
    if known != device:
        raise refuse(
            links.source, None, f"servers of model {device.id!r} differ in NICs (see {node!r})"
        )
    return device.id


def _switch_model(node: str, cables: int, rates: set[float], catalog: Catalog, source: str) -> str:
    for dev in catalog.of_kind("switch"):
        modes = catalog.switch_port_modes(dev.id)
        if all(r in modes for r in rates) and cables <= min(modes[r] for r in rates):
            return dev.id
    shown = ", ".join(f"{r:g}G" for r in sorted(rates))
    raise refuse(source, None, f"switch {node!r}: no catalog switch has {cables} ports at {shown}")


def _classes(links, neighbours, tiers, models) -> dict[str, object]:
    """Colour refinement: nodes alike in tier and model, and in their neighbours' classes."""
    if all(h.group for h in links.nodes.values()):
        return {n: (tiers[n], h.group) for n, h in links.nodes.items()}
    colour: dict[str, object] = {n: (tiers[n], models[n]) for n in links.nodes}
    while True:
        signature = {
            n: (colour[n], tuple(sorted(Counter(repr(colour[m]) for m in neighbours[n]).items())))
            for n in links.nodes
        }
        ids = {s: i for i, s in enumerate(sorted({repr(s) for s in signature.values()}))}
        refined = {n: (tiers[n], ids[repr(s)]) for n, s in signature.items()}
        if len(set(refined.values())) == len(set(colour.values())):
            return refined
        colour = refined


def _groups(links, classes, tiers, models, kinds, catalog):
    """Device groups in tier order, and each node's (group index, member index)."""
    by_class: dict[object, list[str]] = defaultdict(list)
    for node in links.nodes:
        by_class[classes[node]].append(node)
    ordered = sorted(
        by_class.values(),
        key=lambda ns: (TIER_ORDER.index(tiers[ns[0]]), list(links.nodes).index(ns[0])),
    )
    groups, member_of, used = [], {}, Counter()
    per_tier = Counter(tiers[ns[0]] for ns in ordered)
    for nodes in ordered:
        tier, model = tiers[nodes[0]], models[nodes[0]]
        if len({models[n] for n in nodes}) > 1:
            raise refuse(links.source, None, f"nodes of one group differ in model: {nodes[:3]}")
        hinted = links.nodes[nodes[0]].group
        used[tier] += 1
        gid = hinted or GROUP_NAMES[tier] + (f"-{used[tier]}" if per_tier[tier] > 1 else "")
        hints = [links.nodes[n].member for n in nodes]
        if all(h is not None for h in hints) and sorted(hints) == list(range(len(nodes))):
            nodes = sorted(nodes, key=lambda n: links.nodes[n].member)
        else:
            nodes = sorted(nodes, key=natural_key)
        for i, n in enumerate(nodes):
            member_of[n] = (len(groups), i)
        x = 200.0 * (used[tier] - 1)
        name = {"server": "Servers", "leaf": "Leaf", "spine": "Spine", "core": "Core"}[tier]
        groups.append(
            DeviceGroup(
                gid,
                kinds[nodes[0]],
                model,
                len(nodes),
                tier,
                name if gid == GROUP_NAMES[tier] else gid,
                (x, TIER_Y[tier]),
            )
        )
    if len({g.id for g in groups}) != len(groups):
        raise refuse(links.source, None, "two groups would share one id; rename the group hints")
    return groups, member_of


def _bundles(links, groups, member_of, catalog: Catalog) -> list[LinkBundle]:
    pairs: dict[tuple[int, int], list[tuple[int, int, PortLink]]] = defaultdict(list)
    port_sets: dict[str, set[str]] = defaultdict(set)
    for link in links.links:
        port_sets[link.a].add(link.port_a)
        port_sets[link.b].add(link.port_b)
    ports = {n: sorted(p, key=natural_key) for n, p in port_sets.items()}
    for link in links.links:
        (ga, ma), (gb, mb) = member_of[link.a], member_of[link.b]
        na, pa = link.a, link.port_a
        if TIER_ORDER.index(groups[ga].tier) > TIER_ORDER.index(groups[gb].tier):
            (ga, ma), (gb, mb) = (gb, mb), (ga, ma)
            na, pa = link.b, link.port_b
        if groups[ga].tier == groups[gb].tier:
            raise refuse(
                links.source,
                link.line,
                f"a cable within one tier ({link.a} - {link.b}); bundles join a lower tier to an upper one",
            )
        pairs[(ga, gb)].append((_nic(groups[ga], ma, pa, ports[na], catalog), mb, link))
    bundles = []
    for (ga, gb), cables in pairs.items():
        a, b = groups[ga], groups[gb]
        rates = {c[2].rate_gbps for c in cables}
        if len(rates) > 1:
            raise refuse(
                links.source,
                None,
                f"cables between {a.id} and {b.id} differ in rate ({sorted(rates)} Gb/s)",
            )
        first = cables[0][2]
        bundle = _pattern(
            a, b, np.array([c[0] for c in cables]), np.array([c[1] for c in cables]), catalog
        )
        if bundle is None:
            raise refuse(
                links.source,
                None,
                f"the {len(cables)} cables between {a.id} and {b.id} match no wiring pattern "
                "(one-to-one, rail, full, striped) in the order of the members' names",
            )
        bundle.id = first.bundle or f"{a.id}-{b.id}"
        bundle.speed_gbps = rates.pop()
        bundle.length_m = (
            first.length_m if first.length_m is not None else DEFAULT_LENGTH_M.get(a.tier, 100.0)
        )
        bundle.cable = first.cable or "auto"
        bundles.append(bundle)
    return bundles


def _nic(group: DeviceGroup, member: int, port: str, ports: list[str], catalog: Catalog) -> int:
    """The wiring member of a cable end: a switch's member index, or a server's NIC
    (``server * rails + rail``; the rail is the port's number when every port of the server
    ends in a distinct number below the NIC count, else the port's rank by name)."""
    if group.kind != "server":
        return member
    rails = int(catalog.get(group.model, "server").value("nics_per_server"))
    numbers = [re.search(r"(\d+)$", p) for p in ports]
    if (
        all(numbers)
        and len({int(m.group(1)) for m in numbers}) == len(ports)
        and all(int(m.group(1)) < rails for m in numbers)
    ):
        return member * rails + int(re.search(r"(\d+)$", port).group(1))
    return member * rails + ports.index(port)


def _pattern(
    a: DeviceGroup, b: DeviceGroup, ia: np.ndarray, ib: np.ndarray, catalog: Catalog
) -> LinkBundle | None:
    """The first pattern whose wiring is exactly the cables (ia[k], ib[k])."""
    rails = servers = 0
    n_a = a.count
    if a.kind == "server":
        rails, servers = int(catalog.get(a.model, "server").value("nics_per_server")), a.count
        n_a = a.count * rails
    n_b = b.count
    observed = _sorted_pairs(ia, ib)
    pairs = np.unique(observed, axis=0).shape[0]
    if len(ia) % pairs:
        return None
    per = len(ia) // pairs
    divisors = [d for d in range(1, n_b + 1) if n_b % d == 0]
    candidates = [("one-to-one", 1)]
    if a.kind == "server":
        candidates.append(("rail", 1))
    candidates += [("full", d) for d in divisors] + [("striped", d) for d in divisors]
    for pattern, blocks in candidates:
        bundle = LinkBundle("", a.id, b.id, pattern, links_per_pair=per, blocks=blocks)
        try:
            if (pattern == "one-to-one" and n_a > n_b) or (pattern == "rail" and n_b % rails):
                continue
            wired = wire_bundle(bundle, n_a, n_b, rails, servers)
        except (ValueError, ZeroDivisionError, IndexError):
            continue
        if wired.a.shape == ia.shape and np.array_equal(_sorted_pairs(wired.a, wired.b), observed):
            return bundle
    return None


def _sorted_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    pairs = np.stack([a.astype(np.int64), b.astype(np.int64)], axis=1)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
