"""The headless command line, run as a user runs it: ``python main.py ...`` in a subprocess.

Only the 1k presets are evaluated (the 16k and 128k ones take seconds each).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.model.scenario import LinkFailure, scenario_to_dict, to_json
from engine.topology.generators import leaf_spine

ROOT = Path(__file__).resolve().parents[2]
PRESET_NAMES = [
    "dgx-h100-ib-ndr-1k",
    "dgx-h100-roce-spectrumx-1k",
    "hgx-h100-roce-ecmp-1k",
    "rail-only-h100-1k",
    "h100-ib-ndr-16k",
    "h100-roce-128k",
    "b300-ib-xdr-1152",
    "b300-spectrumx-2plane-1k",
    "gb200-nvl72-ib-576",
    "gb200-nvl72-ib-4608",
    "h100-ib-pods-eth-core-256",
    "h100-ib-roce-pods-256",
    "h100-ib-pods-storage-256",
]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "main.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def evaluate_json(*args: str) -> dict[str, Any]:
    proc = run("evaluate", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def assert_refused(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit status 2, every fragment on stderr, no traceback anywhere."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)


# --------------------------------------------------------------------------------------------
# presets, validate


def test_presets_lists_all_six() -> None:
    proc = run("presets")
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    assert names == PRESET_NAMES


def test_presets_json_lists_all_six_with_descriptions() -> None:
    proc = run("presets", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert [p["name"] for p in listed] == PRESET_NAMES
    assert all(p["description"] for p in listed)


def test_validate_preset_exits_zero() -> None:
    proc = run("validate", "dgx-h100-ib-ndr-1k")
    assert proc.returncode == 0, proc.stderr
    assert "dgx-h100-ib-ndr-1k: valid (1,024 GPUs" in proc.stdout
    assert proc.stderr == ""


def test_validate_file_exits_zero(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(to_json(leaf_spine(128, "dgx-h100", "qm9700")), encoding="utf-8")
    proc = run("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "valid (128 GPUs" in proc.stdout


# --------------------------------------------------------------------------------------------
# evaluate


@pytest.fixture(scope="module")
def ecmp() -> dict[str, Any]:
    return evaluate_json("hgx-h100-roce-ecmp-1k")


@pytest.fixture(scope="module")
def spray() -> dict[str, Any]:
    return evaluate_json("hgx-h100-roce-ecmp-1k", "--set", "routing.mode=spray")


def test_evaluate_json_report(ecmp: dict[str, Any]) -> None:
    t, p = ecmp["topology"], ecmp["permutation"]
    assert t["name"] == "hgx-h100-roce-ecmp-1k"
    assert t["gpus"] == 1024
    assert t["servers"] == 128
    assert t["switches"] == {"leaf": 16, "spine": 8}
    assert t["cables_total"] == t["cables_working"] == 2048
    assert p["routing"] == "ecmp"
    assert p["connections"] == 1024
    assert p["unreachable"] == 0
    f = p["throughput_fraction"]
    assert set(f) == {"min", "mean", "max"}
    assert 0 < f["min"] <= f["mean"] <= f["max"] <= 1 + 1e-9
    # static ECMP on a non-blocking fabric loses to hash collisions
    assert f["mean"] < 0.9
    assert p["below_99pct_fraction"] > 0.1


def test_set_routing_mode_spray_beats_ecmp(ecmp: dict[str, Any], spray: dict[str, Any]) -> None:
    assert spray["permutation"]["routing"] == "spray"
    assert spray["topology"] == ecmp["topology"]
    s, e = spray["permutation"]["throughput_fraction"], ecmp["permutation"]["throughput_fraction"]
    assert s["mean"] > e["mean"] + 0.1
    assert s["mean"] > 0.99  # spraying over all spines of a non-blocking fabric: line rate
    assert s["min"] >= e["min"]


def test_set_switch_latency_raises_path_latency() -> None:
    # QM9700 forwards in 330 ns by default; 600 ns adds 270 ns per switch on every path.
    # (On hgx-h100-roce-ecmp-1k 600 ns is already the TH5 catalog value, so use the IB preset.)
    base = evaluate_json("dgx-h100-ib-ndr-1k")
    slow = evaluate_json("dgx-h100-ib-ndr-1k", "--set", "fabric.switch_latency_ns=600")
    pb, ps = base["permutation"], slow["permutation"]
    assert ps["mean_path_latency_s"] > pb["mean_path_latency_s"]
    # A same-leaf path crosses 1 switch, a cross-leaf path 3 (leaf, spine, leaf).
    n, cross = ps["connections"], ps["cross_leaf_connections"]
    switches_per_path = (3 * cross + (n - cross)) / n
    expected = 270e-9 * switches_per_path
    assert ps["mean_path_latency_s"] - pb["mean_path_latency_s"] == pytest.approx(
        expected, rel=1e-6
    )
    assert ps["throughput_fraction"] == pb["throughput_fraction"]


def test_text_report_of_evaluate() -> None:
    proc = run("evaluate", "rail-only-h100-1k")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("rail-only-h100-1k: 1,024 GPUs on 128 servers")
    assert "per-flow throughput / line rate" in proc.stdout


# --------------------------------------------------------------------------------------------
# refusals: exit 2, a clear message, no traceback


def _broken_file(tmp_path: Path) -> Path:
    s = leaf_spine(128, "dgx-h100", "qm9700")
    s.group("spine").model = "qm9999"
    s.failures.links.append(LinkFailure("nope", 1))
    path = tmp_path / "broken.json"
    path.write_text(to_json(s), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["validate", "evaluate"])
def test_invalid_scenario_file_exits_2(tmp_path: Path, command: str) -> None:
    proc = run(command, str(_broken_file(tmp_path)))
    assert_refused(
        proc,
        "2 problem(s) in the scenario:",
        "error: groups[spine].model: unknown switch model 'qm9999'",
        "error: failures.links[0].bundle: no bundle 'nope'",
    )
    assert proc.stdout == ""


def test_mistyped_field_in_file_exits_2(tmp_path: Path) -> None:
    data = scenario_to_dict(leaf_spine(128, "dgx-h100", "qm9700"))
    data["groups"][0]["count"] = "sixteen"
    data["groups"][1]["colour"] = "red"
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    proc = run("validate", str(path))
    assert_refused(proc, f"{path}: groups[0].count: expected a whole number, got 'sixteen'")


def test_newer_version_file_exits_2(tmp_path: Path) -> None:
    data = scenario_to_dict(leaf_spine(128, "dgx-h100", "qm9700"))
    data["version"] = 99
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert_refused(run("validate", str(path)), "format 99", "upgrade FabricLab")


def test_malformed_json_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "format": "fabriclab-scenario",\n  "version": 1,,\n}\n', encoding="utf-8")
    proc = run("evaluate", str(path))
    assert_refused(proc, str(path), "not valid JSON", "line 3 column 16")


def test_missing_file_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-scenario.json"
    proc = run("evaluate", str(missing))
    assert_refused(proc, "no-such-scenario.json", "neither a preset", "nor a file")
    assert "dgx-h100-ib-ndr-1k" in proc.stderr  # says which presets exist


def test_directory_instead_of_file_exits_2(tmp_path: Path) -> None:
    assert_refused(run("validate", str(tmp_path)), "cannot read the file")


def test_bad_set_path_exits_2() -> None:
    proc = run("evaluate", "hgx-h100-roce-ecmp-1k", "--set", "routing.nope=spray")
    assert_refused(proc, "error: routing.nope: no field 'nope' here", "known: mode")
    assert proc.stdout == ""


def test_bad_set_element_exits_2() -> None:
    proc = run("validate", "hgx-h100-roce-ecmp-1k", "--set", "groups.core.count=4")
    assert_refused(proc, "error: groups.core: no element 'core'; have: servers, leaf, spine")


def test_bad_set_value_exits_2() -> None:
    proc = run("validate", "hgx-h100-roce-ecmp-1k", "--set", "groups.leaf.count=many")
    assert_refused(proc, "error: groups.leaf.count: cannot read 'many' as int")


def test_set_without_equals_exits_2() -> None:
    proc = run("validate", "hgx-h100-roce-ecmp-1k", "--set", "routing.mode")
    assert_refused(proc, "expected PATH=VALUE", "'routing.mode'")


def test_set_that_breaks_the_scenario_exits_2() -> None:
    proc = run("validate", "hgx-h100-roce-ecmp-1k", "--set", "routing.mode=random")
    assert_refused(proc, "error: routing.mode: unknown mode 'random'")


def test_set_that_overloads_switch_ports_exits_2() -> None:
    proc = run("validate", "hgx-h100-roce-ecmp-1k", "--set", "bundles.leaf-spine.links_per_pair=9")
    assert_refused(proc, "error: groups[leaf].count:", "more ports than a th5-51t has")


def test_collective_prints_an_nccl_tests_like_table_for_one_server():
    proc = run(
        "collective", "dgx-h100-ib-ndr-1k", "--op", "all-reduce", "--ranks", "8", "--sizes", "8:8G"
    )
    assert proc.returncode == 0, proc.stderr
    assert "algbw (GB/s)" in proc.stdout and "busbw (GB/s)" in proc.stdout
    rows = [
        line.split()
        for line in proc.stdout.splitlines()
        if line.strip() and line.strip()[0].isdigit()
    ]
    assert int(rows[0][0]) == 8 and int(rows[-1][0]) == 8 * 2**30
    assert len(rows) == 16  # 8 B .. 8 GiB in powers of 4


def test_collective_says_what_the_transport_made_of_each_stage():
    # The 1k RoCE preset's NVLS-tree at 1 GiB: its tree stage's run ends inside DCQCN's
    # start dip, and the text says so beside the stage's share of its ideal.
    proc = run("collective", "hgx-h100-roce-ecmp-1k", "--algo", "nvlstree", "--sizes", "1G:1G")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("# transport, ")]
    assert len(lines) == 1 and "double binary tree" in lines[0]
    assert "of its ideal" in lines[0] and "ECN-marked" in lines[0]
    assert "not settled within" in lines[0]


def test_collective_json_has_the_documented_fields_and_one_size():
    proc = run(
        "collective",
        "dgx-h100-ib-ndr-1k",
        "--op",
        "all-to-all",
        "--ranks",
        "32",
        "--sizes",
        "1G:1G",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert len(rows) == 1
    assert {"bytes", "time_s", "algbw_GBps", "busbw_GBps", "algorithm"} <= set(rows[0])
    assert rows[0]["bytes"] == 2**30
    # All-to-all cannot aggregate NICs: of the 31/32 of its buffer a rank sends, 24/32 go
    # through its own 400G NIC (49.7 GB/s after IB headers), so busbw is about 31/24 of it.
    assert rows[0]["busbw_GBps"] == pytest.approx(31 / 24 * 400 / 8 * 4096 / 4122, rel=0.05)


def test_collective_refuses_an_unavailable_algorithm_without_a_traceback():
    proc = run(
        "collective",
        "hgx-h100-roce-ecmp-1k",
        "--algo",
        "sharp",
        "--ranks",
        "64",
        "--sizes",
        "1M:1M",
    )
    assert_refused(proc, "SHARP")


def test_collective_refuses_a_bad_size():
    proc = run("collective", "dgx-h100-ib-ndr-1k", "--sizes", "8x:1G")
    assert_refused(proc, "--sizes", "8x")


def test_sweep_prints_csv_with_one_row_per_value():
    proc = run(
        "sweep",
        "dgx-h100-ib-ndr-1k",
        "--param",
        "fabric.switch_latency_ns",
        "--values",
        "100,5000",
        "--metric",
        "busbw_GBps",
        "--set",
        "workload.ranks=64",
        "--set",
        "workload.message_bytes=1048576",
        "--csv",
        "--workers",
        "1",
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "fabric.switch_latency_ns,busbw_GBps"
    values = [float(line.split(",")[1]) for line in lines[1:]]
    assert len(values) == 2 and values[0] > values[1]


def test_sweep_with_a_bad_path_is_refused():
    proc = run(
        "sweep",
        "dgx-h100-ib-ndr-1k",
        "--param",
        "fabric.nope",
        "--values",
        "1",
        "--metric",
        "busbw_GBps",
    )
    assert_refused(proc, "fabric.nope")
