"""The frontier command, the cost command's supply lines and the multi-vendor constraint,
run in-process as a user types them."""

from __future__ import annotations

import json

from cli.main import main


def test_frontier_marks_the_front_of_a_sweep_and_says_which_point_beats_the_other(capsys):
    code = main(
        [
            "frontier",
            "dgx-h100-ib-ndr-1k",
            "--param",
            "fabric.switch_latency_ns",
            "--values",
            "100,20000",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "front, cheapest first: fabric.switch_latency_ns=100" in out
    assert "beaten by fabric.switch_latency_ns=100" in out


def test_frontier_json_of_two_scenarios_and_its_refusals(capsys):
    assert main(["frontier", "dgx-h100-ib-ndr-1k", "hgx-h100-roce-ecmp-1k", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["label"] for p in data["points"]] == ["dgx-h100-ib-ndr-1k", "hgx-h100-roce-ecmp-1k"]
    assert data["front"] and all(data["points"][i]["on_front"] for i in data["front"])
    assert main(["frontier", "dgx-h100-ib-ndr-1k"]) == 2
    assert "two or more" in capsys.readouterr().err


def test_cost_prints_vendor_concentration_and_supply_per_line(capsys):
    assert main(["cost", "dgx-h100-ib-ndr-1k"]) == 0
    out = capsys.readouterr().out
    assert "vendors of the capex: NVIDIA" in out
    assert "single-source" in out and "host CPU cores saved by NIC offload: 0" in out
    assert "qm9700" in out and "0 second sources" in out


def test_multi_vendor_only_refuses_an_infiniband_fabric_naming_its_parts(capsys):
    code = main(["validate", "dgx-h100-ib-ndr-1k", "--set", "constraints.multi_vendor_only=true"])
    err = capsys.readouterr()
    text = err.out + err.err
    assert code == 2
    assert "multi-vendor only" in text and "qm9700" in text and "connectx-7" in text
