"""An all-to-all over a regular fabric's GPUs, or a part of them, by kinds of flows and links.

An all-to-all over 16,384 GPUs has 268 million connections between servers: too many to
route one by one, let alone to give each a state. But on a fabric built of repeating
parts every GPU sees the fabric as every other does, and its destinations fall into a
handful of kinds (the GPUs behind its own leaf, its own rail elsewhere in its pod, another
pod, ...), each crossing the same kinds of links. With every flow spread evenly over its
equal-cost links (per-packet spraying), every link of a kind then carries alike, and the
transport's fluid model of the whole is that of one link of each kind with all its ports
and one flow class of each kind with all its flows (`engine.transport.lumping`).

The kinds come from colour refinement of the fabric (`engine.topology.symmetry`): GPUs of
one colour are sources alike; from one of them, its destinations by their colour as seen
from it. One representative connection of each kind is routed; its links name their kinds.
Two checks guard the premise: a second source of each colour (the last) and a second
destination of each kind must cross the same kinds of links with the same counts, or the
fabric is not regular enough and the caller is told why (a failed cable, say, makes the
fabric irregular and more colours, not a wrong answer). An all-to-all over a part of the
GPUs sets them apart in the colours first: the kinds are then those the part sees (more of
them where the part is aligned with nothing; exact against the pairs listed, in the tests).

Adaptive routing runs here as its balanced limit, every flow spread evenly over its
equal-cost links: what per-packet adaptive routing (InfiniBand's, Spectrum-X's) does to an
all-to-all's millions of flows. Per-flow ECMP hashing loads the links of a kind unevenly,
but the less the more flows it hashes: N flows over equal links leave them about
1/sqrt(N) apart. It runs at its balanced limit where every link it chooses among takes
`ECMP_MIN_FLOWS_PER_LINK` flows or more (1%; the 16,384-GPU all-to-all puts some 16,000 on
each leaf uplink, the 131,072-GPU one 131,000), with the spread left out said in a note,
and only where each switch hashes with its own seed: switches hashing alike polarize.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from engine.catalog.devices import Catalog
from engine.routing.router import RoutedFlows, Router
from engine.topology.expand import Fabric
from engine.topology.symmetry import Colouring, fabric_colours, gpu_nodes, relative_colours
from engine.transport.from_scenario import scenario_network
from engine.transport.lumping import Lumped, lump
from engine.transport.params import TransportConfig
from engine.transport.spray import bundle_sprayed

MAX_SOURCE_KINDS = 32  # GPU colours: beyond this the fabric is not regular enough to gain
LUMPED_MODES = ("spray", "adaptive", "ecmp")
# Classes per kind of flows where DCQCN's reaction point draws (engine.transport.lumping).
DRAWS = 64
# Per-flow ECMP runs by kinds only where each link it hashes onto takes this many flows or
# more: N flows hashed at random over equal links leave them about 1/sqrt(N) apart, 1% here
# (an assumption of this model: the bound a reader may take as "even").
ECMP_MIN_FLOWS_PER_LINK = 10_000


@dataclass(frozen=True)
class LumpedAllToAll:
    """A lumped all-to-all ready to run.

    `routed` holds the representative connections (sprayed sets as one link each, as
    `engine.transport.spray` bundles them); `connection_weight` the connections of the
    whole each stands for (0 for the ones routed only to check the premise). `lumped` is the
    network to run; `rep_link` per lumped link one fabric link of its kind, `kind_links`
    every fabric link of its kind (for per-bundle figures); `pairs` the connections of the
    whole all-to-all.
    """

    routed: RoutedFlows
    connection_weight: np.ndarray
    lumped: Lumped
    rep_link: np.ndarray
    kind_links: tuple[np.ndarray, ...]
    pairs: int
    notes: list[str] = field(default_factory=list)


def lumped_all_to_all(
    fabric: Fabric,
    bytes_per_flow: float,
    catalog: Catalog,
    draws: int = 1,
    capacity_Bps: np.ndarray | None = None,
    router: Router | None = None,
    ranks: np.ndarray | None = None,
) -> LumpedAllToAll | str:
    """The all-to-all over the GPUs `ranks` of `fabric` (every GPU when None),
    `bytes_per_flow` per pair on different servers, as kinds of flows and links (each kind
    of flows as `draws` classes, `DRAWS` where DCQCN's reaction point draws; links of
    `capacity_Bps` when given, else the fabric's); or a sentence saying why the fabric, the
    ranks or the routing do not allow it."""
    policy = fabric.scenario.routing
    mode = policy.mode
    if mode not in LUMPED_MODES:
        return f"routing.mode {mode} does not spread flows over equal-cost links"
    if mode == "ecmp" and policy.hash_scope != "switch":
        return (
            f"routing.hash_scope {policy.hash_scope} hashes alike on many switches, so flows "
            "that collide once collide again (polarization): links of one kind load unevenly"
        )
    every = ranks is None or np.unique(ranks).size == fabric.n_gpus
    ranks = np.arange(fabric.n_gpus) if ranks is None else np.unique(ranks)
    if not np.all(fabric.gpu_line_rate[ranks] > 0):
        return "some of its GPUs have no NIC of their own"
    colours = fabric_colours(fabric, None if every else ranks)
    reps = _representatives(fabric, colours, ranks)
    if isinstance(reps, str):
        return reps
    src, dst, weight, role = reps
    pairs = _cross_server_pairs(fabric, ranks)
    if sum(weight) != pairs:
        raise RuntimeError(f"the kinds count {sum(weight)} connections of {pairs}")
    spread = replace(policy, mode="spray", flows_per_connection=1)
    routed = (router or Router(fabric)).route(
        np.asarray(src, dtype=np.int64),
        np.asarray(dst, dtype=np.int64),
        spread,
        connection_bytes=np.full(len(src), float(bytes_per_flow)),
    )
    if routed.unreachable.size:
        return f"{routed.unreachable.size} of its GPU pairs cannot reach each other"
    capacity = fabric.link_capacity if capacity_Bps is None else capacity_Bps
    bundled = bundle_sprayed(routed, fabric, capacity)
    if isinstance(bundled, str):
        return bundled
    routed, ports = bundled.routed, bundled.ports
    why = _check_kinds(fabric, routed, colours, role)
    if why:
        return why
    network = scenario_network(fabric, routed, catalog, capacity, ports=ports)
    mask = fabric.network_link_mask()
    used = np.unique(routed.entry_link[mask[routed.entry_link]])
    link_kind = colours.link[used]
    kind_ports = np.bincount(colours.link, minlength=int(colours.link.max()) + 1)
    conn_weight = np.asarray(weight, dtype=np.float64)
    lumped = lump(network, link_kind, kind_ports, conn_weight[routed.connection], draws)
    rep_link = used[np.unique(lumped.link_of, return_index=True)[1]]
    kind_links = tuple(np.flatnonzero(colours.link == k) for k in lumped.kind_of_link.tolist())
    notes = [
        f"all-to-all over {ranks.size:,} GPUs ({pairs:,} connections between servers) run "
        f"as {lumped.network.classes.n_classes // draws} kinds of flows over "
        f"{lumped.network.links.n_links} kinds of links (the fabric's symmetry, "
        "engine.topology.symmetry)"
        + (f", each kind as {draws} classes that draw DCQCN's cuts apart" if draws > 1 else "")
    ]
    if mode == "adaptive":
        notes.append(
            "adaptive routing taken at its balanced limit: each flow spread evenly over its "
            "equal-cost links, as per-packet adaptive routing spreads an all-to-all"
        )
    if mode == "ecmp":
        per_link = _hashed_flows_per_link(lumped, policy.flows_per_connection)
        if per_link < ECMP_MIN_FLOWS_PER_LINK:
            return (
                f"per-flow ECMP hashes about {per_link:,.0f} flows onto each link of its "
                f"busiest choice (under {ECMP_MIN_FLOWS_PER_LINK:,}), which leaves links of "
                f"one kind about {100 / np.sqrt(per_link):.1f}% apart: not even enough"
            )
        notes.append(
            f"per-flow ECMP taken at its balanced limit, an upper bound: at least "
            f"{per_link:,.0f} flows hashed onto each link it chooses among leave links of one "
            f"kind about {100 / np.sqrt(per_link):.2f}% apart (1/sqrt(N)), left out; each "
            "switch hashes with its own seed (routing.hash_scope switch), so no polarization"
        )
    return LumpedAllToAll(routed, conn_weight, lumped, rep_link, kind_links, pairs, notes)


def draws_per_kind(config: TransportConfig) -> int:
    """Classes per kind of flows a run under `config` needs: `DRAWS` where DCQCN's reaction
    point draws each class's cuts, else one (a kind's classes would move alike)."""
    return DRAWS if config.reaction_point else 1


def _representatives(
    fabric: Fabric, colours: Colouring, ranks: np.ndarray
) -> tuple[list, list, list, list] | str:
    """The connections to route: from the first rank of each GPU colour, one to each kind
    of its destinations among the ranks, weighted by the connections of the whole they stand
    for; and, weighed 0, the checks (the kind's last destination, the colour's last source);
    with each its role (colour, check, kind's size, second destination) for `_check_kinds`.
    Or why not."""
    gpus = gpu_nodes(fabric)
    colour_of_rank = colours.node[gpus[ranks]]
    kinds = np.unique(colour_of_rank)
    if kinds.size > MAX_SOURCE_KINDS:
        return f"its GPUs fall into {kinds.size} kinds (over {MAX_SOURCE_KINDS}): it is not regular"
    src, dst, weight, role = [], [], [], []
    for kind in kinds.tolist():
        members = ranks[colour_of_rank == kind]
        sources = [int(members[0])] + ([int(members[-1])] if members.size > 1 else [])
        for check, s in enumerate(sources):
            d_first, d_last, count = _destinations(fabric, colours, ranks, s)
            for d0, d1, n in zip(d_first, d_last, count, strict=True):
                src.append(s)
                dst.append(d0)
                weight.append(0 if check else members.size * n)
                role.append((kind, check, n, False))
                if d1 != d0:  # a second destination of the kind, to check the first
                    src.append(s)
                    dst.append(d1)
                    weight.append(0)
                    role.append((kind, check, n, True))
    return src, dst, weight, role


def _hashed_flows_per_link(lumped: Lumped, flows_per_connection: int) -> float:
    """The fewest flows per link on any kind of links that flows choose among (a hop a
    flow spreads over several ports of, where ECMP hashes it onto one); inf if none."""
    net = lumped.network
    links = net.links
    cl = net.classes
    entry_class = np.repeat(np.arange(cl.n_classes), np.diff(cl.ptr))
    through = np.bincount(cl.links, weights=cl.multiplicity[entry_class], minlength=links.n_links)
    hashed = links.flow_ports > 1
    if not hashed.any():
        return float("inf")
    return float(np.min(through[hashed] * max(1, flows_per_connection) / links.ports[hashed]))


def _destinations(
    fabric: Fabric, colours: Colouring, ranks: np.ndarray, s: int
) -> tuple[list[int], list[int], list[int]]:
    """From GPU `s`: per kind of destination among `ranks` on another server (its colour as
    seen from `s`), the first and the last GPU of the kind and how many there are."""
    gpus = gpu_nodes(fabric)
    seen = relative_colours(fabric, colours, int(gpus[s])).node[gpus]
    other = ranks[fabric.gpu_server[ranks] != fabric.gpu_server[s]]
    _, first, count = np.unique(seen[other], return_index=True, return_counts=True)
    last = other.size - 1 - np.unique(seen[other][::-1], return_index=True)[1]
    return other[first].tolist(), other[last].tolist(), count.tolist()


def _cross_server_pairs(fabric: Fabric, ranks: np.ndarray) -> int:
    """Ordered pairs of `ranks` on different servers."""
    per_server = np.bincount(fabric.gpu_server[ranks]).astype(np.int64)
    return int(ranks.size**2 - np.sum(per_server**2))


def _check_kinds(fabric: Fabric, routed: RoutedFlows, colours: Colouring, role: list[tuple]) -> str:
    """Why a check connection crosses other kinds of links than its representative (a
    second destination of a kind; a second source's kinds and counts); empty if none does."""
    mask = fabric.network_link_mask()
    paths = []
    for f in range(routed.n_flows):
        hops = routed.entry_link[routed.flow_ptr[f] : routed.flow_ptr[f + 1]]
        paths.append(tuple(colours.link[hops[mask[hops]]].tolist()))
    by_conn = {int(routed.connection[f]): paths[f] for f in range(routed.n_flows)}
    seen: dict[tuple, list] = {}
    last_main = {}
    for i, (kind, check, n, second_dst) in enumerate(role):
        if second_dst:
            if by_conn[i] != last_main[(kind, check)]:
                return (
                    "two destinations alike as seen from one GPU are reached over "
                    "different kinds of links: the fabric is not regular"
                )
            continue
        last_main[(kind, check)] = by_conn[i]
        seen.setdefault((kind, check), []).append((by_conn[i], n))
    for (kind, check), got in seen.items():
        if check and sorted(got) != sorted(seen[(kind, 0)]):
            return (
                "two GPUs alike in the fabric see their destinations differently: it is not regular"
            )
    return ""
