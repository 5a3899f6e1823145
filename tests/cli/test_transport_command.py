"""``fabriclab transport``, run as a user runs it: ``python main.py transport ...`` in a
subprocess, on the 1k InfiniBand and RoCE presets with small flows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IB = "dgx-h100-ib-ndr-1k"
ROCE = "dgx-h100-roce-spectrumx-1k"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "main.py", "transport", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def ok(*args: str) -> str:
    proc = run(*args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_text_has_the_header_figures_and_ports_table() -> None:
    out = ok(IB, "--workload", "incast:8", "--bytes", "4M", "--victim")
    lines = out.splitlines()
    assert lines[0] == f"{IB}: infiniband (credit), incast 8:1 + victim, 4 MiB per flow"
    assert "per-flow throughput: mean " in out and "GB/s" in out and "(ideal mean " in out
    assert "efficiency " in out and " ms vs ideal " in out
    assert "no drops; lossless" in out
    assert "victim slowdown: " in out
    header = next(i for i, line in enumerate(lines) if line.strip().startswith("hottest ports"))
    for column in ("queue KB max", "mean", "pause %", "ECN %", "drops MB"):
        assert column in lines[header]
    assert lines[header + 1].strip().startswith("leaf[0] -> gpu[0] ")


def test_json_is_the_study() -> None:
    study = json.loads(ok(ROCE, "--senders", "8", "--bytes", "4M", "--victim", "--json"))
    for key in (
        "scenario",
        "technology",
        "mechanisms",
        "workload",
        "throughput_Bps",
        "ideal_throughput_Bps",
        "efficiency",
        "hottest",
        "port_series",
        "flow_series",
        "bundle_pause_fraction",
        "bundle_mark_fraction",
        "victim_slowdown",
        "notes",
    ):
        assert key in study, key
    assert study["scenario"] == ROCE and study["technology"] == "roce"
    assert study["mechanisms"][0] == "pfc"
    w = study["workload"]
    assert (w["kind"], w["senders"], w["bytes_per_flow"], w["victim"]) == (
        "incast",
        8,
        4 * 2**20,
        True,
    )
    assert study["flows"] == 9 and study["finished"] is True


def test_other_workloads_and_a_horizon() -> None:
    study = json.loads(
        ok(
            IB,
            "--workload",
            "all-to-all",
            "--ranks",
            "16",
            "--bytes",
            "64M",
            "--horizon",
            "100us",
            "--json",
        )
    )
    assert study["workload"]["kind"] == "all-to-all"
    assert study["workload"]["horizon_s"] == 1e-4
    assert study["finished"] is False and "victim_slowdown" not in study
    out = ok(IB, "--workload", "collective", "--op", "all-gather", "--ranks", "16", "--bytes", "1M")
    assert "ring all-gather over 16 ranks" in out.splitlines()[0]


def one_line_error(proc: subprocess.CompletedProcess[str], fragment: str) -> None:
    """Exit 2, no traceback, and the reason on one line of stderr."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    hits = [line for line in proc.stderr.splitlines() if fragment in line]
    assert len(hits) == 1, proc.stderr


def test_bad_workload_is_one_line_without_traceback() -> None:
    proc = run(IB, "--workload", "storm")
    one_line_error(proc, "argument --workload: unknown workload 'storm'")
    one_line_error(run(IB, "--workload", "incast:x"), "argument --workload")
    one_line_error(run(IB, "--bytes", "lots"), "argument --bytes")
    one_line_error(run(IB, "--horizon", "3 parsecs"), "argument --horizon")


def test_a_workload_the_fabric_cannot_run_names_the_field() -> None:
    one_line_error(run(IB, "--senders", "5000"), "transport.senders: 5000:1 needs 5001 servers")
    one_line_error(run(IB, "--workload", "permutation", "--victim"), "transport.victim")
    one_line_error(run(IB, "--workload", "incast:4", "--senders", "5"), "disagree")
