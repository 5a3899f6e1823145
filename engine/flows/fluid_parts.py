"""The event-driven fluid run part by part: flows that share no link never change each
other's rates.

`engine.flows.solver.fluid_kernel` re-solves max-min fairness over every flow at every
finish, so its cost is (finish events) x (all flows). A permutation's finish events grow
with its flows (each collision pattern ends at its own times), and on the growth
benchmark's 65,536-host permutation that was 4.7 s of a 34 s transport run (the ideal
shown beside the mechanisms). Max-min fairness splits over the parts of a network (flows
joined by the links they share), so running each part's events on its own flows gives the
same finish times at a cost that follows the parts' sizes. The caller says which part each
flow is in (`engine.transport.copies.parts` finds them for a transport network).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.flows.solver import fluid_kernel, index_array


def fluid_finish_by_parts(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    sizes: np.ndarray,
    part_of_flow: np.ndarray,
) -> np.ndarray:
    """Finish time of every flow of `sizes` bytes, all started at 0, each part (flows of
    one `part_of_flow` label, which must share no link with another part) run on its own;
    ``inf`` for a flow that crosses a link of no capacity."""
    n_flows = flow_ptr.shape[0] - 1
    finish = np.zeros(n_flows)
    if n_flows == 0:
        return finish
    labels = np.ascontiguousarray(part_of_flow, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    part_ptr = np.concatenate([[0], bounds, [n_flows]]).astype(np.int64)
    _by_parts(
        np.ascontiguousarray(flow_ptr, dtype=np.int64),
        index_array(entry_link),
        np.ascontiguousarray(entry_weight, dtype=np.float64),
        np.ascontiguousarray(capacity, dtype=np.float64),
        np.ascontiguousarray(sizes, dtype=np.float64),
        order.astype(np.int64),
        part_ptr,
        finish,
    )
    return finish


@njit(cache=True, nogil=True)
def _by_parts(
    flow_ptr: np.ndarray,
    entry_link: np.ndarray,
    entry_weight: np.ndarray,
    capacity: np.ndarray,
    sizes: np.ndarray,
    order: np.ndarray,
    part_ptr: np.ndarray,
    finish: np.ndarray,
) -> None:
    """Run `fluid_kernel` on each part's flows (``order[part_ptr[p]:part_ptr[p + 1]]``),
    its links numbered afresh, and write their finish times into `finish`."""
    local = np.full(capacity.shape[0], -1, dtype=np.int64)
    for p in range(part_ptr.shape[0] - 1):
        first, last = part_ptr[p], part_ptr[p + 1]
        n = last - first
        n_entries = 0
        for i in range(first, last):
            f = order[i]
            n_entries += flow_ptr[f + 1] - flow_ptr[f]
        ptr = np.zeros(n + 1, dtype=np.int64)
        link = np.empty(n_entries, dtype=np.int64)
        weight = np.empty(n_entries)
        links = np.empty(n_entries, dtype=np.int64)  # the part's links, in local order
        n_links = 0
        at = 0
        for i in range(n):
            f = order[first + i]
            for e in range(flow_ptr[f], flow_ptr[f + 1]):
                g = entry_link[e]
                if local[g] < 0:
                    local[g] = n_links
                    links[n_links] = g
                    n_links += 1
                link[at] = local[g]
                weight[at] = entry_weight[e]
                at += 1
            ptr[i + 1] = at
        part_capacity = np.empty(n_links)
        for k in range(n_links):
            part_capacity[k] = capacity[links[k]]
            local[links[k]] = -1
        part_sizes = np.empty(n)
        for i in range(n):
            part_sizes[i] = sizes[order[first + i]]
        part_finish = np.zeros(n)
        fluid_kernel(
            ptr,
            link,
            weight,
            part_capacity,
            part_sizes,
            part_finish,
            np.zeros(max(n, 1)),
            np.zeros(n_links),
        )
        for i in range(n):
            finish[order[first + i]] = part_finish[i]
