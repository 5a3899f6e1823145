"""A topology as a plain list of cables between named nodes and ports, the common ground of
the importers: a CSV link list (``node,port,node,port,rate``) reads into one directly, and a
GraphML graph converts into one (FabricLab's own GraphML: GPUs folded back into their
servers, NVLink left out; any other GraphML: every node a device, every edge a cable).

Hints (a node's kind, model, tier, group and member; a cable's bundle, length and cable
model) come with FabricLab's own exports and let the grouping rebuild the very groups and
bundles written; without them the grouping infers what it can (engine.formats.grouping).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field

from engine.formats.graph import HOST, NVSWITCH, FabricGraph
from engine.formats.graphml import GraphmlGraph
from engine.formats.lines import parse_rate_gbps, refuse

CSV_HEADER = ("node_a", "port_a", "node_b", "port_b", "rate_gbps")
_RATE_TEXT = re.compile(r"^[0-9.]+[eE0-9+-]*[KMGT]?bps$", re.IGNORECASE)
RATE_KEYS = ("rate_gbps", "speed_gbps", "bandwidth_gbps", "rate", "speed", "bandwidth")


@dataclass
class NodeHint:
    """What a file says of a node beyond its name (each ``None`` when it says nothing)."""

    kind: str | None = None
    model: str | None = None
    tier: str | None = None
    group: str | None = None
    member: int | None = None


@dataclass(frozen=True)
class PortLink:
    """One cable: node and port at each end, line rate, where it was read, and the bundle
    hints of FabricLab's own exports (empty when absent)."""

    a: str
    port_a: str
    b: str
    port_b: str
    rate_gbps: float
    line: int | None = None
    bundle: str = ""
    length_m: float | None = None
    cable: str = ""


@dataclass
class LinkList:
    """Nodes (in the order first met, with their hints) and the cables between them."""

    source: str
    name: str = ""
    technology: str = ""
    nodes: dict[str, NodeHint] = field(default_factory=dict)
    links: list[PortLink] = field(default_factory=list)
    devices: list[dict] = field(default_factory=list)  # user-defined devices the file carries

    def add(self, link: PortLink) -> None:
        """Append a cable, registering its end nodes."""
        if link.a == link.b:
            raise refuse(self.source, link.line, f"a cable from {link.a!r} to itself")
        for node in (link.a, link.b):
            self.nodes.setdefault(node, NodeHint())
        self.links.append(link)


