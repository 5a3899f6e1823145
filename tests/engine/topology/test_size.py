"""The size estimate before expansion: exact counts, a measured byte figure that errs large,
and a refusal in milliseconds that names what makes a fabric big."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.presets.scenarios import PRESETS, load_preset
from engine.runtime import memory
from engine.topology.expand import expand
from engine.topology.size import MANY_GPUS, SizeEstimate, check_fits, estimate_size

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", list(PRESETS))
def test_the_counts_are_those_of_the_expanded_fabric(name, catalog):
    scenario = load_preset(name)
    size = estimate_size(scenario, catalog)
    fabric = expand(scenario, catalog)
    assert (size.gpus, size.nodes, size.directed_links) == (
        fabric.n_gpus,
        fabric.n_nodes,
        fabric.n_links,
    )
    assert size.flows == fabric.n_gpus * scenario.routing.flows_per_connection


def test_an_impossible_fabric_is_refused_at_once_naming_its_drivers(catalog):
    scenario = apply_override(load_preset("h100-roce-128k"), "groups.servers.count", "16777216")
    memory.set_memory_limit(64 * 2**30)
    try:
        t0 = time.perf_counter()
        with pytest.raises(ScenarioError) as info:
            expand(scenario, catalog)
        elapsed = time.perf_counter() - t0
    finally:
        memory.set_memory_limit(None)
    message = str(info.value)
    assert "too large" in message and "64.0 GiB (--max-memory)" in message
    assert "groups[servers].count (16,777,216 servers)" in message
    assert "GPUs of this design would fit" in message
    assert elapsed < 5.0  # nothing was built (a build of this size would take hours)


def test_a_fabric_past_a_million_gpus_runs_with_a_warning():
    size = SizeEstimate(MANY_GPUS + 8, 0, 0, 0, 10 * 2**30, ())
    warnings = check_fits(size, 64 * 2**30, "test")
    assert len(warnings) == 1 and warnings[0].severity == "warning"
    assert "1,048,584 GPUs" in warnings[0].message
    assert check_fits(SizeEstimate(1024, 0, 0, 0, 2**20, ()), None, "unknown") == []


def test_the_limit_comes_from_the_front_end_then_the_environment(monkeypatch):
    monkeypatch.setenv(memory.ENV_VAR, "3G")
    assert memory.memory_limit() == (3 * 2**30, memory.ENV_VAR)
    memory.set_memory_limit(2**20)
    try:
        assert memory.memory_limit() == (2**20, "--max-memory")
    finally:
        memory.set_memory_limit(None)
    monkeypatch.setenv(memory.ENV_VAR, "plenty")  # unreadable: the machine's memory bounds it
    limit, source = memory.memory_limit()
    assert source == "the memory this machine has available"
    assert limit is None or limit > 0


@pytest.mark.parametrize(
    ("text", "expected"), [("8G", 8 * 2**30), ("512MiB", 512 * 2**20), ("1e9", 10**9)]
)
def test_memory_sizes_read_like_nccl_tests_sizes(text, expected):
    assert memory.parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "-1G", "0"])
def test_an_unreadable_memory_size_is_refused(text):
    with pytest.raises(ValueError):
        memory.parse_bytes(text)


_PEAK = """
import sys
sys.path.insert(0, {root!r})
from cli.main import main
import engine.analysis

def high_water():
    # VmHWM belongs to this process image; getrusage's ru_maxrss would carry the parent's
    # peak over exec (Linux keeps it in the signal struct)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))

base = high_water()
code = main(["evaluate", "h100-ib-ndr-16k", "--parts", "permutation,collective,training,cost",
             "--set", "routing.flows_per_connection=2", "--json"])
print("CODE", code, "PEAK", high_water() - base, file=sys.stderr)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_the_byte_estimate_errs_large_but_not_wildly(catalog):
    # 2 flows per connection: a point the per-element figures were not measured at
    scenario = apply_override(load_preset("h100-ib-ndr-16k"), "routing.flows_per_connection", "2")
    estimate = estimate_size(scenario, catalog).bytes
    run = subprocess.run(
        [sys.executable, "-c", _PEAK.format(root=str(ROOT))],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    code, peak = run.stderr.rsplit("CODE", 1)[1].split()[::2]
    assert code == "0", run.stderr[-2000:]  # the evaluation itself ran
    assert 0.8 * int(peak) <= estimate <= 3.0 * int(peak)
