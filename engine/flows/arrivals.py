"""The fluid simulation with arrivals: flows that start at different times.

`engine.flows.solver.simulate_fluid` starts every flow at 0. A traffic matrix may give each
flow its start time (CSV ``start_s``, an htsim ``.cm`` start), so here the active set changes
at two kinds of event: a flow arrives, or one finishes. Between events every active flow
runs at its max-min fair rate (the numba kernel of `engine.flows.solver`), so a flow that
starts after another has ended gets the link to itself: two such flows on one link each
run at its full capacity. The event loop is plain numpy around the kernel: at most two
events per flow, each one max-min solve. `phase_rates` is the steady-state view of the same
matrix: flows grouped by start time into phases run one after the other.
"""

from __future__ import annotations

import numpy as np

from engine.flows.fluid_parts import fluid_finish_by_parts
from engine.flows.solver import link_loads, max_min_rates, simulate_fluid

_EPS = 1e-12  # relative: bytes left below this share of a flow's size count as sent


def finish_with_starts(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    sizes: np.ndarray,
    start_s: np.ndarray,
    part_of_flow: np.ndarray | None = None,
) -> np.ndarray:
    """Finish time (absolute, s) of every flow of `sizes` bytes that starts at `start_s`;
    ``inf`` for a flow that crosses a link of no capacity. With `part_of_flow` (labels of
    parts that share no link) and one start time, each part runs on its own
    (`engine.flows.fluid_parts`)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    start = np.asarray(start_s, dtype=np.float64)
    if start.size == 0 or bool(np.all(start == start[0])):  # one start: the kernel's own run
        offset = float(start[0]) if start.size else 0.0
        if part_of_flow is not None:
            return offset + fluid_finish_by_parts(
                flow_ptr, entry_link, entry_weight, capacity, sizes, part_of_flow
            )
        fluid = simulate_fluid(flow_ptr, entry_link, entry_weight, capacity, sizes)
        return fluid.finish + offset
    n = sizes.shape[0]
    left = sizes.copy()
    finish = np.full(n, np.inf)
    done = np.zeros(n, dtype=bool)
    arrivals = np.sort(np.unique(start))
    now = float(arrivals[0])
    while not done.all():
        active = (start <= now) & ~done
        upcoming = arrivals[arrivals > now]
        if not active.any():
            if upcoming.size == 0:
                break
            now = float(upcoming[0])
            continue
        rates = max_min_rates(flow_ptr, entry_link, entry_weight, capacity, active)
        moving = active & (rates > 0)
        with np.errstate(divide="ignore"):
            to_end = np.where(moving, left / np.where(moving, rates, 1.0), np.inf)
        step = float(to_end.min())
        if upcoming.size:
            step = min(step, float(upcoming[0]) - now)
        if not np.isfinite(step):
            break  # the active flows cannot move and nothing else arrives
        left[moving] -= rates[moving] * step
        now += step
        ended = moving & ((to_end <= step) | (left <= _EPS * sizes))
        finish[ended] = now
        done |= ended
    return finish


def phase_rates(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    flow_start: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Max-min rates when flows of one start time form a phase and the phases run one after
    the other: each flow shares links only with the flows that start with it. Returns the
    rate of every flow and each link's highest load over the phases (bytes/s)."""
    rates = np.zeros(flow_ptr.shape[0] - 1)
    peak = np.zeros(capacity.shape[0])
    for t in np.unique(flow_start):
        active = flow_start == t
        phase = max_min_rates(flow_ptr, entry_link, entry_weight, capacity, active)
        rates[active] = phase[active]
        loads = link_loads(flow_ptr, entry_link, entry_weight, phase, capacity.shape[0])
        np.maximum(peak, loads, out=peak)
    return rates, peak
