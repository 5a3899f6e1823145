"""GraphML: the expanded fabric as an undirected multigraph any graph tool reads
(networkx ``read_graphml``, igraph, Gephi, yEd).

Nodes carry `kind` (host, nvswitch, switch), `group`, `member`, `model`, `tier` and, for
hosts, `server` and `local` (the GPU's index in its server, its rail). Edges carry one
cable each: `rate_gbps`, `latency_ns`, `bundle` (``nvlink`` for NVLink), `length_m` and
`cable`. Parallel cables are parallel edges, each with its own id. The graph carries the
scenario's `name` and `technology`. Written with the standard library's ElementTree.

Format source: the GraphML primer and schema, graphml.graphdrawing.org (docs/formats.md).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from engine.formats.graph import FabricGraph
from engine.formats.lines import refuse

NS = "http://graphml.graphdrawing.org/xmlns"
_Q = f"{{{NS}}}"
NODE_KEYS = (
    ("kind", "string"),
    ("group", "string"),
    ("member", "int"),
    ("model", "string"),
    ("tier", "string"),
    ("server", "int"),
    ("local", "int"),
)
EDGE_KEYS = (
    ("rate_gbps", "double"),
    ("latency_ns", "double"),
    ("bundle", "string"),
    ("length_m", "double"),
    ("cable", "string"),
)
# devices: the scenario's own catalog entries as JSON text, so an import defines them again
GRAPH_KEYS = (("name", "string"), ("technology", "string"), ("devices", "string"))
_TYPES: dict[str, Any] = {
    "int": int,
    "long": int,
    "double": float,
    "float": float,
    "string": str,
    "boolean": lambda v: v.strip().lower() in ("true", "1"),
}


@dataclass
class GraphmlGraph:
    """What a GraphML file holds: node ids in order with their data, edges with theirs."""

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


def write_graphml(graph: FabricGraph) -> str:
    """The GraphML document of `graph`."""
    ET.register_namespace("", NS)
    root = ET.Element(f"{_Q}graphml")
    for scope, keys in (("graph", GRAPH_KEYS), ("node", NODE_KEYS), ("edge", EDGE_KEYS)):
        for name, kind in keys:
            if scope == "graph" and name == "devices" and not graph.devices:
                continue  # declared only where there are some (files without stay as before)
            ET.SubElement(
                root,
                f"{_Q}key",
                {"id": f"{scope[0]}_{name}", "for": scope, "attr.name": name, "attr.type": kind},
            )
    g = ET.SubElement(root, f"{_Q}graph", {"id": "fabric", "edgedefault": "undirected"})
    _data(g, "g_name", graph.name)
    _data(g, "g_technology", graph.technology)
    if graph.devices:
        _data(g, "g_devices", graph.devices)
    for n in graph.nodes:
        node = ET.SubElement(g, f"{_Q}node", {"id": f"n{n.id}"})
        values = {"kind": n.kind, "group": n.group, "member": n.member, "model": n.model}
        values["tier"] = n.tier
        if n.server >= 0:
            values["server"] = n.server
        if n.local >= 0:
            values["local"] = n.local
        for key, value in values.items():
            _data(node, f"n_{key}", value)
    for i, c in enumerate(graph.cables):
        edge = ET.SubElement(
            g, f"{_Q}edge", {"id": f"e{i}", "source": f"n{c.a}", "target": f"n{c.b}"}
        )
        _data(edge, "e_rate_gbps", repr(c.rate_gbps))
        _data(edge, "e_latency_ns", repr(c.latency_ns))
        _data(edge, "e_bundle", c.bundle)
        if c.bundle != "nvlink":
            _data(edge, "e_length_m", repr(c.length_m))
            _data(edge, "e_cable", c.cable)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _data(parent: ET.Element, key: str, value: Any) -> None:
    ET.SubElement(parent, f"{_Q}data", {"key": key}).text = str(value)


def read_graphml(text: str, source: str = "graphml") -> GraphmlGraph:
    """Nodes, edges and graph data of a GraphML document (the first graph in it), each
    value converted by its key's declared type; refusals name `source` and the line."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else None
        raise refuse(
            source, line, f"not well-formed XML: {exc.msg if hasattr(exc, 'msg') else exc}"
        ) from None
    tag = root.tag.split("}")[-1]
    if tag != "graphml":
        raise refuse(source, None, f"the root element is <{tag}>, not <graphml>")
    ns = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""
    keys: dict[str, tuple[str, Any]] = {}
    defaults: dict[str, dict[str, Any]] = {"node": {}, "edge": {}, "graph": {}}
    for key in root.iter(f"{ns}key"):
        kind = key.get("attr.type", "string")
        convert = _TYPES.get(kind)
        if convert is None:
            raise refuse(source, None, f"key {key.get('id')!r} has unknown attr.type {kind!r}")
        name = key.get("attr.name", key.get("id", ""))
        keys[key.get("id", "")] = (name, convert)
        default = key.find(f"{ns}default")
        if default is not None and default.text is not None:
            scope = key.get("for", "node")
            defaults.setdefault(scope, {})[name] = convert(default.text)
    g = root.find(f"{ns}graph")
    if g is None:
        raise refuse(source, None, "no <graph> element")
    out = GraphmlGraph(data=_values(g, ns, keys, source, {}))
    for node in g.findall(f"{ns}node"):
        nid = node.get("id")
        if nid is None:
            raise refuse(source, None, "a <node> without an id")
        if nid in out.nodes:
            raise refuse(source, None, f"node id {nid!r} appears twice")
        out.nodes[nid] = _values(node, ns, keys, source, defaults["node"])
    for edge in g.findall(f"{ns}edge"):
        a, b = edge.get("source"), edge.get("target")
        for end in (a, b):
            if end not in out.nodes:
                raise refuse(source, None, f"an edge ends at {end!r}, which is not a node")
        out.edges.append((a, b, _values(edge, ns, keys, source, defaults["edge"])))
    return out


def _values(
    element: ET.Element, ns: str, keys: dict, source: str, defaults: dict
) -> dict[str, Any]:
    values = dict(defaults)
    for data in element.findall(f"{ns}data"):
        key = data.get("key", "")
        if key not in keys:
            raise refuse(source, None, f"data for undeclared key {key!r}")
        name, convert = keys[key]
        try:
            values[name] = convert((data.text or "").strip())
        except ValueError:
            raise refuse(
                source, None, f"{name} = {data.text!r} is not of its declared type"
            ) from None
    return values
