"""Side-by-side figures of the current scenario and the pinned ones, for the comparison tables.

A metric names a figure of an engine result (a field of `TrainingResult` or `CostReport`) and
how to show it; `comparison_rows` lays the figures out one metric per row, one scenario per column. The
values are the engine's, only converted to the units engineers read (%, kW).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.analysis import CostReport, TrainingResult

Section = TrainingResult | CostReport


@dataclass(frozen=True)
class Metric:
    """A figure of a result: its row title, its field (`key`) and how to show it."""

    title: str
    key: str
    kind: str = "number"  # "number", "percent" (a fraction shown in %), "kilo" (W shown in kW)


TRAINING_METRICS = (
    Metric("step time (s)", "step_s"),
    Metric("compute (s)", "compute_s"),
    Metric("exposed communication (s)", "exposed_comm_s"),
    Metric("pipeline bubble (s)", "bubble_s"),
    Metric("GPU utilization", "gpu_utilization", "percent"),
    Metric("MFU", "mfu", "percent"),
    Metric("tokens/s", "tokens_per_s"),
)

COST_METRICS = (
    Metric("capex (USD)", "capex_usd"),
    Metric("network capex (USD)", "network_capex_usd"),
    Metric("cost per GPU (USD)", "cost_per_gpu_usd"),
    Metric("network cost per GPU (USD)", "network_cost_per_gpu_usd"),
    Metric("network share of capex", "network_share", "percent"),
    Metric("power (kW)", "power_w", "kilo"),
    Metric("TCO per GPU (USD)", "tco_per_gpu_usd"),
    Metric("USD per busbw GB/s", "usd_per_busbw_GBps"),
    Metric("host CPU cores saved", "host_cores_saved"),
)


def shown_value(metric: Metric, section: Section | None) -> Any:
    """The figure as a table shows it: a number, a "12.3%" text, or None when missing."""
    value = getattr(section, metric.key, None) if section is not None else None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if metric.kind == "percent":
        return f"{value:.1%}"
    if metric.kind == "kilo":
        return float(value) / 1e3
    return value


def comparison_rows(metrics: tuple[Metric, ...], sections: list[Section | None]) -> list[list[Any]]:
    """One row per metric: its title, then its value in each section (None when missing)."""
    return [[m.title, *(shown_value(m, s) for s in sections)] for m in metrics]
