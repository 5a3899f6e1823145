"""Import: a topology (GraphML, CSV link list) grouped back into device groups and bundles,
and traffic matrices; round trips export -> import give the same groups, bundles and
capacities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.analysis import generate
from engine.formats.export import export_texts
from engine.formats.graph import fabric_graph
from engine.formats.importer import (
    import_topology,
    import_traffic,
    topology_from_text,
    traffic_from_text,
)
from engine.formats.linklist import write_link_csv
from engine.model.errors import ScenarioError
from engine.model.scenario import from_json, to_json
from engine.topology.expand import expand

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "samples"
TEMPLATES = [
    ("leaf-spine", {"gpus": 128, "server": "dgx-h100", "switch": "qm9700"}),
    ("rail-optimized", {"gpus": 1024, "server": "dgx-h100", "switch": "qm9700"}),
    ("rail-only", {"gpus": 256, "server": "dgx-h100", "switch": "qm9700"}),
    ("single-switch", {"gpus": 64, "server": "dgx-h100", "switch": "sn5600"}),
    ("fat-tree", {"gpus": 640, "server": "dgx-a100", "switch": "qm8700"}),
]


def _groups(s):
    return [(g.id, g.kind, g.model, g.count, g.tier) for g in s.groups]


def _bundles(s):
    return [
        (b.id, b.a, b.b, b.pattern, b.blocks, b.links_per_pair, b.speed_gbps, b.length_m)
        for b in s.bundles
    ]


def _capacities(s, catalog):
    f = expand(s, catalog)
    return f.n_nodes, np.sort(f.link_capacity), np.sort(f.link_latency)


@pytest.mark.parametrize(("template", "params"), TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_graphml_round_trip_gives_the_same_groups_bundles_and_capacities(template, params, catalog):
    original = generate(template, **params)
    text = export_texts(original, "graphml", catalog)["fabric.graphml"]
    back = topology_from_text(text, "fabric.graphml", catalog)
    assert _groups(back) == _groups(original)
    assert _bundles(back) == _bundles(original)
    assert back.fabric.technology == original.fabric.technology
    n, cap, lat = _capacities(original, catalog)
    n2, cap2, lat2 = _capacities(back, catalog)
    assert n == n2
    np.testing.assert_array_equal(cap, cap2)
    np.testing.assert_allclose(lat, lat2)
    # the imported scenario is an ordinary one: its JSON reads back the same
    assert from_json(to_json(back)) == back


@pytest.mark.parametrize(("template", "params"), TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_csv_link_list_round_trip_keeps_groups_bundles_and_capacities(template, params, catalog):
    original = generate(template, **params)
    text = write_link_csv(fabric_graph(expand(original, catalog)))
    switch = original.groups[-1].model
    back = topology_from_text(text, "links.csv", catalog, switch_model=switch)
    # a CSV carries no group names, lengths or models: shapes and rates must survive
    shape = [(g.kind, g.model, g.count, g.tier) for g in original.groups]
    assert [(g.kind, g.model, g.count, g.tier) for g in back.groups] == shape
    wiring = [(b.pattern, b.blocks, b.links_per_pair, b.speed_gbps) for b in original.bundles]
    assert [(b.pattern, b.blocks, b.links_per_pair, b.speed_gbps) for b in back.bundles] == wiring
    f, g = expand(original, catalog), expand(back, catalog)
    np.testing.assert_array_equal(np.sort(f.link_capacity), np.sort(g.link_capacity))
    np.testing.assert_array_equal(f.link_src, g.link_src)
    np.testing.assert_array_equal(f.link_dst, g.link_dst)


def test_a_hand_written_link_list_is_grouped(catalog):
    s = import_topology(SAMPLES / "two-leaves.links.csv", catalog, switch_model="qm9700")
    assert _groups(s) == [
        ("servers", "server", "dgx-h100", 4, "server"),
        ("leaf", "switch", "qm9700", 2, "leaf"),
        ("spine", "switch", "qm9700", 1, "spine"),
    ]
    assert [(b.a, b.b, b.pattern, b.blocks, b.links_per_pair) for b in s.bundles] == [
        ("servers", "leaf", "full", 2, 1),
        ("leaf", "spine", "full", 1, 2),
    ]
    assert s.fabric.technology == "infiniband"
    assert expand(s, catalog).n_gpus == 32


def test_uneven_structure_becomes_several_groups(catalog):
    original = generate(
        "leaf-spine", gpus=512, server="dgx-a100", switch="qm8700", oversubscription=2
    )
    text = write_link_csv(fabric_graph(expand(original, catalog)))
    back = topology_from_text(text, "links.csv", catalog, switch_model="qm8700")
    # 64 servers on leaves of 3: the last leaf holds one server, so it and its server stand apart
    assert [(g.id, g.count) for g in back.groups] == [
        ("servers-1", 63),
        ("servers-2", 1),
        ("leaf-1", 21),
        ("leaf-2", 1),
        ("spine", 12),
    ]
    f, g = expand(original, catalog), expand(back, catalog)
    assert f.n_links == g.n_links
    np.testing.assert_array_equal(np.sort(f.link_capacity), np.sort(g.link_capacity))


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("a,p,b,p\n", "l.csv:1", "expected 5"),
        ("node_a,port_a,node_b,port_b,rate\ns1,n0,l1,p1,fast\n", "l.csv:2", "not a number"),
        ("s1,n0,l1,p1,-5\n", "l.csv:1", "positive"),
        ("s1,n0,s1,p1,400\n", "l.csv:1", "to itself"),
        ("server1,n0,leaf1,p1,123\n", "l.csv", "no catalog NIC runs 123 Gb/s"),
        ("server1,n0,leaf1,p1,400\nserver1,n1,leaf1,p2,200\n", "l.csv", "several rates"),
    ],
)
def test_bad_link_lists_are_refused_naming_file_and_line(text, where, words, catalog):
    with pytest.raises(ScenarioError) as caught:
        topology_from_text(text, "l.csv", catalog)
    assert caught.value.problems[0].where == where
    assert words in caught.value.problems[0].message


def test_unknown_topology_file_type_is_refused(catalog):
    with pytest.raises(ScenarioError, match="unknown topology file type"):
        topology_from_text("", "net.txt", catalog)
    with pytest.raises(ScenarioError, match="no such file"):
        import_topology(SAMPLES / "missing.graphml", catalog)


def test_traffic_matrices():
    flows = import_traffic(SAMPLES / "traffic.csv")
    assert [(f.src, f.dst, f.size_bytes, f.start_s) for f in flows] == [
        (0, 8, 1048576, 0.0),
        (8, 0, 1048576, 0.0),
        (1, 9, 4096, 1e-6),
    ]
    cm = import_traffic(SAMPLES / "perm-4.cm")
    assert len(cm) == 4 and cm[0].size_bytes == 2000000
    with pytest.raises(ScenarioError) as caught:
        traffic_from_text("0,1,100\n2,x,5\n", "t.csv")
    assert caught.value.problems[0].where == "t.csv:2"
    with pytest.raises(ScenarioError, match="to itself"):
        traffic_from_text("3,3,100\n", "t.csv")


def _generic_graphml(servers: int, leaves: int) -> str:
    """A GraphML as another tool writes it: plain node names, a `speed` per edge (Gb/s),
    no FabricLab hints; each server's 8 NICs on the leaf of its half, two cables up."""
    nodes = [f"srv{i}" for i in range(servers)] + [f"leaf{j}" for j in range(leaves)]
    edges = []
    for i in range(servers):
        leaf = i * leaves // servers
        edges += [(f"srv{i}", f"leaf{leaf}")] * 8
    edges += [(f"leaf{j}", "spine0") for j in range(leaves) for _ in range(2)]
    body = "".join(f'<node id="{n}"/>' for n in [*nodes, "spine0"])
    body += "".join(
        f'<edge source="{a}" target="{b}"><data key="s">400</data></edge>' for a, b in edges
    )
    return (
        '<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
        '<key id="s" for="edge" attr.name="speed" attr.type="double"/>'
        f'<graph edgedefault="undirected">{body}</graph></graphml>'
    )


