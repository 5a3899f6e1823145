"""GPU utilization vs switch latency: the training step at each latency, point by point.

One point costs a whole training step, so callers get each row as soon as it is done
(`on_row`) and may stop between points (`should_stop`).
"""

from __future__ import annotations

from typing import Any

from engine.catalog.devices import Catalog
from engine.model.scenario import scenario_from_dict
from engine.topology.expand import expand
from engine.training.step import latency_sweep

# Per-switch forwarding latency: 0.5 to 20 µs, about evenly on a log axis.
LATENCIES_NS = (500.0, 750.0, 1000.0, 1500.0, 2000.0, 3000.0, 5000.0, 7500.0, 10000.0, 20000.0)
ROW_KEYS = (
    "switch_latency_ns",
    "path_latency_ns",
    "gpu_utilization",
    "mfu",
    "step_s",
    "exposed_comm_s",
    "bubble_s",
)
KINDS = ("tp", "cp", "ep", "pp", "dp")


def latency_rows(
    scenario_doc: dict[str, Any],
    catalog: Catalog,
    latencies_ns: tuple[float, ...] = LATENCIES_NS,
    on_row=None,
    should_stop=None,
) -> list[dict[str, float]] | None:
    """The engine's training step at each latency of `latencies_ns` (`ROW_KEYS` per row, and
    ``exposed_<kind>_s`` for each parallelism kind).

    `on_row(rows_so_far)` hears each point; `should_stop()` is asked before each point and
    ends the run early (returning None). A scenario that cannot train raises `ScenarioError`.
    """
    fabric = expand(scenario_from_dict(scenario_doc), catalog)
    rows: list[dict[str, float]] = []
    for latency in latencies_ns:
        if should_stop is not None and should_stop():
            return None
        row = latency_sweep(fabric, None, [latency], catalog)[0]
        flat = {key: float(row[key]) for key in ROW_KEYS}
        flat.update({f"exposed_{k}_s": float(row["exposed_s"][k]) for k in KINDS})
        rows.append(flat)
        if on_row is not None:
            on_row(list(rows))
    return rows


def latency_reach(rows: list[dict[str, float]]) -> dict[str, Any]:
    """Where the latency of a curve reaches the step, from its first row to its last.

    The switch and path latencies at both ends, the step's relative growth, the relative drop
    of GPU utilization, and how much each kind's exposed communication (and the bubble) grew,
    in seconds, largest first: the parts of the step on the critical path that pay latency.
    """
    if len(rows) < 2:
        raise ValueError("a latency curve needs two rows at least")
    first, last = rows[0], rows[-1]
    grown = {k: last[f"exposed_{k}_s"] - first[f"exposed_{k}_s"] for k in KINDS}
    grown["bubble"] = last["bubble_s"] - first["bubble_s"]
    return {
        "switch_latency_ns": (first["switch_latency_ns"], last["switch_latency_ns"]),
        "path_latency_ns": (first["path_latency_ns"], last["path_latency_ns"]),
        "step_growth": last["step_s"] / first["step_s"] - 1.0,
        "utilization_drop": 1.0 - last["gpu_utilization"] / first["gpu_utilization"],
        "grown_s": dict(sorted(grown.items(), key=lambda kv: -kv[1])),
    }
