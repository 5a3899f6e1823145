"""Flow-level rate allocation: max-min fair rates and an event-driven fluid simulation.

Max-min fairness by progressive filling: every unfrozen flow's rate rises at the same pace
until some link fills; the flows crossing a full link freeze there (it is their bottleneck);
the rest go on. Flows may use a fraction of their rate on a link (a sprayed flow splits over
parallel paths), so link load is ``sum(weight * rate)``. The fluid simulation calls the same
kernel after every completion, so flows of unequal size speed up when others finish.

`engine.flows.reference` is the plain-Python twin the tests compare against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

# A link counts as full when less than this fraction of its capacity is left.
SATURATION_TOLERANCE = 1e-12
# Links whose fair share lies within this relative distance of the round's level fill
# together: without it, rounding spreads equal bottlenecks over thousands of rounds.
LEVEL_TIE = 1e-11


@njit(cache=True, nogil=True)
def _heap_push(keys, vals, size, key, val):
    i = size
    keys[i] = key
    vals[i] = val
    while i > 0:
        parent = (i - 1) // 2
        if keys[parent] <= keys[i]:
            break
        keys[parent], keys[i] = keys[i], keys[parent]
        vals[parent], vals[i] = vals[i], vals[parent]
        i = parent
    return size + 1


@njit(cache=True, nogil=True)
def _heap_pop(keys, vals, size):
    key, val = keys[0], vals[0]
    size -= 1
    keys[0] = keys[size]
    vals[0] = vals[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and keys[left + 1] < keys[left]:
            child = left + 1
        if keys[i] <= keys[child]:
            break
        keys[child], keys[i] = keys[i], keys[child]
        vals[child], vals[i] = vals[i], vals[child]
        i = child
    return key, val, size


@njit(cache=True, nogil=True)
def max_min_kernel(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    active: np.ndarray,
    rates: np.ndarray,
) -> int:
    """Write max-min fair rates of the `active` flows into `rates`; return the rounds used.

    The water level rises until the link with the smallest fair share fills; a min-heap of
    link shares (refreshed lazily when flows freeze) finds it without scanning every link or
    flow each round, so thousands of distinct bottlenecks (ECMP collisions) stay cheap.
    Inactive flows get rate 0 and use nothing; a flow with no entries is left at 0.
    """
    n_flows = flow_ptr.shape[0] - 1
    n_links = capacity.shape[0]
    demand = np.zeros(n_links)  # summed weights of unfrozen flows
    live_on = np.zeros(n_links, dtype=np.int64)
    used = np.zeros(n_links)  # capacity taken by frozen flows
    frozen = np.ones(n_flows, dtype=np.bool_)
    n_live = 0
    for f in range(n_flows):
        rates[f] = 0.0
        if active[f] and flow_ptr[f + 1] > flow_ptr[f]:
            frozen[f] = False
            n_live += 1
            for e in range(flow_ptr[f], flow_ptr[f + 1]):
                demand[entry_link[e]] += entry_weight[e]
                live_on[entry_link[e]] += 1
    # Flows of each link (transpose of the flow -> link entries).
    link_ptr = np.zeros(n_links + 1, dtype=np.int64)
    for f in range(n_flows):
        if not frozen[f]:
            for e in range(flow_ptr[f], flow_ptr[f + 1]):
                link_ptr[entry_link[e] + 1] += 1
    for link in range(n_links):
        link_ptr[link + 1] += link_ptr[link]
    fill = link_ptr[:-1].copy()
    link_flow = np.empty(link_ptr[-1], dtype=np.int32)
    for f in range(n_flows):
        if not frozen[f]:
            for e in range(flow_ptr[f], flow_ptr[f + 1]):
                link_flow[fill[entry_link[e]]] = f
                fill[entry_link[e]] += 1
    keys = np.empty(link_ptr[-1] + n_links + 1)
    vals = np.empty(link_ptr[-1] + n_links + 1, dtype=np.int32)
    size = 0
    for link in range(n_links):
        if live_on[link] > 0:
            size = _heap_push(keys, vals, size, capacity[link] / demand[link], link)
    level = 0.0
    rounds = 0
    while n_live > 0 and size > 0:
        key, link, size = _heap_pop(keys, vals, size)
        if live_on[link] == 0:
            continue
        share = max(capacity[link] - used[link], 0.0) / demand[link]
        if share > key * (1.0 + LEVEL_TIE):
            size = _heap_push(keys, vals, size, share, link)  # stale entry: share grew
            continue
        rounds += 1
        if share > level:
            level = share
        for k in range(link_ptr[link], link_ptr[link + 1]):
            f = link_flow[k]
            if frozen[f]:
                continue
            frozen[f] = True
            rates[f] = level
            n_live -= 1
            for e in range(flow_ptr[f], flow_ptr[f + 1]):
                other = entry_link[e]
                used[other] += entry_weight[e] * level
                live_on[other] -= 1
                demand[other] = demand[other] - entry_weight[e] if live_on[other] > 0 else 0.0
    return rounds


def index_array(links: np.ndarray) -> np.ndarray:
    """`links` as a contiguous int32 or int64 array, keeping its width: routes keep link
    indices as int32 (exact), and widening four million of them would copy them again."""
    if links.dtype in (np.int32, np.int64):
        return np.ascontiguousarray(links)
    return np.ascontiguousarray(links, dtype=np.int64)


def max_min_rates(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    active: np.ndarray | None = None,
) -> np.ndarray:
    """Max-min fair rate (bytes/s) of every flow; flows not `active` get 0."""
    n_flows = flow_ptr.shape[0] - 1
    if active is None:
        active = np.ones(n_flows, dtype=np.bool_)
    rates = np.zeros(n_flows)
    max_min_kernel(
        np.ascontiguousarray(flow_ptr, dtype=np.int64),
        index_array(entry_link),
        np.ascontiguousarray(entry_weight, dtype=np.float64),
        np.ascontiguousarray(capacity, dtype=np.float64),
        np.ascontiguousarray(active, dtype=np.bool_),
        rates,
    )
    return rates


def link_loads(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    rates: np.ndarray,
    n_links: int,
) -> np.ndarray:
    """Bytes/s carried by every link at the given flow rates."""
    loads = np.zeros(n_links)
    link_loads_kernel(
        np.ascontiguousarray(flow_ptr, dtype=np.int64),
        index_array(entry_link),
        np.ascontiguousarray(entry_weight, dtype=np.float64),
        np.ascontiguousarray(rates, dtype=np.float64),
        loads,
    )
    return loads


@njit(cache=True, nogil=True)
def link_loads_kernel(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    rates: np.ndarray,
    loads: np.ndarray,
) -> None:
    """Add to `loads` each entry's weight times its flow's rate, entry by entry in order.

    The sums are those of ``bincount(entry_link, weights=entry_weight * rate per entry)``,
    bit for bit (`engine.flows.reference.link_loads_reference`), without the three arrays of
    the entries' size (rates repeated, products, offsets) that took 170 MB at 131,072 GPUs.
    """
    for f in range(flow_ptr.shape[0] - 1):
        rate = rates[f]
        for e in range(flow_ptr[f], flow_ptr[f + 1]):
            loads[entry_link[e]] += entry_weight[e] * rate


@njit(cache=True, nogil=True)
def fluid_kernel(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    sizes: np.ndarray,
    finish: np.ndarray,
    event_times: np.ndarray,
    link_bytes: np.ndarray,
) -> int:
    """Run flows of `sizes` bytes to completion, recomputing max-min rates at each finish.

    Writes each flow's finish time into `finish` and the bytes each link carried into
    `link_bytes`; `event_times` (one slot per flow at most) receives the times rates changed.
    Returns the number of events. Flows that end within a relative 1e-12 of each other end
    together, and the flow that set the step always ends at it: every event ends a flow, so
    there are never more events than flows, however the bytes round (a size of a few
    denormal bytes once left crumbs that never finished and wrote past `event_times`).
    """
    n_flows = flow_ptr.shape[0] - 1
    remaining = sizes.copy()
    active = np.zeros(n_flows, dtype=np.bool_)
    n_active = 0
    for f in range(n_flows):
        finish[f] = 0.0
        if sizes[f] > 0.0 and flow_ptr[f + 1] > flow_ptr[f]:
            active[f] = True
            n_active += 1
    rates = np.zeros(n_flows)
    now = 0.0
    events = 0
    while n_active > 0:
        max_min_kernel(flow_ptr, entry_link, entry_weight, capacity, active, rates)
        dt = np.inf
        first = -1
        for f in range(n_flows):
            if active[f] and rates[f] > 0.0:
                t = remaining[f] / rates[f]
                if t < dt:
                    dt = t
                    first = f
        if dt == np.inf:
            break  # no active flow can move: zero-capacity bottleneck
        now += dt
        event_times[events] = now
        events += 1
        for f in range(n_flows):
            if not active[f]:
                continue
            moved = rates[f] * dt
            for e in range(flow_ptr[f], flow_ptr[f + 1]):
                link_bytes[entry_link[e]] += entry_weight[e] * moved
            remaining[f] -= moved
            if f == first or remaining[f] <= 1e-12 * sizes[f]:
                active[f] = False
                finish[f] = now
                n_active -= 1
    for f in range(n_flows):
        if active[f]:
            finish[f] = np.inf
    return events


@dataclass
class FluidResult:
    """Outcome of a fluid simulation: per-flow finish times and per-link carried bytes."""

    finish: np.ndarray
    event_times: np.ndarray
    link_bytes: np.ndarray

    @property
    def makespan(self) -> float:
        """Time until the last flow finished (s)."""
        return float(self.finish.max()) if self.finish.size else 0.0

    def link_utilization(self, capacity: np.ndarray) -> np.ndarray:
        """Mean utilization of each link over the makespan (0..1)."""
        if self.makespan <= 0:
            return np.zeros_like(capacity)
        return self.link_bytes / (capacity * self.makespan)


def simulate_fluid(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    sizes: np.ndarray,
) -> FluidResult:
    """Finish time of every flow of `sizes` bytes, started together at time 0."""
    n_flows = flow_ptr.shape[0] - 1
    finish = np.zeros(n_flows)
    events = np.zeros(max(n_flows, 1))
    link_bytes = np.zeros(capacity.shape[0])
    n = fluid_kernel(
        np.ascontiguousarray(flow_ptr, dtype=np.int64),
        index_array(entry_link),
        np.ascontiguousarray(entry_weight, dtype=np.float64),
        np.ascontiguousarray(capacity, dtype=np.float64),
        np.ascontiguousarray(sizes, dtype=np.float64),
        finish,
        events,
        link_bytes,
    )
    return FluidResult(finish=finish, event_times=events[:n], link_bytes=link_bytes)
