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
ROW_KEYS = ("switch_latency_ns", "gpu_utilization", "mfu", "step_s", "exposed_comm_s")


def latency_rows(
    scenario_doc: dict[str, Any],
    catalog: Catalog,
    latencies_ns: tuple[float, ...] = LATENCIES_NS,
    on_row=None,
    should_stop=None,
) -> list[dict[str, float]] | None:
    """The engine's training step at each latency of `latencies_ns` (`ROW_KEYS` per row).

    `on_row(rows_so_far)` hears each point; `should_stop()` is asked before each point and
    ends the run early (returning None). A scenario that cannot train raises `ScenarioError`.
    """
    fabric = expand(scenario_from_dict(scenario_doc), catalog)
    rows: list[dict[str, float]] = []
    for latency in latencies_ns:
        if should_stop is not None and should_stop():
            return None
        row = latency_sweep(fabric, None, [latency], catalog)[0]
        rows.append({key: float(row[key]) for key in ROW_KEYS})
        if on_row is not None:
            on_row(list(rows))
    return rows