def read_link_csv(text: str, source: str = "links.csv") -> LinkList:
    """A link list from CSV rows ``node_a,port_a,node_b,port_b,rate`` (rate in Gb/s, or
    written like ``400Gbps``); a first row whose rate is not a number is a header."""
    out = LinkList(source)
    seen_row = False
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [c.strip() for c in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if len(cells) != 5:
            raise refuse(
                source, number, f"{len(cells)} columns; expected 5: {','.join(CSV_HEADER)}"
            )
        if any(not c for c in cells):
            raise refuse(
                source, number, "an empty column; every cable needs node, port, node, port and rate"
            )
        header = not out.links and not seen_row
        seen_row = True
        rate = _rate(cells[4], source, number, header)
        if rate is None:
            continue  # the header
        out.add(PortLink(cells[0], cells[1], cells[2], cells[3], rate, number))
    if not out.links:
        raise refuse(
            source, None, "no cables: expected rows of node_a,port_a,node_b,port_b,rate_gbps"
        )
    return out


def _rate(text: str, source: str, number: int, header: bool) -> float | None:
    """The rate in Gb/s of a cell (``400`` or ``400Gbps``); ``None`` for the header's."""
    try:
        value = float(text)
    except ValueError:
        if _RATE_TEXT.match(text):
            return parse_rate_gbps(text, source, number)
        if header:
            return None
        raise refuse(source, number, f"the rate {text!r} is not a number of Gb/s") from None
    if not math.isfinite(value) or value <= 0:
        raise refuse(source, number, f"the rate {text!r} must be a positive number of Gb/s")
    return value


def write_link_csv(graph: FabricGraph) -> str:
    """The fabric's cables as a CSV link list: servers by name with port ``nicR`` (R the
    rail), switches by name with their cables numbered as ports; NVLink left out."""
    names = {}
    for n in graph.nodes:
        names[n.id] = (
            f"{n.group}.server{n.member // _per(graph, n.group)}" if n.kind == HOST else n.name
        )
    next_port: dict[int, int] = {}
    rows = [",".join(CSV_HEADER)]
    for c in graph.cables:
        if c.bundle == "nvlink":
            continue
        ends = []
        for node in (c.a, c.b):
            n = graph.nodes[node]
            if n.kind == HOST:
                ends.append((names[node], f"nic{n.local}"))
            else:
                next_port[node] = next_port.get(node, 0) + 1
                ends.append((names[node], f"p{next_port[node]}"))
        rows.append(f"{ends[0][0]},{ends[0][1]},{ends[1][0]},{ends[1][1]},{c.rate_gbps:.12g}")
    return "\n".join(rows) + "\n"


def _per(graph: FabricGraph, group: str) -> int:
    """GPUs per server of a server group (hosts of one server share its index)."""
    counts: dict[int, int] = {}
    for n in graph.nodes:
        if n.kind == HOST and n.group == group:
            counts[n.server] = counts.get(n.server, 0) + 1
    return max(counts.values())


def graphml_link_list(g: GraphmlGraph, source: str) -> LinkList:
    """The link list of a GraphML graph: FabricLab's own (nodes with `kind`) regrouped into
    servers and switches; any other graph's nodes taken as devices, edges as cables."""
    out = LinkList(source, str(g.data.get("name", "")), str(g.data.get("technology", "")))
    out.devices = _devices(g.data.get("devices"), source)
    ours = bool(g.nodes) and all(
        d.get("kind") in (HOST, NVSWITCH, "switch") for d in g.nodes.values()
    )
    names: dict[str, str] = {}
    for nid, d in g.nodes.items():
        if not ours:
            names[nid] = nid
            out.nodes[nid] = NodeHint(
                kind=_text(d, "kind"),
                model=_text(d, "model"),
                tier=_text(d, "tier"),
                group=_text(d, "group"),
            )
            continue
        if d["kind"] == NVSWITCH:
            continue
        if d["kind"] == HOST:
            if "server" not in d or "local" not in d:
                raise refuse(source, None, f"host {nid!r} has no server or local index")
            names[nid] = f"{d.get('group', 'servers')}.server{d['server']}"
            hint = NodeHint("server", _text(d, "model"), "server", _text(d, "group"))
        else:
            names[nid] = nid
            hint = NodeHint(
                "switch", _text(d, "model"), _text(d, "tier"), _text(d, "group"), d.get("member")
            )
        out.nodes.setdefault(names[nid], hint)
    _server_members(out)
    next_port: dict[str, int] = {}
    for i, (a, b, d) in enumerate(g.edges):
        if ours and (d.get("bundle") == "nvlink" or a not in names or b not in names):
            continue
        rate = next((d[k] for k in RATE_KEYS if isinstance(d.get(k), (int, float))), None)
        if rate is None or not rate > 0:
            raise refuse(
                source, None, f"edge {i} ({a} - {b}) has no rate_gbps (or speed/bandwidth) in Gb/s"
            )
        ports = []
        for end in (a, b):
            node = g.nodes[end]
            if ours and node["kind"] == HOST:
                ports.append(f"nic{node['local']}")
            else:
                next_port[end] = next_port.get(end, 0) + 1
                ports.append(f"p{next_port[end]}")
        length = d.get("length_m")
        out.add(
            PortLink(
                names[a],
                ports[0],
                names[b],
                ports[1],
                float(rate),
                None,
                str(d.get("bundle", "")),
                float(length) if isinstance(length, (int, float)) else None,
                str(d.get("cable", "")),
            )
        )
    if not out.links:
        raise refuse(source, None, "no cables between devices in the graph")
    return out


def _text(d: dict, key: str) -> str | None:
    value = d.get(key)
    return str(value) if value not in (None, "") else None


def _server_members(out: LinkList) -> None:
    """Members of FabricLab's server groups in the order their servers were written."""
    seen: dict[str | None, int] = {}
    for hint in out.nodes.values():
        if hint.kind == "server":
            hint.member = seen.get(hint.group, 0)
            seen[hint.group] = hint.member + 1


def _devices(text: object, source: str) -> list[dict]:
    """The user-defined device entries a FabricLab GraphML carries (its ``devices`` key)."""
    if not text:
        return []
    try:
        entries = json.loads(str(text))
    except ValueError:
        raise refuse(source, None, "the graph's devices are not valid JSON") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise refuse(source, None, "the graph's devices must be a JSON list of objects")
    return entries
