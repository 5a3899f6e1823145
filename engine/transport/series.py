"""A run's time series held within a memory budget: coarser in time, never cut short.

The driver samples every class's delivery rate and every link's standing queue and paused
share once per sample interval (`TransportConfig.sample_interval_s`). A 16,384-GPU
permutation has 16,384 classes and 70,917 links: at 1 us over its 0.8 ms that was about
a gigabyte of series, and assembling it took as long as the run itself. Once the rows
would hold more than `MAX_SERIES_VALUES` numbers, neighbouring rows are merged in pairs
and the run samples at twice the interval from then on, so the series always covers the
whole run at an even resolution. Small runs (every test's, a collective stage's) never
reach the budget and keep the interval asked for.
"""

from __future__ import annotations

import numpy as np

# About 128 MiB of float64: the series of 1,000 samples of a network of 5,500 classes
# and 5,500 links, or 100 of the 16k permutation's.
MAX_SERIES_VALUES = 2**24

# (end time, rate per class over the row, standing queue per link at its end, paused
# share per link over the row); a row covers the time from the row before it (or from 0).
Row = tuple[float, np.ndarray, np.ndarray, np.ndarray]


def merge_pairs(rows: list[Row], since: float) -> list[Row]:
    """`rows`, the first starting at `since`, with each two neighbours made one: rates and
    paused shares averaged over their spans, the queue of the later end. The last row
    keeps its end time (an odd one out stays as it is)."""
    merged: list[Row] = []
    start = since
    for i in range(0, len(rows) - 1, 2):
        (t_a, rate_a, _, paused_a), (t_b, rate_b, queue_b, paused_b) = rows[i], rows[i + 1]
        span_a, span_b = t_a - start, t_b - t_a
        total = span_a + span_b
        w_a = span_a / total if total > 0.0 else 0.5
        w_b = 1.0 - w_a
        merged.append((t_b, rate_a * w_a + rate_b * w_b, queue_b, paused_a * w_a + paused_b * w_b))
        start = t_b
    if len(rows) % 2:
        merged.append(rows[-1])
    return merged


def over_budget(n_rows: int, n_classes: int, n_links: int) -> bool:
    """Whether `n_rows` rows of a network of this size pass `MAX_SERIES_VALUES`."""
    return n_rows * (n_classes + 2 * n_links) > MAX_SERIES_VALUES
