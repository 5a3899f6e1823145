"""The hybrid fabric on the command line: the template writes a valid scenario, the preset's
bisection is its gateways' ports, and a bundle from InfiniBand straight to Ethernet is
refused by name (exit status 2, no traceback)."""

from __future__ import annotations

import pytest

from engine.catalog.devices import default_catalog
from engine.model.scenario import LinkBundle, from_json, to_json
from engine.topology.expand import header_efficiency
from tests.cli.test_commands import assert_refused, evaluate_json, run

PRESET = "h100-ib-pods-eth-core-256"


def test_the_template_writes_a_valid_hybrid_scenario(tmp_path):
    out = tmp_path / "h.json"
    proc = run("template", "hybrid", "--gpus", "256", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Ethernet core" in proc.stdout
    proc = run("validate", str(out))
    assert proc.returncode == 0, proc.stderr + proc.stdout


def test_the_presets_bisection_is_its_gateways_ports():
    data = evaluate_json(PRESET, "--set", "workload.kind=permutation")
    cat = default_catalog()
    gateway = cat.get("skyway-ga100", "switch")
    roce = cat.technology("roce")
    eff = header_efficiency(
        float(roce.value("header_bytes_per_packet")), float(roce.value("mtu_bytes"))
    )
    # one pod's 2 gateways x 8 Ethernet ports x 100 Gb/s forwarding, RoCE headers
    ports = 2 * int(gateway.value("ethernet_ports"))
    expected = ports * float(gateway.value("forwarding_gbps_per_port")) * 1e9 / 8 * eff
    assert data["topology"]["bisection_bandwidth_Bps"] == pytest.approx(expected, rel=1e-9)
    assert data["topology"]["switches"]["core"] == 6  # 4 gateways and 2 Ethernet switches


def test_a_direct_infiniband_to_ethernet_bundle_is_refused_by_name(tmp_path):
    proc = run("template", "hybrid", "--gpus", "256")
    scenario = from_json(proc.stdout)
    scenario.bundles.append(
        LinkBundle("shortcut", "p1-spine", "eth-core", "full", speed_gbps=200.0)
    )
    path = tmp_path / "mixed.json"
    path.write_text(to_json(scenario), encoding="utf-8")
    refused = run("validate", str(path))
    assert_refused(refused, "bundles[shortcut]", "meet only at a gateway")


def test_the_template_takes_an_ethernet_pod_and_storage_nodes(tmp_path):
    out = tmp_path / "mixed.json"
    proc = run(
        "template", "hybrid", "--gpus", "256", "--ethernet-pod", "sn5600", "--storage-nodes", "4",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "RoCE pod of sn5600" in proc.stdout and "storage network: 4 ×" in proc.stdout
    scenario = from_json(out.read_text(encoding="utf-8"))
    kinds = {g.id: (g.kind, g.model) for g in scenario.groups}
    assert kinds["p2-leaf"] == ("switch", "sn5600") and "p2-gw" not in kinds
    assert kinds["storage-nodes"] == ("storage", "storage-node-2x400g")
    proc = run("validate", str(out))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    proc = run("shared", str(out), "--jobs", "1", "--checkpoint-servers", "4")
    assert proc.returncode == 0, proc.stderr
    assert "4 storage nodes" in proc.stdout
    assert_refused(run("template", "leaf-spine", "--gpus", "256", "--ethernet-pod", "sn5600"))


def test_evaluate_reports_the_storage_network_and_its_checkpoint():
    """The storage preset's 8 nodes: every GPU writes the workload's size, spread evenly,
    so the checkpoint runs at the nodes' drives (8 x 6 x 7 GB/s, catalog), below their
    ports; the text says the same, and a design without storage has no such part."""
    data = evaluate_json("h100-ib-pods-storage-256", "--parts", "permutation")
    storage = data["storage"]
    node = default_catalog().get("storage-node-2x400g", "storage")
    drives = 8 * node.value("drives") * node.value("drive_write_GBps") * 1e9
    assert storage["nodes"] == 8 and storage["node_drives_Bps"] == pytest.approx(drives)
    assert storage["checkpoint_gpus"] == 256
    assert storage["checkpoint_bound"] == "storage nodes' drives"
    assert storage["checkpoint_Bps"] == pytest.approx(drives, rel=1e-9)
    assert storage["node_ports_Bps"] > drives
    proc = run("evaluate", "h100-ib-pods-storage-256", "--parts", "permutation")
    assert proc.returncode == 0, proc.stderr
    assert "storage network: 8 storage nodes" in proc.stdout
    assert "bound by the storage nodes' drives" in proc.stdout
    assert "storage" not in evaluate_json(PRESET, "--parts", "permutation")
