"""htsim connection matrices (``.cm``), as csg-htsim's datacenter experiments load them.

A header of ``Nodes N`` and ``Connections M`` (and ``Triggers T`` when there are triggers),
then one line per connection: ``src->dst`` followed by keyword/value pairs, ``id`` (a flow
id above 0), ``start`` (picoseconds) or ``trigger`` (started by a trigger), ``size``
(bytes), and optionally ``prio``, ``send_done_trigger`` and ``recv_done_trigger`` (the
trigger a flow fires when it has sent or been received). A trigger line, ``trigger id K
barrier count C`` (or ``oneshot``, ``multishot``), defines one; a barrier fires after ``C``
activations. Lines starting with ``#`` are comments.

`write_cm` writes flows that start at given times; `write_dag` writes steps of flows, each
step started by a barrier over the step before (a collective as the engine schedules it).
`read_cm` reads plain matrices (a traffic matrix) and refuses triggers by name;
`read_cm_dag` reads both and `dag_steps` rebuilds the steps of a written DAG.

Format source: Broadcom/csg-htsim, sim/datacenter/connection_matrix.cpp (``load``) and the
generators in sim/datacenter/connection_matrices/ (docs/formats.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.formats.graph import FabricGraph, Flow
from engine.formats.lines import content_lines, refuse, whole

PS_PER_S = 1e12
MAX_SIZE_BYTES = 2**31 - 1  # htsim parses the size with stoi into an int
TRIGGER_KINDS = ("oneshot", "multishot", "barrier")
_FLOW_KEYS = ("id", "start", "size", "prio", "trigger", "send_done_trigger", "recv_done_trigger")


@dataclass(frozen=True)
class Connection:
    """One connection line: its flow (start 0 when triggered), id, and triggers (0: none)."""

    flow: Flow
    flow_id: int = 0
    trigger: int = 0
    send_done: int = 0
    recv_done: int = 0


@dataclass
class Matrix:
    """A read connection matrix: node count, connections, triggers (id -> kind, count)."""

    nodes: int
    connections: list[Connection] = field(default_factory=list)
    triggers: dict[int, tuple[str, int]] = field(default_factory=dict)


def _header(hosts: int, connections: int, graph: FabricGraph | None, note: str) -> list[str]:
    rows = []
    if graph is not None:
        rates = sorted({c.rate_gbps for c in graph.cables if c.bundle != "nvlink"})
        shown = ", ".join(f"{r:g}" for r in rates)
        rows.append(f"# FabricLab: {graph.name}; {hosts} hosts; fabric link rates {shown} Gb/s")
    if note:
        rows.append(f"# {note}")
    return [*rows, f"Nodes {hosts}", f"Connections {connections}"]


def _size(f: Flow) -> int:
    if f.size_bytes > MAX_SIZE_BYTES:
        raise refuse(
            "connection matrix",
            None,
            f"a flow of {f.size_bytes:,} bytes ({f.src}->{f.dst}) is past htsim's largest "
            f"size ({MAX_SIZE_BYTES:,} bytes, a 32-bit int); use a smaller message size",
        )
    return f.size_bytes


def write_cm(flows: list[Flow], hosts: int, graph: FabricGraph | None = None) -> str:
    """The connection matrix of `flows` among `hosts` nodes; with `graph`, a comment line
    saying what fabric it was written for."""
    rows = _header(hosts, len(flows), graph, "")
    for i, f in enumerate(flows, start=1):
        start_ps = round(f.start_s * PS_PER_S)
        rows.append(f"{f.src}->{f.dst} id {i} start {start_ps} size {_size(f)}")
    return "\n".join(rows) + "\n"


def write_dag(
    steps: list[list[Flow]], hosts: int, graph: FabricGraph | None = None, note: str = ""
) -> str:
    """The connection matrix of `steps`: step 0 starts at 0, step k+1 when barrier k+1 has
    counted every flow of step k received."""
    total = sum(len(s) for s in steps)
    rows = _header(hosts, total, graph, note)
    if len(steps) > 1:
        rows.append(f"Triggers {len(steps) - 1}")
    flow_id = 0
    for k, step in enumerate(steps):
        fires = f" recv_done_trigger {k + 1}" if k + 1 < len(steps) else ""
        began = "start 0" if k == 0 else f"trigger {k}"
        for f in step:
            flow_id += 1
            rows.append(f"{f.src}->{f.dst} id {flow_id} {began} size {_size(f)}{fires}")
    rows += [f"trigger id {k} barrier count {len(steps[k - 1])}" for k in range(1, len(steps))]
    return "\n".join(rows) + "\n"


def read_cm(text: str, source: str = "connection matrix") -> tuple[int, list[Flow]]:
    """(node count, flows) of a plain connection matrix (a traffic matrix); a triggered
    connection or a trigger line is refused by name."""
    matrix = _read(text, source, dag=False)
    return matrix.nodes, [c.flow for c in matrix.connections]


def read_cm_dag(text: str, source: str = "connection matrix") -> Matrix:
    """A connection matrix with its triggers; every trigger used must be defined."""
    matrix = _read(text, source, dag=True)
    used = {t for c in matrix.connections for t in (c.trigger, c.send_done, c.recv_done) if t}
    missing = sorted(used - set(matrix.triggers))
    if missing:
        raise refuse(source, None, f"trigger {missing[0]} is used but never defined")
    return matrix


def _read(text: str, source: str, dag: bool) -> Matrix:
    counts: dict[str, int] = {}
    matrix: Matrix | None = None
    ids: set[int] = set()
    for number, fields in content_lines(text):
        head = fields[0]
        if head in ("Nodes", "Connections", "Triggers", "Failures"):
            if matrix is not None and matrix.connections:
                raise refuse(source, number, f"{head} after the first connection")
            if len(fields) != 2:
                raise refuse(source, number, f"expected '{head} COUNT'")
            counts[head] = whole(fields[1], source, number, f"the {head.lower()} count")
            if head == "Failures" and counts[head]:
                raise refuse(source, number, "failures are not read (only connections)")
            if head == "Triggers" and counts[head] and not dag:
                raise refuse(source, number, "'Triggers' (a DAG of connections) is not read here")
            continue
        if "Nodes" not in counts or "Connections" not in counts:
            raise refuse(source, number, "a line before the 'Nodes N' and 'Connections M' lines")
        if matrix is None:
            matrix = Matrix(counts["Nodes"])
        if head == "trigger":
            if not dag:
                raise refuse(
                    source, number, "a trigger line (a DAG of connections) is not read here"
                )
            key, value = _trigger(fields, source, number)
            if key in matrix.triggers:
                raise refuse(source, number, f"trigger {key} is defined twice")
            matrix.triggers[key] = value
        elif "->" in head:
            matrix.connections.append(_connection(fields, source, number, matrix.nodes, ids, dag))
        else:
            raise refuse(
                source,
                number,
                f"unknown line {head!r}; expected 'SRC->DST id ... start ... size ...'",
            )
    if "Nodes" not in counts or "Connections" not in counts:
        raise refuse(source, None, "missing the 'Nodes N' or 'Connections M' line")
    matrix = matrix or Matrix(counts["Nodes"])
    if len(matrix.connections) != counts["Connections"]:
        raise refuse(
            source,
            None,
            f"{len(matrix.connections)} connections; the header says {counts['Connections']}",
        )
    if len(matrix.triggers) != counts.get("Triggers", 0):
        raise refuse(
            source,
            None,
            f"{len(matrix.triggers)} triggers; the header says {counts.get('Triggers', 0)}",
        )
    return matrix


def _trigger(fields: list[str], source: str, number: int) -> tuple[int, tuple[str, int]]:
    key, kind, count, i = 0, "", 0, 1
    while i < len(fields):
        word = fields[i]
        if word in ("id", "count") and i + 1 < len(fields):
            value = whole(fields[i + 1], source, number, f"the trigger {word}", minimum=1)
            key, count = (value, count) if word == "id" else (key, value)
            i += 2
        elif word in TRIGGER_KINDS and not kind:
            kind, i = word, i + 1
        else:
            raise refuse(source, number, f"unknown trigger word {word!r}")
    if not key or not kind:
        raise refuse(
            source, number, "a trigger needs an id and a kind (oneshot, multishot, barrier)"
        )
    return key, (kind, count)


def _connection(
    fields: list[str], source: str, number: int, nodes: int, ids: set[int], dag: bool
) -> Connection:
    src_text, _, dst_text = fields[0].partition("->")
    src = whole(src_text, source, number, "the source")
    dst = whole(dst_text, source, number, "the destination")
    if max(src, dst) >= nodes:
        raise refuse(source, number, f"node {max(src, dst)} is not below Nodes {nodes}")
    rest = fields[1:]
    if len(rest) % 2:
        raise refuse(
            source, number, "keywords and values do not pair up (e.g. 'start 0 size 2000000')"
        )
    values: dict[str, str] = {}
    for key, value in zip(rest[::2], rest[1::2], strict=True):
        if key not in _FLOW_KEYS:
            raise refuse(source, number, f"unknown keyword {key!r}")
        if key in ("trigger", "send_done_trigger", "recv_done_trigger") and not dag:
            raise refuse(source, number, f"'{key}' (a triggered, DAG connection) is not read here")
        values[key] = value
    if "size" not in values:
        raise refuse(source, number, "a connection without a size (bytes)")
    if ("start" in values) == ("trigger" in values):
        raise refuse(source, number, "a connection needs a start time or a trigger (one of them)")
    flow_id = 0
    if "id" in values:
        flow_id = whole(values["id"], source, number, "the flow id", minimum=1)
        if flow_id in ids:
            raise refuse(source, number, f"flow id {flow_id} is used twice")
        ids.add(flow_id)
    start_s = 0.0
    if "start" in values:
        try:
            start_s = float(values["start"]) / PS_PER_S
        except ValueError:
            raise refuse(source, number, f"the start {values['start']!r} is not a number") from None
        if not (math.isfinite(start_s) and start_s >= 0):
            raise refuse(source, number, "the start time must be a number of at least 0")
    triggers = [
        whole(values[k], source, number, k, minimum=1) if k in values else 0
        for k in ("trigger", "send_done_trigger", "recv_done_trigger")
    ]
    size = whole(values["size"], source, number, "the size", minimum=0)
    return Connection(Flow(src, dst, size, start_s), flow_id, *triggers)


def dag_steps(matrix: Matrix) -> list[list[Flow]]:
    """The steps of a DAG as `write_dag` writes it: the flows started at 0, then those each
    barrier starts, in trigger order."""
    by_trigger: dict[int, list[Flow]] = {}
    for c in matrix.connections:
        by_trigger.setdefault(c.trigger, []).append(c.flow)
    return [by_trigger[k] for k in sorted(by_trigger)]
