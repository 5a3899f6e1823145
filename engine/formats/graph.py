"""The expanded fabric as a plain graph of named nodes and cables, the common ground of
every exporter: hosts (GPUs, each owning the NIC of its rail), NVLink switches and fabric
switches, and one undirected cable per physical link with its rate and one-way latency.

The packet-level simulators number their nodes from 0 with the hosts first; the fabric's
own node order already is that (GPUs, then NVLink switches, then switches), so a node's id
here is its index in the `Fabric`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from engine.flows.traffic import permutation, traffic_matrix
from engine.topology.expand import NODE_GPU, NODE_NVSWITCH, NVLINK_BUNDLE, Fabric

HOST, NVSWITCH, SWITCH = "host", "nvswitch", "switch"
_KIND_NAMES = {NODE_GPU: HOST, NODE_NVSWITCH: NVSWITCH}


@dataclass(frozen=True)
class Node:
    """One node: its kind, the scenario group and member it expands from, and for a host
    the server it sits in and its index there (its rail)."""

    id: int
    kind: str
    name: str
    group: str
    member: int
    model: str
    tier: str
    server: int = -1
    local: int = -1


@dataclass(frozen=True)
class Cable:
    """One full-duplex cable (or NVLink attachment) between nodes `a` (lower tier) and `b`.

    `rate_gbps` is the line rate (before header overhead); `latency_ns` the one-way latency
    of the upward direction as the engine models it (propagation plus the receiving device's
    forwarding or NIC latency); `bundle` the scenario bundle, ``nvlink`` for NVLink.
    """

    a: int
    b: int
    rate_gbps: float
    latency_ns: float
    bundle: str
    length_m: float = 0.0
    cable: str = ""


@dataclass(frozen=True)
class FabricGraph:
    """Nodes and cables of an expanded scenario, with its name and technology."""

    name: str
    technology: str
    nodes: tuple[Node, ...]
    cables: tuple[Cable, ...]
    packet_loss_rate: float = 0.0
    devices: str = ""  # the scenario's own devices as JSON (GraphML carries them), or ""

    @property
    def hosts(self) -> list[Node]:
        """The endpoint nodes (GPUs), numbered 0 .. n-1."""
        return [n for n in self.nodes if n.kind == HOST]

    @property
    def switch_ids(self) -> list[int]:
        """Ids of every forwarding node: NVLink switches and fabric switches."""
        return [n.id for n in self.nodes if n.kind != HOST]


@dataclass(frozen=True)
class Flow:
    """One transfer: source host, destination host, bytes, start time in seconds."""

    src: int
    dst: int
    size_bytes: int
    start_s: float = 0.0


def fabric_graph(fabric: Fabric) -> FabricGraph:
    """The `FabricGraph` of an expanded fabric (working cables only: failed ones are left out)."""
    s = fabric.scenario
    nodes = []
    for i in range(fabric.n_nodes):
        g = s.groups[int(fabric.node_group[i])]
        kind = _KIND_NAMES.get(int(fabric.node_kind[i]), SWITCH)
        member = int(fabric.node_member[i])
        if kind == HOST:
            server, local = int(fabric.gpu_server[i]), int(fabric.gpu_local[i])
            name = f"{g.id}[{member}]"
        elif kind == NVSWITCH:
            server, local = member, -1
            name = f"nvswitch[{member}]"
        else:
            server, local = -1, -1
            name = f"{g.id}[{member}]"
        nodes.append(Node(i, kind, name, g.id, member, g.model, g.tier, server, local))
    up = np.flatnonzero(fabric.link_upward)
    cables = []
    for link in up:
        bundle = int(fabric.link_bundle[link])
        length, cable = 0.0, ""
        if bundle == NVLINK_BUNDLE:
            rate, name = float(fabric.link_capacity[link]) * 8 / 1e9, "nvlink"
        else:
            b = s.bundles[bundle]
            rate, name, length, cable = float(b.speed_gbps), b.id, b.length_m, b.cable
        cables.append(
            Cable(
                int(fabric.link_src[link]),
                int(fabric.link_dst[link]),
                rate,
                float(fabric.link_latency[link]) * 1e9,
                name,
                length,
                cable,
            )
        )
    return FabricGraph(
        name=s.metadata.name,
        technology=s.fabric.technology,
        nodes=tuple(nodes),
        cables=tuple(cables),
        packet_loss_rate=float(s.fabric.packet_loss_rate or 0.0),
        devices=json.dumps([d.entry() for d in s.devices]) if s.devices else "",
    )


def workload_flows(fabric: Fabric) -> list[Flow]:
    """The traffic written beside the topology: the scenario's own traffic matrix when its
    workload is one, else its permutation pattern (workload seed), `message_bytes` per GPU,
    all starting at 0."""
    w = fabric.scenario.workload
    if w.kind == "traffic" and w.matrix:
        src, dst, nbytes, start = traffic_matrix(fabric)
        return [
            Flow(int(a), int(b), round(n), float(t))
            for a, b, n, t in zip(src, dst, nbytes, start, strict=True)
        ]
    src, dst = permutation(fabric, w.seed)
    size = round(w.message_bytes)
    return [Flow(int(a), int(b), size) for a, b in zip(src, dst, strict=True) if a != b]
