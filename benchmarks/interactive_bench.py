"""Interactive-speed benchmarks (the staged, cached evaluation): the keys of its issue.

Each edit case evaluates a preset as the app does (`engine.analysis.run_evaluation`: the
permutation test, the collective, a training step and the cost report), then times the
evaluation after one edit: a timing-only field (the switch latency, which changes no route)
and a structural one (the leaf-spine speed, which changes capacities and so the routes).
The plot update after it is milliseconds and is not included. The cold 131,072-GPU
evaluation and the 64-point latency sweep start from empty work caches (JIT warm); the
cold evaluation runs in a child so that its peak memory is its own.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

from engine.analysis import clear_caches, run_evaluation
from engine.analysis.sweeps import parse_values, sweep
from engine.catalog.devices import default_catalog
from engine.model.overrides import apply_override
from engine.presets.scenarios import load_preset

BUDGETS = {
    "edit_timing_only_16k_s": 0.3,
    "edit_timing_only_128k_s": 1.5,
    "edit_structural_16k_s": 1.5,
    "evaluate_128k_cold_s": 4.0,
    "evaluate_128k_peak_rss_gb": 1.2,
    "latency_sweep_64_16k_s": 3.0,
}


def edit_seconds(preset: str, path: str, values: tuple[str, str]) -> float:
    """Seconds to re-evaluate `preset` after setting `path` to the second of `values`, the
    caches holding the evaluation at the first (as in the app after the last edit)."""
    catalog = default_catalog()
    base = load_preset(preset)
    run_evaluation(apply_override(base, path, values[0]), catalog)
    edited = apply_override(base, path, values[1])
    t0 = time.perf_counter()
    run_evaluation(edited, catalog)
    return time.perf_counter() - t0


def latency_sweep_64_16k() -> float:
    """A 64-point sweep of the switch latency on the 16k preset (all-reduce busbw), serial
    in this process, from empty caches: the sweep routes once."""
    clear_caches()
    scenario = load_preset("h100-ib-ndr-16k")
    params = [("fabric.switch_latency_ns", parse_values("100:20000:64"))]
    t0 = time.perf_counter()
    sweep(scenario, params, "busbw_GBps")
    return time.perf_counter() - t0


def child_cold_128k() -> None:
    """In a child: warm the JIT on a small preset, empty the caches, time `h100-roce-128k`."""
    catalog = default_catalog()
    run_evaluation(load_preset("hgx-h100-roce-ecmp-1k"), catalog)
    clear_caches()
    t0 = time.perf_counter()
    run_evaluation(load_preset("h100-roce-128k"), catalog)
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "peak_rss_gb": own_peak_rss_gb()}))


def own_peak_rss_gb() -> float:
    """This process's peak resident memory in GB since it started its program.

    Linux's ``ru_maxrss`` outlives ``exec``: a child spawned by a process holding 1.3 GB
    reports at least 1.3 GB whatever it uses itself. ``VmHWM`` is the high-water mark of the
    process's own address space, which ``exec`` replaces, so it is read where it exists."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e9  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # Linux: KiB


def cold_128k() -> dict[str, float]:
    """The cold 131,072-GPU evaluation and the child's peak memory (measured in the child:
    the parent's figure for its children is the largest of every child it ever ran)."""
    out = subprocess.run(
        [sys.executable, __file__, "--child"], capture_output=True, text=True, check=True
    )
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "evaluate_128k_cold_s": figures["seconds"],
        "evaluate_128k_peak_rss_gb": figures["peak_rss_gb"],
    }


def interactive_timings(skip_128k: bool = False) -> dict[str, float]:
    """The interactive keys of benchmarks/run.py."""
    latency = ("fabric.switch_latency_ns", ("600", "900"))
    out = {
        "edit_timing_only_16k_s": edit_seconds("h100-ib-ndr-16k", *latency),
        "edit_structural_16k_s": edit_seconds(
            "h100-ib-ndr-16k", "bundles.leaf-spine.speed_gbps", ("400", "200")
        ),
        "latency_sweep_64_16k_s": latency_sweep_64_16k(),
    }
    if not skip_128k:
        out["edit_timing_only_128k_s"] = edit_seconds("h100-roce-128k", *latency)
        out.update(cold_128k())
    return out


if __name__ == "__main__":
    if "--child" in sys.argv:
        child_cold_128k()
    else:
        print(json.dumps(interactive_timings("--skip-128k" in sys.argv), indent=2))
