"""The readers against small files written by hand from the published format descriptions
(tests/fixtures/formats/samples), and their refusals naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.formats import astra, graphml, htsim, ns3
from engine.model.errors import ScenarioError

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "samples"


def _text(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def test_hpcc_topology_sample():
    topo = ns3.read_topology(_text("hpcc-4hosts.topology.txt"))
    assert topo.nodes == 6
    assert topo.switch_ids == (4, 5)
    assert len(topo.links) == 5
    last = topo.links[-1]
    assert (last.src, last.dst) == (4, 5)
    assert last.rate_gbps == 400.0
    assert last.delay_ns == pytest.approx(500.0)
    assert last.error_rate == pytest.approx(1e-4)
    assert topo.links[0].delay_ns == pytest.approx(1000.0)


def test_simai_topology_sample():
    topo = ns3.read_topology(_text("simai-2servers.topology.txt"))
    assert (topo.nodes, topo.gpus_per_server, topo.nvswitches, topo.gpu_type) == (7, 2, 2, "H100")
    assert topo.switch_ids == (4, 5, 6)
    assert topo.links[0].rate_gbps == 2880.0
    assert topo.links[0].delay_ns == pytest.approx(25.0)


def test_hpcc_flow_sample():
    flows = ns3.read_flows(_text("hpcc-4hosts.flow.txt"), hosts=4)
    assert [(f.src, f.dst, f.size_bytes) for f in flows] == [
        (0, 2, 1000000),
        (1, 3, 2000000),
        (2, 0, 500),
    ]
    assert flows[2].start_s == pytest.approx(2.000001)


def test_htsim_sample():
    nodes, flows = htsim.read_cm(_text("perm-4.cm"))
    assert nodes == 4
    assert [(f.src, f.dst, f.size_bytes) for f in flows][:3] == [
        (0, 2, 2000000),
        (1, 3, 2000000),
        (2, 1, 1500),
    ]
    assert flows[2].start_s == pytest.approx(1e-6)  # start is in picoseconds


def test_astra_sample():
    config = astra.read_network_yaml(_text("analytical-64npus.yml"))
    assert config == {
        "topology": ["Ring", "FullyConnected", "Switch"],
        "npus_count": [2, 8, 4],
        "bandwidth": [200.0, 100.0, 50.0],
        "latency": [50.0, 500.0, 2000.0],
    }


def test_graphml_sample_types_defaults_and_parallel_edges():
    g = graphml.read_graphml(_text("two-switches.graphml"))
    assert list(g.nodes) == ["a", "b"]
    assert g.nodes["a"] == {"label": "switch a"}
    assert [e[2]["weight"] for e in g.edges] == [2.5, 1.0]


@pytest.mark.parametrize(
    ("reader", "text", "where", "words"),
    [
        (ns3.read_topology, "3 1 1\n2\n0 2 100Gbps 1ms\n", "t.txt:3", "5 fields"),
        (ns3.read_topology, "3 1 2\n2\n0 2 100Gbps 1ms 0\n", "t.txt", "1 link lines"),
        (ns3.read_topology, "3 1 1\n2\n0 9 100Gbps 1ms 0\n", "t.txt:3", "node 9"),
        (ns3.read_topology, "3 1 1\n2\n0 2 fastGbps 1ms 0\n", "t.txt:3", "rate"),
        (ns3.read_topology, "3 1 1\n2\n0 2 100Gbps 1 0\n", "t.txt:3", "delay"),
        (ns3.read_flows, "2\n0 1 3 100 10 0\n", "t.txt", "1 flow lines"),
        (ns3.read_flows, "2\n0 1 3 100 10 1\n1 0 3 100 10 0\n", "t.txt:3", "before"),
        (htsim.read_cm, "Nodes 2\nConnections 1\n0->1 id 1 size 10\n", "t.txt:3", "start"),
        (htsim.read_cm, "Nodes 2\nConnections 1\n0->5 start 0 size 10\n", "t.txt:3", "node 5"),
        (htsim.read_cm, "Nodes 2\nConnections 1\n0->1 trigger 1 size 10\n", "t.txt:3", "trigger"),
        (htsim.read_cm, "Nodes 2\nConnections 2\n0->1 start 0 size 10\n", "t.txt", "1 connections"),
        (astra.read_network_yaml, "topology: [ Torus ]\n", "t.txt:1", "Torus"),
        (astra.read_network_yaml, "topology: [ Switch ]\nnpus_count: [ 4 ]\n", "t.txt", "missing"),
        (
            graphml.read_graphml,
            "<graphml><graph><node id='a'/>\n<edge source='a' target='z'/></graph></graphml>",
            "t.txt",
            "'z'",
        ),
        (
            graphml.read_graphml,
            "<graphml><graph>\n<node id='a'></graph></graphml>",
            "t.txt:2",
            "XML",
        ),
    ],
)
def test_readers_refuse_naming_file_and_line(reader, text, where, words):
    with pytest.raises(ScenarioError) as caught:
        reader(text, "t.txt")
    problem = caught.value.problems[0]
    assert problem.where == where
    assert words in problem.message
