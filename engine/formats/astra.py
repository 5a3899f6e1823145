"""ASTRA-sim's network configuration for its analytical back end (YAML).

ASTRA-sim's analytical network is a stack of dimensions, each a Ring, FullyConnected or
Switch building block, with per dimension an NPU count, a link bandwidth (GB/s, per link
and direction) and a link latency (ns)::

    topology: [ Switch, Switch ]
    npus_count: [ 8, 16 ]
    bandwidth: [ 450.0, 50.0 ]  # GB/s
    latency: [ 150.0, 1200.0 ]  # ns

A FabricLab fabric maps to two Switch dimensions: the server's NVLink domain (GPUs per
server, the NVLink bandwidth of one GPU) and the scale-out network (servers, one GPU's NIC
rate). A Switch dimension costs two link latencies between any two NPUs, so each dimension's
latency is half the worst one-way path between two of its NPUs. The analytical back end
turns GB/s into bytes with 1 GB = 2^30 bytes, so bandwidths are written that way.
Everything else of the fabric (tiers, oversubscription, rails, failures) is lost: the
analytical model has no such shapes.

Format source: astra-sim/astra-network-analytical, example_network.yml and the
congestion-unaware Switch topology (docs/formats.md).
"""

from __future__ import annotations

import heapq
import re
from collections import defaultdict

from engine.formats.graph import HOST, FabricGraph
from engine.formats.lines import refuse

GIB = 2**30
KEYS = ("topology", "npus_count", "bandwidth", "latency")
BLOCKS = ("Ring", "FullyConnected", "Switch")


def network_config(graph: FabricGraph, gpu_rate: float) -> dict[str, list]:
    """The dimensions of `graph`; `gpu_rate` is one GPU's network rate in bytes/s (after
    header overhead). A fabric whose servers differ in GPU count is refused."""
    hosts = graph.hosts
    per_server: dict[int, int] = defaultdict(int)
    for h in hosts:
        per_server[h.server] += 1
    sizes = set(per_server.values())
    if len(sizes) != 1:
        raise refuse(
            "astra",
            None,
            f"servers hold {sorted(sizes)} GPUs; ASTRA-sim's dimensions need one size",
        )
    per = sizes.pop()
    nvlink = [c for c in graph.cables if c.bundle == "nvlink"]
    topology, npus, bandwidth, latency = [], [], [], []
    if per > 1 and nvlink:
        topology.append("Switch")
        npus.append(per)
        bandwidth.append(_round(max(c.rate_gbps for c in nvlink) * 1e9 / 8 / GIB))
        latency.append(_round(max(c.latency_ns for c in nvlink)))
    servers = len(per_server)
    if servers > 1:
        topology.append("Switch")
        npus.append(servers)
        bandwidth.append(_round(gpu_rate / GIB))
        latency.append(_round(_widest_path_ns(graph) / 2))
    if not topology:
        raise refuse("astra", None, "one GPU alone: no network dimension to write")
    return {"topology": topology, "npus_count": npus, "bandwidth": bandwidth, "latency": latency}


def _round(value: float) -> float:
    return float(f"{value:.9g}")


def _widest_path_ns(graph: FabricGraph) -> float:
    """The longest of the shortest one-way network paths from the first GPU to a GPU of
    another server (hosts end paths, they do not forward)."""
    adjacency: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for c in graph.cables:
        if c.bundle != "nvlink":
            adjacency[c.a].append((c.b, c.latency_ns))
            adjacency[c.b].append((c.a, c.latency_ns))
    nodes = graph.nodes
    first = graph.hosts[0]
    best = {first.id: 0.0}
    queue = [(0.0, first.id)]
    while queue:
        dist, node = heapq.heappop(queue)
        if dist > best[node] or (node != first.id and nodes[node].kind == HOST):
            continue
        for nxt, lat in adjacency[node]:
            if dist + lat < best.get(nxt, float("inf")):
                best[nxt] = dist + lat
                heapq.heappush(queue, (dist + lat, nxt))
    far = [d for n, d in best.items() if nodes[n].kind == HOST and nodes[n].server != first.server]
    return max(far, default=0.0)


def write_network_yaml(config: dict[str, list], graph: FabricGraph | None = None) -> str:
    """The YAML text of `config` (one flow-style list per key, as ASTRA-sim's examples)."""
    rows = []
    if graph is not None:
        rows.append(f"# FabricLab: {graph.name}, {len(graph.hosts)} NPUs")
    notes = {
        "bandwidth": "  # GB/s (1 GB = 2^30 bytes) per link and direction",
        "latency": "  # ns",
    }
    for key in KEYS:
        items = ", ".join(f"{v:.9g}" if isinstance(v, float) else str(v) for v in config[key])
        rows.append(f"{key}: [ {items} ]{notes.get(key, '')}")
    return "\n".join(rows) + "\n"


_LINE = re.compile(r"^([A-Za-z_]+)\s*:\s*\[(.*)\]\s*$")


def read_network_yaml(text: str, source: str = "network.yml") -> dict[str, list]:
    """The dimensions of an analytical network YAML (flow-style lists, as written above)."""
    found: dict[str, list] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _LINE.match(line)
        if match is None:
            raise refuse(source, number, f"expected 'key: [ v1, v2 ]', got {line!r}")
        key, body = match.group(1), match.group(2)
        items = [v.strip() for v in body.split(",") if v.strip()]
        if key == "topology":
            bad = [v for v in items if v not in BLOCKS]
            if bad:
                raise refuse(
                    source, number, f"unknown building block {bad[0]!r}; known: {', '.join(BLOCKS)}"
                )
            found[key] = items
        elif key in KEYS:
            try:
                values = [float(v) for v in items]
            except ValueError:
                raise refuse(source, number, f"{key} holds a value that is not a number") from None
            if key == "npus_count":
                if any(v < 1 or not v.is_integer() for v in values):
                    raise refuse(source, number, "npus_count must hold whole numbers of at least 1")
                found[key] = [int(v) for v in values]
            else:
                found[key] = values
        # other keys (e.g. the congestion-aware back end's extras) are kept out, not refused
    missing = [k for k in KEYS if k not in found]
    if missing:
        raise refuse(source, None, f"missing {', '.join(missing)}")
    counts = {len(found[k]) for k in KEYS}
    if len(counts) != 1:
        raise refuse(source, None, "topology, npus_count, bandwidth and latency differ in length")
    return found
