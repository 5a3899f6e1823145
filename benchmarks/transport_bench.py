"""Transport-model benchmarks (engine.transport): the speed figures of its issue.

A 1,024-host permutation of 2 MB flows on the RoCE (PFC, ECN, DCQCN) and the InfiniBand
(credits) 1k presets, run to completion; a 64:1 incast for 10 ms of simulated time; the
numba step kernel against its plain-Python twin on the same small incast (kernel calls
alone: the driver around them is the same Python for both); and the all-to-all phase of
every GPU through the transport study (64 KiB per GPU pair, run to the end, by kinds of
flows: `engine.collectives.lumped_all_to_all`) on the 16,384-GPU InfiniBand preset
(adaptive routing) and on the 131,072-GPU RoCE preset (per-flow ECMP at its balanced
limit), each in a child process so that its peak memory is its own. Warm: each case runs
once first to load the JIT cache.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace

from engine.catalog.devices import default_catalog
from engine.flows.traffic import permutation
from engine.presets.scenarios import load_preset
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.transport.defaults import transport_config
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.simulate import simulate
from engine.transport.workloads import incast, switch_spec

BUDGETS = {
    "transport_permutation_1k_roce_s": 1.0,
    "transport_permutation_1k_ib_s": 1.0,
    "transport_incast_64_10ms_s": 0.5,
    "transport_all_to_all_16k_s": 30.0,
    "transport_all_to_all_16k_peak_rss_gb": 4.0,
    "transport_all_to_all_131k_s": 120.0,
}
ALL_TO_ALL_CASES = {
    "16k": ("h100-ib-ndr-16k", None),
    "131k": ("h100-roce-128k", None),
}
MIN_SPEEDUP = 50.0


def _permutation_case(preset: str):
    catalog = default_catalog()
    fabric = expand(load_preset(preset), catalog)
    src, dst = permutation(fabric, fabric.scenario.workload.seed)
    routing = replace(fabric.scenario.routing, mode="ecmp")  # one path per flow
    routed = Router(fabric).route(src, dst, routing, connection_bytes=2e6)
    network = scenario_network(fabric, routed, catalog)
    return network, scenario_transport_config(fabric.scenario, catalog)


def _timed(network, config, **kwargs) -> float:
    simulate(network, config, **kwargs)  # warm-up
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        result = simulate(network, config, **kwargs)
        best = min(best, time.perf_counter() - t0)
    assert result.finished or kwargs.get("horizon_s")
    return best


def transport_timings() -> dict[str, float]:
    """The transport keys of benchmarks/run.py."""
    out: dict[str, float] = {}
    for key, preset in (
        ("transport_permutation_1k_roce_s", "hgx-h100-roce-ecmp-1k"),
        ("transport_permutation_1k_ib_s", "dgx-h100-ib-ndr-1k"),
    ):
        out[key] = _timed(*_permutation_case(preset))
    catalog = default_catalog()
    config = transport_config(catalog, "roce", "sn5600")
    spec = switch_spec(catalog, "sn5600", 400)
    out["transport_incast_64_10ms_s"] = _timed(incast(64, spec, 1e12), config, horizon_s=10e-3)
    out["transport_kernel_speedup_vs_reference"] = kernel_speedup(config, spec)
    for name in ALL_TO_ALL_CASES:
        figures = json.loads(
            subprocess.run(
                [sys.executable, __file__, name], capture_output=True, text=True, check=True
            ).stdout
        )
        out[f"transport_all_to_all_{name}_s"] = figures["seconds"]
        if name == "16k":
            out["transport_all_to_all_16k_peak_rss_gb"] = figures["peak_rss_gb"]
    return out


def all_to_all_seconds(preset: str, mode: str | None) -> float:
    """Seconds for the transport study of the all-to-all of every GPU of `preset` (routing
    mode `mode` when given), 64 KiB per pair, from the preset's name to the summed-up study."""
    from engine.analysis.results import TransportWorkload
    from engine.analysis.transport_study import transport_study

    t0 = time.perf_counter()
    scenario = load_preset(preset)
    if mode is not None:
        scenario.routing = replace(scenario.routing, mode=mode)
    study = transport_study(scenario, TransportWorkload(kind="all-to-all", bytes_per_flow=65536.0))
    seconds = time.perf_counter() - t0
    if not study.finished:
        raise RuntimeError(f"the all-to-all of {preset} did not finish")
    return seconds


def child_all_to_all(name: str) -> None:
    """In a child: print the all-to-all case's seconds and peak memory, after a 1k run of the
    same technology has loaded the JIT cache."""
    from interactive_bench import own_peak_rss_gb

    preset, mode = ALL_TO_ALL_CASES[name]
    warm = "dgx-h100-ib-ndr-1k" if "-ib-" in preset else "dgx-h100-roce-spectrumx-1k"
    all_to_all_seconds(warm, None)
    seconds = all_to_all_seconds(preset, mode)
    print(json.dumps({"seconds": seconds, "peak_rss_gb": own_peak_rss_gb()}))


if __name__ == "__main__":
    child_all_to_all(sys.argv[1])


def kernel_speedup(config, spec, steps: int = 1000) -> float:
    """The step kernel against its plain-Python twin: the same 8:1 incast, the same state,
    `steps` steps in one call each (the driver around them is common Python and is left out)."""
    from engine.transport import reference
    from engine.transport.step import run_window
    from engine.transport.tables import (
        build_tables,
        initial_state,
        new_rows,
        new_sample_acc,
        new_stats,
    )

    tables, _ = build_tables(incast(8, spec, 1e12), config)
    n_links, n_classes = tables.links.capacity.shape[0], tables.classes.size.shape[0]

    def timed(runner) -> float:
        state = initial_state(tables, config)
        stats, acc = new_stats(n_links, n_classes), new_sample_acc(n_links, n_classes)
        rows = new_rows(steps // 5 + 2, n_links, n_classes)
        t0 = time.perf_counter()
        assert runner(tables, state, stats, acc, rows, steps, 5) == steps
        return time.perf_counter() - t0

    timed(run_window)  # warm-up: the JIT cache
    return timed(reference.run_window) / min(timed(run_window) for _ in range(3))
