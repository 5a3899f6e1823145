"""The ns-3 RDMA (HPCC) topology and flow files, as that code base and SimAI read them.

Topology (``topology.txt``): the first line holds the node count, the switch count and the
link count; the second the ids of the switch nodes; then one line per link, ``src dst rate
delay error_rate`` (rate like ``400Gbps``, delay like ``0.0005ms``). SimAI's variant widens the
first line to ``nodes gpus_per_server nvswitch_count switch_count links gpu_type`` and lists
NVLink switches before fabric switches on the second; `read_topology` reads both.

Flows (``flow.txt``): the flow count, then one line per flow ``src dst priority dport size
start_time`` (bytes, seconds), in start-time order because the simulator reads them one
after another as simulated time reaches each start.

Format source: alibaba-edu/High-Precision-Congestion-Control, simulation/scratch/third.cc
(the reading loops), and aliyun/SimAI (docs/formats.md has the citations).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.formats.graph import HOST, NVSWITCH, FabricGraph, Flow
from engine.formats.lines import (
    content_lines,
    format_delay,
    format_rate,
    parse_delay_ns,
    parse_rate_gbps,
    real,
    refuse,
    whole,
)

PRIORITY_GROUP = 3  # the data priority group of HPCC's example flow files
DESTINATION_PORT = 100  # the destination queue-pair port of HPCC's example flow files
MAX_FLOW_BYTES = 2**32 - 1  # HPCC reads the size into a 32-bit unsigned field


@dataclass(frozen=True)
class Ns3Link:
    """One link line: two node ids, rate (Gb/s), delay (ns) and packet error rate."""

    src: int
    dst: int
    rate_gbps: float
    delay_ns: float
    error_rate: float


@dataclass(frozen=True)
class Ns3Topology:
    """What a topology file says: node count, switch ids, links; `gpus_per_server`,
    `nvswitches` and `gpu_type` only in the SimAI variant (else 0, 0, "")."""

    nodes: int
    switch_ids: tuple[int, ...]
    links: tuple[Ns3Link, ...]
    gpus_per_server: int = 0
    nvswitches: int = 0
    gpu_type: str = ""


def write_topology(graph: FabricGraph, simai: bool = False) -> str:
    """The topology file of `graph` (SimAI's wider first line with `simai`)."""
    switches = graph.switch_ids
    nvswitches = sum(1 for n in graph.nodes if n.kind == NVSWITCH)
    if simai:
        per = _gpus_per_server(graph)
        found = re.search(r"[a-z]\d{2,3}", graph.nodes[0].model) if graph.nodes else None
        gpu_type = found.group(0).upper() if found else "GPU"
        head = f"{len(graph.nodes)} {per} {nvswitches} {len(switches) - nvswitches} {len(graph.cables)} {gpu_type}"
    else:
        head = f"{len(graph.nodes)} {len(switches)} {len(graph.cables)}"
    rows = [head, " ".join(str(i) for i in switches)]
    loss = f"{graph.packet_loss_rate:.12g}"
    rows += [
        f"{c.a} {c.b} {format_rate(c.rate_gbps)} {format_delay(c.latency_ns)} {loss}"
        for c in graph.cables
    ]
    return "\n".join(rows) + "\n"


def _gpus_per_server(graph: FabricGraph) -> int:
    counts: dict[int, int] = {}
    for n in graph.nodes:
        if n.kind == HOST:
            counts[n.server] = counts.get(n.server, 0) + 1
    return max(counts.values(), default=0)


def read_topology(text: str, source: str = "topology") -> Ns3Topology:
    """A topology file (HPCC or SimAI first line); refusals name `source` and the line."""
    lines = list(content_lines(text))
    if len(lines) < 1:
        raise refuse(source, None, "empty: expected 'nodes switches links' on the first line")
    number, head = lines[0]
    if len(head) == 3:
        nodes, switches, links = (
            whole(v, source, number, w) for v, w in zip(head, _HEAD, strict=True)
        )
        per = nvswitches = 0
        gpu_type = ""
    elif len(head) == 6:
        nodes = whole(head[0], source, number, "the node count")
        per = whole(head[1], source, number, "the GPUs per server")
        nvswitches = whole(head[2], source, number, "the NVLink switch count")
        switches = nvswitches + whole(head[3], source, number, "the switch count")
        links = whole(head[4], source, number, "the link count")
        gpu_type = head[5]
    else:
        raise refuse(
            source,
            number,
            f"the first line has {len(head)} fields; expected 3 (nodes switches links) "
            "or SimAI's 6 (nodes gpus_per_server nvswitches switches links gpu_type)",
        )
    if switches == 0:
        ids: tuple[int, ...] = ()
        body = lines[1:]
    else:
        if len(lines) < 2:
            raise refuse(source, None, f"missing the line of {switches} switch ids")
        number, fields = lines[1]
        ids = tuple(whole(v, source, number, "a switch id") for v in fields)
        body = lines[2:]
        if len(ids) != switches:
            raise refuse(source, number, f"{len(ids)} switch ids; the first line says {switches}")
    for i in ids:
        if i >= nodes:
            raise refuse(source, lines[1][0], f"switch id {i} is not below the node count {nodes}")
    if len(body) != links:
        where = body[len(body) - 1][0] if body and len(body) > links else None
        raise refuse(source, where, f"{len(body)} link lines; the first line says {links}")
    return Ns3Topology(
        nodes, ids, tuple(_link(f, source, n, nodes) for n, f in body), per, nvswitches, gpu_type
    )


_HEAD = ("the node count", "the switch count", "the link count")


def _link(fields: list[str], source: str, number: int, nodes: int) -> Ns3Link:
    if len(fields) != 5:
        raise refuse(
            source,
            number,
            f"a link line has 5 fields (src dst rate delay error_rate), not {len(fields)}",
        )
    a = whole(fields[0], source, number, "the source node")
    b = whole(fields[1], source, number, "the destination node")
    for node in (a, b):
        if node >= nodes:
            raise refuse(source, number, f"node {node} is not below the node count {nodes}")
    error = real(fields[4], source, number, "the error rate")
    if error > 1:
        raise refuse(source, number, f"the error rate {error:g} is above 1")
    return Ns3Link(
        a,
        b,
        parse_rate_gbps(fields[2], source, number),
        parse_delay_ns(fields[3], source, number),
        error,
    )


def write_flows(flows: list[Flow]) -> str:
    """The flow file of `flows`, sorted by start time as the simulator needs."""
    ordered = sorted(flows, key=lambda f: f.start_s)
    rows = [str(len(ordered))]
    for f in ordered:
        if f.size_bytes > MAX_FLOW_BYTES:
            raise refuse(
                "flows",
                None,
                f"a flow of {f.size_bytes:,} bytes ({f.src}->{f.dst}) does not fit the 32-bit "
                "size field ns-3 RDMA reads; use a smaller message size",
            )
        rows.append(
            f"{f.src} {f.dst} {PRIORITY_GROUP} {DESTINATION_PORT} {f.size_bytes} {f.start_s:.12g}"
        )
    return "\n".join(rows) + "\n"


def read_flows(text: str, source: str = "flows", hosts: int | None = None) -> list[Flow]:
    """A flow file; with `hosts`, a flow from or to a node at or past it is refused."""
    lines = list(content_lines(text))
    if not lines:
        raise refuse(source, None, "empty: expected the flow count on the first line")
    number, head = lines[0]
    if len(head) != 1:
        raise refuse(source, number, "the first line holds the flow count alone")
    count = whole(head[0], source, number, "the flow count")
    if len(lines) - 1 != count:
        raise refuse(source, None, f"{len(lines) - 1} flow lines; the first line says {count}")
    flows, last = [], 0.0
    for number, fields in lines[1:]:
        if len(fields) != 6:
            raise refuse(
                source,
                number,
                f"a flow line has 6 fields (src dst priority dport size start_time), not {len(fields)}",
            )
        src = whole(fields[0], source, number, "the source")
        dst = whole(fields[1], source, number, "the destination")
        whole(fields[2], source, number, "the priority group")
        whole(fields[3], source, number, "the destination port")
        size = whole(fields[4], source, number, "the size", minimum=1)
        start = real(fields[5], source, number, "the start time")
        if hosts is not None and max(src, dst) >= hosts:
            raise refuse(source, number, f"node {max(src, dst)} is not one of the {hosts} hosts")
        if start < last:
            raise refuse(source, number, f"start time {start:g} s is before the previous flow's")
        last = start
        flows.append(Flow(src, dst, size, start))
    return flows
