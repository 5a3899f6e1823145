"""A run's time series held within a memory budget: coarser in time, never cut short.

The driver samples every class's delivery rate and every link's standing queue and paused
share once per sample interval (`TransportConfig.sample_interval_s`). A 16,384-GPU
permutation has 16,384 classes and 70,917 links: at 1 us over its 0.8 ms that was about
a gigabyte of series, and assembling it took as long as the run itself. Once the rows
would hold more than `MAX_SERIES_VALUES` numbers, neighbouring rows are merged in pairs
and the run samples at twice the interval from then on, so the series always covers the
whole run at an even resolution. Small runs (every test's, a collective stage's) never
reach the budget and keep the interval asked for.

The rows are kept in blocks, one per window of steps as the kernel wrote them, not one
by one: the 64:1 incast's 10 ms are 10,000 rows, and copying them row by row and stacking
them again took about a tenth of its run.
"""

from __future__ import annotations

import numpy as np

# About 128 MiB of float64: the series of 1,000 samples of a network of 5,500 classes
# and 5,500 links, or 100 of the 16k permutation's.
MAX_SERIES_VALUES = 2**24

# (end times, rate per class over each row, standing queue per link at each row's end,
# paused share per link over each row), one row per sample; a row covers the time from the
# row before it (or from the start).
Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class Series:
    """A run's rows so far, in the blocks they came in."""

    def __init__(self, n_classes: int, n_links: int) -> None:
        self.n_classes, self.n_links = n_classes, n_links
        self.blocks: list[Rows] = []
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def add(
        self, time: np.ndarray, rates: np.ndarray, queues: np.ndarray, paused: np.ndarray
    ) -> None:
        """Append rows (arrays with a row axis first; kept, not copied)."""
        if time.size:
            self.blocks.append((time, rates, queues, paused))
            self.count += time.size

    def add_row(self, t: float, rates: np.ndarray, queues: np.ndarray, paused: np.ndarray) -> None:
        """Append one row (its arrays copied)."""
        self.add(
            np.array([t]), rates[None, :].copy(), queues[None, :].copy(), paused[None, :].copy()
        )

    def last_time(self) -> float:
        """The end time of the newest row (0 for none)."""
        return float(self.blocks[-1][0][-1]) if self.blocks else 0.0

    def rows(self) -> Rows:
        """Every row, as one array each (the blocks are joined into one, once)."""
        if not self.blocks:
            return (
                np.zeros(0),
                np.zeros((0, self.n_classes)),
                np.zeros((0, self.n_links)),
                np.zeros((0, self.n_links)),
            )
        if len(self.blocks) > 1:
            self.blocks = [tuple(np.concatenate(parts) for parts in zip(*self.blocks, strict=True))]
        return self.blocks[0]

    def merge_pairs(self, since: float) -> None:
        """Halve the rows in place: see `merge_pairs`."""
        if self.count:
            merged = merge_pairs(self.rows(), since)
            self.blocks, self.count = [merged], merged[0].size


def merge_pairs(rows: Rows, since: float) -> Rows:
    """`rows`, the first starting at `since`, with each two neighbours made one: rates and
    paused shares averaged over their spans, the queue of the later end. The last row
    keeps its end time (an odd one out stays as it is)."""
    time, rates, queues, paused = rows
    pairs = time.size // 2
    starts = np.concatenate(([since], time[:-1]))
    span = time - starts
    span_a, span_b = span[0 : 2 * pairs : 2], span[1 : 2 * pairs : 2]
    total = span_a + span_b
    with np.errstate(invalid="ignore", divide="ignore"):
        w_a = np.where(total > 0.0, span_a / total, 0.5)[:, None]
    w_b = 1.0 - w_a

    def mean(values: np.ndarray) -> np.ndarray:
        return values[0 : 2 * pairs : 2] * w_a + values[1 : 2 * pairs : 2] * w_b

    merged = (time[1 : 2 * pairs : 2], mean(rates), queues[1 : 2 * pairs : 2], mean(paused))
    if time.size % 2:
        merged = tuple(
            np.concatenate((part, whole[-1:])) for part, whole in zip(merged, rows, strict=True)
        )
    # copies of the strided halves, so that the merged rows do not keep the whole ones alive
    return tuple(np.ascontiguousarray(part) for part in merged)


def over_budget(n_rows: int, n_classes: int, n_links: int) -> bool:
    """Whether `n_rows` rows of a network of this size pass `MAX_SERIES_VALUES`."""
    return n_rows * (n_classes + 2 * n_links) > MAX_SERIES_VALUES
