"""The figures that decide between fabrics, for two or more evaluated scenarios at once.

`decision_table` lays out what an architect weighs when choosing, say, InfiniBand or RoCE for
a cluster: the collective's bus bandwidth at the message sizes that matter (a latency-bound
2 MiB, a 128 MiB gradient bucket, a bandwidth-bound 2 GiB), the permutation test's
throughput, the training step time, GPU utilization and tokens/s, and what it costs (capex,
opex per year, power, dollars per GPU, per GB/s of busbw and per token/s). The first
scenario is the baseline: each row carries every value, its absolute and relative delta
against the baseline and which value is the better one. The reports are the app's
`AppReport`s (or any `EvaluationResult`); the figures are read from them, never recomputed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from engine.analysis.results import DecisionRow, DecisionTable, EvaluationResult

# The message sizes a decision looks at, with what each stands for.
DECIDING_BYTES: tuple[tuple[int, str], ...] = (
    (2 * 1024**2, "2 MiB"),  # latency-bound: small tensors, pipeline activations
    (128 * 1024**2, "128 MiB"),  # a gradient bucket
    (2 * 1024**3, "2 GiB"),  # bandwidth-bound
)

Getter = Callable[[EvaluationResult], float | None]


def _opex_per_year(r: EvaluationResult) -> float | None:
    cost = r.cost
    if cost is None or not cost.years:
        return None
    return cost.opex_usd / cost.years


# title, unit, which way is better, where the figure sits in an evaluation
_FIGURES: tuple[tuple[str, str, str, Getter], ...] = (
    (
        "permutation throughput (mean)",
        "fraction",
        "higher",
        lambda r: r.permutation.throughput_fraction.mean if r.permutation else None,
    ),
    ("training step time", "s", "lower", lambda r: r.training.step_s if r.training else None),
    (
        "GPU utilization",
        "fraction",
        "higher",
        lambda r: r.training.gpu_utilization if r.training else None,
    ),
    ("tokens/s", "tokens/s", "higher", lambda r: r.training.tokens_per_s if r.training else None),
    ("capex", "USD", "lower", lambda r: r.cost.capex_usd if r.cost else None),
    ("network capex", "USD", "lower", lambda r: r.cost.network_capex_usd if r.cost else None),
    ("opex per year", "USD", "lower", _opex_per_year),
    ("power", "W", "lower", lambda r: r.cost.power_w if r.cost else None),
    ("cost per GPU", "USD", "lower", lambda r: r.cost.cost_per_gpu_usd if r.cost else None),
    (
        "USD per busbw GB/s",
        "USD per GB/s",
        "lower",
        lambda r: r.cost.usd_per_busbw_GBps if r.cost else None,
    ),
    (
        "USD per token/s",
        "USD per token/s",
        "lower",
        lambda r: r.cost.usd_per_token_per_s if r.cost else None,
    ),
)


def busbw_at(report: EvaluationResult, size: int) -> float | None:
    """The collective's best busbw (GB/s) at `size` bytes, or at the swept size nearest to it
    within a factor of two; ``None`` when the report has no collective or no size that near."""
    collective = report.collective
    if collective is None or not collective.rows:
        return None
    row = min(collective.rows, key=lambda r: abs(math.log(max(r.bytes, 1) / size)))
    if abs(math.log(max(row.bytes, 1) / size)) > math.log(2) + 1e-9:
        return None
    return row.busbw_GBps


def _collective_figures(reports: Sequence[EvaluationResult]) -> list[tuple[str, str, str, Getter]]:
    """One busbw row per collective op the reports ran and deciding size."""
    ops = sorted({r.collective.op for r in reports if r.collective is not None})
    figures: list[tuple[str, str, str, Getter]] = []
    for op in ops:
        for size, name in DECIDING_BYTES:

            def getter(r: EvaluationResult, op: str = op, size: int = size) -> float | None:
                if r.collective is None or r.collective.op != op:
                    return None
                return busbw_at(r, size)

            figures.append((f"{op} busbw at {name}", "GB/s", "higher", getter))
    return figures


def _number(value: object) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def decision_row(title: str, unit: str, better: str, values: Sequence[float | None]) -> DecisionRow:
    """A row of `values` (the first the baseline) with its deltas and its better value."""
    base = values[0] if values else None
    deltas = tuple(
        None if i == 0 or v is None or base is None else v - base for i, v in enumerate(values)
    )
    relative = tuple(None if d is None or not base else d / abs(base) for d in deltas)
    present = [(v, i) for i, v in enumerate(values) if v is not None]
    best = None
    if len(present) >= 2 and len({v for v, _i in present}) > 1:
        sign = -1.0 if better == "higher" else 1.0
        best = min(present, key=lambda p: (sign * p[0], p[1]))[1]  # ties: the first
    return DecisionRow(title, unit, better, tuple(values), deltas, relative, best)


def decision_table(labels: Sequence[str], reports: Sequence[EvaluationResult]) -> DecisionTable:
    """The deciding figures of `reports` (named by `labels`, the first the baseline).

    A figure no report has is left out; one that only some have shows ``None`` for the others.
    """
    if len(labels) != len(reports):
        raise ValueError(f"{len(labels)} labels for {len(reports)} reports")
    rows = []
    for title, unit, better, getter in [*_collective_figures(reports), *_FIGURES]:
        values = [_number(getter(r)) for r in reports]
        if all(v is None for v in values):
            continue
        rows.append(decision_row(title, unit, better, values))
    return DecisionTable(tuple(labels), tuple(rows))
