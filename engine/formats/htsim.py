"""htsim connection matrices (``.cm``), as csg-htsim's datacenter experiments load them.

A header of ``Nodes N`` and ``Connections M`` (optionally ``Triggers`` and ``Failures``
counts), then one line per connection: ``src->dst`` followed by keyword/value pairs, ``id``
(a flow id above 0), ``start`` (picoseconds), ``size`` (bytes) and optionally ``prio``. Lines
starting with ``#`` are comments. A connection started by a trigger (``trigger``,
``send_done_trigger``, ``recv_done_trigger``) and ``trigger``/``failure`` lines belong to
collective DAGs and failure runs: the reader refuses them by name rather than guess.

Format source: Broadcom/csg-htsim, sim/datacenter/connection_matrix.cpp (``load``) and the
generators in sim/datacenter/connection_matrices/ (docs/formats.md).
"""

from __future__ import annotations

from engine.formats.graph import FabricGraph, Flow
from engine.formats.lines import content_lines, refuse, whole

PS_PER_S = 1e12
MAX_SIZE_BYTES = 2**31 - 1  # htsim parses the size with stoi into an int
_UNSUPPORTED = ("trigger", "send_done_trigger", "recv_done_trigger", "addon")


def write_cm(flows: list[Flow], hosts: int, graph: FabricGraph | None = None) -> str:
    """The connection matrix of `flows` among `hosts` nodes; with `graph`, comment lines
    saying what fabric it was written for (htsim builds its own topology from flags)."""
    rows = []
    if graph is not None:
        rates = sorted({c.rate_gbps for c in graph.cables if c.bundle != "nvlink"})
        shown = ", ".join(f"{r:g}" for r in rates)
        rows.append(f"# FabricLab: {graph.name}; {hosts} hosts; fabric link rates {shown} Gb/s")
    rows += [f"Nodes {hosts}", f"Connections {len(flows)}"]
    for i, f in enumerate(flows, start=1):
        if f.size_bytes > MAX_SIZE_BYTES:
            raise refuse(
                "connection matrix",
                None,
                f"a flow of {f.size_bytes:,} bytes ({f.src}->{f.dst}) is past htsim's largest "
                f"size ({MAX_SIZE_BYTES:,} bytes, a 32-bit int); use a smaller message size",
            )
        start_ps = round(f.start_s * PS_PER_S)
        rows.append(f"{f.src}->{f.dst} id {i} start {start_ps} size {f.size_bytes}")
    return "\n".join(rows) + "\n"


def read_cm(text: str, source: str = "connection matrix") -> tuple[int, list[Flow]]:
    """(node count, flows) of a connection matrix; refusals name `source` and the line."""
    nodes = connections = None
    flows: list[Flow] = []
    ids: set[int] = set()
    for number, fields in content_lines(text):
        head = fields[0]
        if head in ("Nodes", "Connections", "Triggers", "Failures"):
            if flows:
                raise refuse(source, number, f"{head} after the first connection")
            if len(fields) != 2:
                raise refuse(source, number, f"expected '{head} COUNT'")
            value = whole(fields[1], source, number, f"the {head.lower()} count")
            if head == "Nodes":
                nodes = value
            elif head == "Connections":
                connections = value
            elif value:
                raise refuse(
                    source, number, f"{head.lower()} are not read (only plain connections)"
                )
            continue
        if "->" not in head:
            raise refuse(
                source,
                number,
                f"unknown line {head!r}; expected 'SRC->DST id ... start ... size ...'",
            )
        if nodes is None or connections is None:
            raise refuse(
                source, number, "a connection before the 'Nodes N' and 'Connections M' lines"
            )
        flows.append(_connection(fields, source, number, nodes, ids))
    if nodes is None or connections is None:
        raise refuse(source, None, "missing the 'Nodes N' or 'Connections M' line")
    if len(flows) != connections:
        raise refuse(source, None, f"{len(flows)} connections; the header says {connections}")
    return nodes, flows


def _connection(fields: list[str], source: str, number: int, nodes: int, ids: set[int]) -> Flow:
    src_text, _, dst_text = fields[0].partition("->")
    src = whole(src_text, source, number, "the source")
    dst = whole(dst_text, source, number, "the destination")
    if max(src, dst) >= nodes:
        raise refuse(source, number, f"node {max(src, dst)} is not below Nodes {nodes}")
    values: dict[str, str] = {}
    rest = fields[1:]
    if len(rest) % 2:
        raise refuse(
            source, number, "keywords and values do not pair up (e.g. 'start 0 size 2000000')"
        )
    for key, value in zip(rest[::2], rest[1::2], strict=True):
        if key in _UNSUPPORTED:
            raise refuse(source, number, f"'{key}' (a triggered, DAG connection) is not read")
        if key not in ("id", "start", "size", "prio"):
            raise refuse(source, number, f"unknown keyword {key!r}")
        values[key] = value
    if "start" not in values:
        raise refuse(source, number, "a connection without a start time")
    if "size" not in values:
        raise refuse(source, number, "a connection without a size (bytes)")
    if "id" in values:
        flow_id = whole(values["id"], source, number, "the flow id", minimum=1)
        if flow_id in ids:
            raise refuse(source, number, f"flow id {flow_id} is used twice")
        ids.add(flow_id)
    try:
        start_ps = float(values["start"])
    except ValueError:
        raise refuse(source, number, f"the start {values['start']!r} is not a number") from None
    if not start_ps >= 0:
        raise refuse(source, number, "the start time must be at least 0")
    size = whole(values["size"], source, number, "the size", minimum=0)
    return Flow(src, dst, size, start_ps / PS_PER_S)