def test_a_generic_graphml_is_grouped(catalog):
    s = topology_from_text(_generic_graphml(4, 2), "other.graphml", catalog, "qm9700")
    assert _groups(s) == [
        ("servers", "server", "dgx-h100", 4, "server"),
        ("leaf", "switch", "qm9700", 2, "leaf"),
        ("spine", "switch", "qm9700", 1, "spine"),
    ]
    assert [(b.pattern, b.blocks, b.links_per_pair, b.speed_gbps) for b in s.bundles] == [
        ("full", 2, 1, 400.0),
        ("full", 1, 2, 400.0),
    ]
    assert expand(s, catalog).n_gpus == 32


def test_an_edge_without_a_rate_is_refused(catalog):
    text = _generic_graphml(2, 1).replace('<data key="s">400</data>', "", 1)
    with pytest.raises(ScenarioError, match="no rate_gbps"):
        topology_from_text(text, "other.graphml", catalog)


def test_an_export_with_failed_cables_does_not_group_into_a_pattern(catalog):
    import copy

    from engine.model.scenario import LinkFailure

    broken = copy.deepcopy(generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700"))
    broken.failures.links.append(LinkFailure("leaf-spine", 3))
    text = export_texts(broken, "graphml", catalog)["fabric.graphml"]
    with pytest.raises(ScenarioError, match="match no wiring pattern"):
        topology_from_text(text, "broken.graphml", catalog)


def test_the_switch_option_fills_only_what_the_file_leaves_open(catalog):
    original = generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700")
    text = export_texts(original, "graphml", catalog)["fabric.graphml"]
    kept = topology_from_text(text, "f.graphml", catalog, switch_model="sn5600")
    assert {g.model for g in kept.groups if g.kind == "switch"} == {"qm9700"}
    with pytest.raises(ScenarioError, match="'nope' is not a switch"):
        topology_from_text(_generic_graphml(2, 1), "g.graphml", catalog, switch_model="nope")
