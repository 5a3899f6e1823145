"""``fabriclab export`` and ``fabriclab import``: files written and read back through the
command line, and bad input a message naming the file and line with exit 2, never a
traceback."""

from __future__ import annotations

import json
from pathlib import Path

from cli.commands import EXIT_INVALID, EXIT_OK
from cli.main import main
from engine.analysis import open_library
from engine.model.scenario import from_json, to_json

SCENARIO = "dgx-h100-ib-ndr-1k"
SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "samples"


def test_export_every_format(tmp_path, capsys):
    assert main(["export", SCENARIO, "--format", "ns3", str(tmp_path / "ns3")]) == EXIT_OK
    topo = (tmp_path / "ns3" / "topology.txt").read_text().splitlines()
    # 1024 GPUs + 128 NVLink switches + 32 leaves + 16 spines; NVLink, NIC and uplink cables
    assert topo[0].split() == ["1200", "176", str(1024 + 1024 + 1024)]
    assert (tmp_path / "ns3" / "flow.txt").read_text().splitlines()[0] == "1024"
    for fmt, name in (("htsim", "t.cm"), ("astra", "n.yml"), ("graphml", "f.graphml")):
        assert main(["export", SCENARIO, "--format", fmt, str(tmp_path / name)]) == EXIT_OK
    assert (tmp_path / "t.cm").read_text().splitlines()[1] == "Nodes 1024"
    assert "npus_count: [ 8, 128 ]" in (tmp_path / "n.yml").read_text()
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'f.graphml'}" in out


def test_export_json_and_overrides(tmp_path, capsys):
    path = tmp_path / "x.cm"
    args = ["export", SCENARIO, "--format", "htsim", str(path), "--json"]
    assert main([*args, "--set", "workload.message_bytes=4096"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out) == {"format": "htsim", "files": [str(path)]}
    assert "size 4096" in path.read_text()


def test_import_round_trip_to_a_file_and_the_library(tmp_path, capsys):
    graph = tmp_path / "f.graphml"
    assert main(["export", SCENARIO, "--format", "graphml", str(graph)]) == EXIT_OK
    out = tmp_path / "s.json"
    assert main(["import", str(graph), "--out", str(out), "--name", "back"]) == EXIT_OK
    scenario = from_json(out.read_text())
    assert scenario.metadata.name == "back"
    assert [(g.id, g.count) for g in scenario.groups] == [
        ("servers", 128),
        ("leaf", 32),
        ("spine", 16),
    ]
    err = capsys.readouterr().err
    assert "128 x dgx-h100 (servers)" in err and "servers-leaf rail at 400G" in err
    lib = tmp_path / "lib.fabriclab"
    assert main(["import", str(graph), "--library", str(lib), "--name", "imported one"]) == EXIT_OK
    assert "stored imported one (version 1)" in capsys.readouterr().out
    with open_library(lib, create=False, read_only=True) as opened:
        assert opened.load("imported one").groups[0].count == 128


def test_import_prints_json_by_default(capsys):
    assert main(["import", str(SAMPLES / "two-leaves.links.csv"), "--switch", "qm9700"]) == EXIT_OK
    scenario = from_json(capsys.readouterr().out)
    assert [g.count for g in scenario.groups] == [4, 2, 1]


def test_bad_files_are_named_with_their_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("node_a,port_a,node_b,port_b,rate\nsrv1,nic0,leaf1,p1,400\nsrv1,nic1,leaf1\n")
    assert main(["import", str(bad)]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert f"{bad}:3: 3 columns" in err and "Traceback" not in err
    assert main(["import", str(tmp_path / "none.graphml")]) == EXIT_INVALID
    assert "no such file" in capsys.readouterr().err
    assert main(["import", str(SAMPLES / "perm-4.cm")]) == EXIT_INVALID
    assert "unknown topology file type '.cm'" in capsys.readouterr().err
    assert (
        main(["export", SCENARIO, "--format", "htsim", str(tmp_path / "no" / "x.cm")])
        == EXIT_INVALID
    )
    assert "cannot write" in capsys.readouterr().err


def _small(tmp_path) -> str:
    """A 128-GPU leaf-spine scenario file (quick to evaluate)."""
    from engine.analysis import generate

    path = tmp_path / "small.json"
    path.write_text(to_json(generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700")))
    return str(path)


def test_evaluate_and_transport_run_a_traffic_file(tmp_path, capsys):
    scenario = _small(tmp_path)
    traffic = SAMPLES / "traffic.csv"
    args = ["evaluate", scenario, "--traffic", str(traffic), "--parts", "permutation", "--json"]
    assert main(args) == EXIT_OK
    captured = capsys.readouterr()
    assert json.loads(captured.out)["permutation"]["connections"] == 3
    assert "3 flows of" in captured.err
    assert (
        main(["evaluate", scenario, "--traffic", str(traffic), "--parts", "permutation"]) == EXIT_OK
    )
    assert "traffic matrix, routing" in capsys.readouterr().out
    cm = tmp_path / "t.cm"
    cm.write_text(
        "Nodes 128\nConnections 2\n0->8 id 1 start 0 size 1000000\n16->0 id 2 start 0 size 500\n"
    )
    assert main(["transport", scenario, "--traffic", str(cm)]) == EXIT_OK
    assert "traffic matrix, each flow its own bytes" in capsys.readouterr().out
    # the hand-written 4-host matrix stays inside server 0 (GPUs 0-3): nothing crosses the network
    assert main(["transport", scenario, "--traffic", str(SAMPLES / "perm-4.cm")]) == EXIT_INVALID
    assert "stays inside one server" in capsys.readouterr().err


def test_a_bad_traffic_file_is_named(tmp_path, capsys):
    scenario = _small(tmp_path)
    bad = tmp_path / "t.csv"
    bad.write_text("0,8,100\n1,9\n")
    assert main(["evaluate", scenario, "--traffic", str(bad)]) == EXIT_INVALID
    assert f"{bad}:2: 2 columns" in capsys.readouterr().err
    past = tmp_path / "p.csv"
    past.write_text("0,800,100\n")
    assert main(["transport", scenario, "--traffic", str(past)]) == EXIT_INVALID
    assert "workload.matrix[0]: GPU 800 does not exist" in capsys.readouterr().err


def test_export_simai_first_line(tmp_path):
    out = tmp_path / "simai"
    assert main(["export", SCENARIO, "--format", "ns3", str(out), "--simai"]) == EXIT_OK
    assert (out / "topology.txt").read_text().splitlines()[0] == "1200 8 128 48 3072 H100"
