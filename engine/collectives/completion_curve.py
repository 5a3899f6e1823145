"""A stage's completion curve off a transport run: when the slowest class has delivered a
given share of its bytes.

`engine.collectives.stage_transport` reads, for every point of a grid of transfer sizes,
how long each flow class of the stage took to deliver that many bytes per unit of share
(its delivered bytes interpolated over the run's time series, continued at its tail rate
past the run) and keeps the slowest. Done class by class in numpy that is a few thousand
small interpolations, a tenth of the cost of a 3,500-class stage's run; the kernel here
walks each class's delivered bytes once, with numpy's own interpolation arithmetic (the
same numbers, bit for bit, as `slowest_times_reference`, the plain numpy the tests hold it to).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _max_nan(a: float, b: float) -> float:
    """`np.maximum` of two numbers (a NaN wins)."""
    return a if (a >= b or a != a) else b


@njit(cache=True, nogil=True)
def slowest_times(
    time_s: np.ndarray,
    rate: np.ndarray,
    unit: np.ndarray,
    grid: np.ndarray,
    tail_rate: np.ndarray,
    fill: np.ndarray,
) -> np.ndarray:
    """Per point of `grid` (increasing): the longest time any class takes to deliver
    `unit[c] * grid` bytes, less its pipeline `fill[c]` (never below zero).

    `rate[i, c]` is class c's delivery rate over row i of the run, which ends at
    `time_s[i]` (row 0 starts at 0); past the run a class goes on at `tail_rate[c]`."""
    n_rows, n_classes = rate.shape
    n_grid = grid.shape[0]
    clock = np.zeros(n_rows + 1)
    span = np.zeros(n_rows)
    for i in range(n_rows):
        clock[i + 1] = time_s[i]
        span[i] = clock[i + 1] - clock[i]
    times = np.zeros(n_grid)
    reached = np.zeros(n_rows + 1)
    last = n_rows
    for c in range(n_classes):
        total = 0.0
        for i in range(n_rows):
            total += rate[i, c] * span[i]
            reached[i + 1] = total
        end = reached[last]
        slowest = 1e-300 if tail_rate[c] < 1e-300 else tail_rate[c]  # max(rate, 1e-300)
        j = 0
        for g in range(n_grid):
            x = unit[c] * grid[g]
            if x <= end:
                while j + 1 <= last and reached[j + 1] <= x:
                    j += 1  # the grid increases: the search goes on where it stopped
                t = _interp(x, reached, clock, j)
            else:
                t = clock[last] + (x - end) / slowest
            times[g] = _max_nan(times[g], _max_nan(t - fill[c], 0.0))
    return times


@njit(cache=True, nogil=True, inline="always")
def _interp(x: float, xp: np.ndarray, fp: np.ndarray, j: int) -> float:
    """`np.interp(x, xp, fp)` for `x` at most `xp[-1]`, its cases and arithmetic; the
    search starts at `j`, at most the last index with `xp[j] <= x`."""
    last = xp.shape[0] - 1
    if x == xp[last]:
        return fp[last]
    if x < xp[0]:
        return fp[0]
    while j + 1 <= last and xp[j + 1] <= x:
        j += 1
    if xp[j] == x:
        return fp[j]
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
    t = slope * (x - xp[j]) + fp[j]
    if t != t:
        t = slope * (x - xp[j + 1]) + fp[j + 1]
        if t != t and fp[j] == fp[j + 1]:
            t = fp[j]
    return t


def slowest_times_reference(
    time_s: np.ndarray,
    rate: np.ndarray,
    unit: np.ndarray,
    grid: np.ndarray,
    tail_rate: np.ndarray,
    fill: np.ndarray,
) -> np.ndarray:
    """`slowest_times` in plain numpy, class by class (the tests' reference)."""
    n_classes = rate.shape[1]
    span = np.diff(np.concatenate([[0.0], time_s]))
    delivered = np.vstack([np.zeros(n_classes), np.cumsum(rate * span[:, None], axis=0)])
    clock = np.concatenate([[0.0], time_s])
    times = np.zeros(grid.size)
    for c in range(n_classes):
        need = unit[c] * grid
        reached = delivered[:, c]
        after = clock[-1] + (need - reached[-1]) / max(tail_rate[c], 1e-300)
        t = np.where(need <= reached[-1], np.interp(need, reached, clock), after)
        np.maximum(times, np.maximum(t - fill[c], 0.0), out=times)
    return times
