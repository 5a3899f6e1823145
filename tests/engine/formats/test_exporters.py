"""Exports of expanded scenarios: what each format holds, re-read; and one 128-host
fat-tree (a 2-tier folded Clos of 16 DGX H100 on QM9700) per format kept as a fixture that
the exporter must still write byte for byte.

Set FABRICLAB_UPDATE_FIXTURES=1 to rewrite the fixtures after a deliberate change.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from engine.analysis import generate
from engine.formats import astra, graphml, htsim, ns3
from engine.formats.export import FORMATS, export_texts, write_export
from engine.formats.graph import fabric_graph
from engine.model.errors import ScenarioError
from engine.topology.expand import expand

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "fat-tree-128"


@pytest.fixture(scope="module")
def fat_tree_128():
    """16 × DGX H100 (128 GPUs, 128 hosts) on a non-blocking 2-tier QM9700 fat-tree."""
    return generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_128_host_fat_tree_is_still_written_exactly_as_kept(fat_tree_128, fmt):
    files = export_texts(fat_tree_128, fmt)
    for name, text in files.items():
        kept = FIXTURES / fmt / name
        if os.environ.get("FABRICLAB_UPDATE_FIXTURES"):
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(text, encoding="utf-8")
        assert text == kept.read_text(encoding="utf-8"), f"{fmt}/{name} changed"


def test_ns3_topology_holds_every_node_switch_and_cable(fat_tree_128, catalog):
    fabric = expand(fat_tree_128, catalog)
    text = export_texts(fat_tree_128, "ns3")["topology.txt"]
    topo = ns3.read_topology(text)
    # 128 GPUs + 16 NVLink switches + 4 leaves + 2 spines
    assert topo.nodes == 150 == fabric.n_nodes
    assert topo.switch_ids == tuple(range(128, 150))
    # 128 NVLink attachments, 128 NIC cables, 4 leaves x 2 spines x 16 cables
    assert len(topo.links) == fabric.n_links // 2 == 128 + 128 + 128
    nic = [link for link in topo.links if link.src < 128 and link.dst >= 144]
    assert len(nic) == 128 and {link.rate_gbps for link in nic} == {400.0}
    up = [link for link in topo.links if link.src >= 144]
    assert len(up) == 128
    assert {link.dst for link in up} == {148, 149}
    # delays are the engine's one-way link latencies (upward direction), in ns
    up_latency = fabric.link_latency[np.flatnonzero(fabric.link_upward & (fabric.link_src >= 144))]
    assert sorted(link.delay_ns for link in up) == pytest.approx(sorted(up_latency * 1e9))


def test_simai_first_line(fat_tree_128):
    text = export_texts(fat_tree_128, "ns3", simai=True)["topology.txt"]
    assert text.splitlines()[0] == "150 8 16 6 384 H100"
    topo = ns3.read_topology(text)
    assert (topo.gpus_per_server, topo.nvswitches, len(topo.switch_ids)) == (8, 16, 22)


def test_flows_are_the_permutation_of_message_bytes(fat_tree_128, catalog):
    fabric = expand(fat_tree_128, catalog)
    flows = ns3.read_flows(export_texts(fat_tree_128, "ns3")["flow.txt"], hosts=128)
    assert len(flows) == 128
    assert sorted(f.src for f in flows) == list(range(128))
    assert sorted(f.dst for f in flows) == list(range(128))
    assert all(fabric.gpu_server[f.src] != fabric.gpu_server[f.dst] for f in flows)
    assert {f.size_bytes for f in flows} == {2**30}
    nodes, cm = htsim.read_cm(export_texts(fat_tree_128, "htsim")["traffic.cm"])
    assert nodes == 128
    assert [(f.src, f.dst, f.size_bytes) for f in cm] == [
        (f.src, f.dst, f.size_bytes) for f in flows
    ]


def test_astra_dimensions(fat_tree_128, catalog):
    fabric = expand(fat_tree_128, catalog)
    config = astra.read_network_yaml(export_texts(fat_tree_128, "astra")["network.yml"])
    assert config["topology"] == ["Switch", "Switch"]
    assert config["npus_count"] == [8, 16]
    nvlink_bytes = float(fabric.link_capacity[0])
    assert config["bandwidth"][0] == pytest.approx(nvlink_bytes / 2**30)
    assert config["bandwidth"][1] == pytest.approx(float(fabric.gpu_line_rate.max()) / 2**30)
    # GPU -> leaf -> spine -> leaf -> GPU: four links; half of it per Switch hop
    lat = fabric.link_latency * 1e9
    nic_up = lat[(fabric.link_src == 0) & fabric.network_link_mask()][0]
    leaf_up = lat[(fabric.link_src == 144) & fabric.link_upward][0]
    spine_down = lat[(fabric.link_dst == 145) & ~fabric.link_upward & (fabric.link_src >= 148)][0]
    nic_down = lat[(fabric.link_dst == 127) & fabric.network_link_mask()][0]
    assert config["latency"][1] == pytest.approx(
        (nic_up + leaf_up + spine_down + nic_down) / 2, rel=0.2
    )


def test_graphml_nodes_and_edges_carry_their_attributes(fat_tree_128, catalog):
    g = graphml.read_graphml(export_texts(fat_tree_128, "graphml")["fabric.graphml"])
    assert len(g.nodes) == 150 and len(g.edges) == 384
    assert g.data == {"name": "leaf-spine 128 GPUs", "technology": "infiniband"}
    host = g.nodes["n9"]
    assert host == {
        "kind": "host",
        "group": "servers",
        "member": 9,
        "model": "dgx-h100",
        "tier": "server",
        "server": 1,
        "local": 1,
    }
    assert g.nodes["n148"]["tier"] == "spine"
    parallel = [e for e in g.edges if (e[0], e[1]) == ("n144", "n148")]
    assert len(parallel) == 16
    assert parallel[0][2]["bundle"] == "leaf-spine" and parallel[0][2]["rate_gbps"] == 400.0


def test_failed_cables_are_left_out(fat_tree_128, catalog):
    import copy

    from engine.model.scenario import LinkFailure

    broken = copy.deepcopy(fat_tree_128)
    broken.failures.links.append(LinkFailure("leaf-spine", 8))
    graph = fabric_graph(expand(broken, catalog))
    assert sum(1 for c in graph.cables if c.bundle == "leaf-spine") == 128 - 8


def test_write_export_files(fat_tree_128, tmp_path):
    paths = write_export(fat_tree_128, "ns3", tmp_path / "ns3")
    assert [p.name for p in paths] == ["topology.txt", "flow.txt"]
    (one,) = write_export(fat_tree_128, "htsim", tmp_path / "x.cm")
    assert one == tmp_path / "x.cm" and one.read_text().startswith("# FabricLab")
    (inside,) = write_export(fat_tree_128, "graphml", tmp_path)
    assert inside == tmp_path / "fabric.graphml"


def test_unknown_format_and_oversized_flows_are_refused(fat_tree_128):
    with pytest.raises(ScenarioError, match="unknown format"):
        export_texts(fat_tree_128, "omnet")
    import copy

    big = copy.deepcopy(fat_tree_128)
    big.workload.message_bytes = 4.0 * 2**30
    with pytest.raises(ScenarioError, match="htsim's largest size"):
        export_texts(big, "htsim")


def test_htsim_fat_tree_topology_of_a_3_tier_fat_tree(tmp_path, catalog):
    from engine.formats.htsim_topology import read_fat_tree_topo, switch_counts

    three = generate("fat-tree", gpus=640, server="dgx-a100", switch="qm8700")
    files = export_texts(three, "htsim", catalog)
    assert list(files) == ["traffic.cm", "fat_tree.topo"]
    params = read_fat_tree_topo(files["fat_tree.topo"])
    assert (params["Nodes"], params["Tiers"], params["Podsize"]) == (640, 3, 320)
    t0, t1, t2 = params["tiers"]
    # 16 GPUs (one NIC each) per leaf, 16 spines per pod, one core per plane with 20 cables
    assert (t0["Radix_Down"], t0["Radix_Up"], t1["Radix_Down"], t1["Radix_Up"]) == (16, 16, 20, 20)
    assert (t2["Radix_Down"], t2["Bundle"], t0["Downlink_speed_Gbps"]) == (40, 20, 200)
    assert t0["Switch_Latency_ns"] == t1["Switch_Latency_ns"] > 0
    assert t0["Downlink_Latency_ns"] < t1["Downlink_Latency_ns"] < t2["Downlink_Latency_ns"]
    # htsim's own arithmetic rebuilds the fabric's 40 leaves, 32 spines and 16 cores
    assert switch_counts(params) == (40, 32, 16)
    paths = write_export(three, "htsim", tmp_path / "ft.cm", catalog)
    assert paths == [tmp_path / "ft.cm", tmp_path / "ft.topo"]


def test_htsim_writes_no_topology_for_other_shapes(fat_tree_128, catalog):
    import copy

    from engine.model.scenario import LinkFailure

    assert list(export_texts(fat_tree_128, "htsim", catalog)) == ["traffic.cm"]
    three = generate("fat-tree", gpus=640, server="dgx-a100", switch="qm8700")
    broken = copy.deepcopy(three)
    broken.failures.links.append(LinkFailure("leaf-spine", 1))
    assert list(export_texts(broken, "htsim", catalog)) == ["traffic.cm"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Nodes 8\nTiers 2\nPodsize 8\n", "3-tier"),
        ("Nodes 8\nTiers 3\nPodsize 8\nTier 1\n", "out of order"),
        (
            "Nodes 8\nTiers 3\nPodsize 8\nTier 0\nRadix_Down x\n",
            "Radix_Down must be a whole number",
        ),
        ("Nodes 8\nTiers 3\nPodsize 8\nTier 0\nColour red\n", "unknown or misplaced"),
        ("Tiers 3\nPodsize 8\n", "missing Nodes"),
    ],
)
def test_htsim_topology_reader_refuses(text, words):
    from engine.formats.htsim_topology import read_fat_tree_topo

    with pytest.raises(ScenarioError, match=words):
        read_fat_tree_topo(text)


def test_awkward_lengths_and_speeds_still_read_back(fat_tree_128, catalog):
    import copy

    odd = copy.deepcopy(fat_tree_128)
    odd.bundles[1].length_m = 1 / 3  # a latency with endless decimals
    odd.fabric.packet_loss_rate = 1e-7
    topo = ns3.read_topology(export_texts(odd, "ns3", catalog)["topology.txt"])
    assert {link.error_rate for link in topo.links} == {1e-7}
    fabric = expand(odd, catalog)
    up = fabric.link_latency[np.flatnonzero(fabric.link_upward & (fabric.link_src >= 144))] * 1e9
    read = sorted(link.delay_ns for link in topo.links if link.src >= 144)
    assert read == pytest.approx(sorted(up), rel=1e-12)


def test_astra_workload_of_the_collective(fat_tree_128, catalog, tmp_path):
    import copy

    from engine.formats.astra_workload import read_micro

    files = export_texts(fat_tree_128, "astra", catalog)
    assert read_micro(files["workload.txt"]) == [("collective", "ALLREDUCE", 2**30)]
    gather = copy.deepcopy(fat_tree_128)
    gather.workload.op, gather.workload.message_bytes = "all-gather", 4096.0
    text = export_texts(gather, "astra", catalog)["workload.txt"]
    assert text.splitlines()[2] == "collective -1 1 NONE 0 1 NONE 0 1 ALLGATHER 4096 1"
    broadcast = copy.deepcopy(fat_tree_128)
    broadcast.workload.op = "broadcast"
    assert list(export_texts(broadcast, "astra", catalog)) == ["network.yml"]
    paths = write_export(fat_tree_128, "astra", tmp_path / "net.yml", catalog)
    assert paths == [tmp_path / "net.yml", tmp_path / "net.workload.txt"]


def test_astra_workload_reader():
    from engine.formats.astra_workload import read_micro

    sample = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "samples"
    assert read_micro((sample / "micro-allgather.txt").read_text()) == [
        ("allgather", "ALLGATHER", 1048576)
    ]
    with pytest.raises(ScenarioError, match="12 columns"):
        read_micro("MICRO\n1\nx -1 5 NONE 0\n", "w.txt")
    with pytest.raises(ScenarioError, match="unknown collective 'SPLAT'"):
        read_micro("MICRO\n1\nx -1 5 NONE 0 5 NONE 0 5 SPLAT 10 5\n", "w.txt")
