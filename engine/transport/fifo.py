"""FIFO egress queues: every switch egress queue serves its bytes in the order they came.

Why not the even service of every class's queued bytes: a sender that PFC pauses for a
while leaves a gap among its bytes in a real queue, and the gap reaches the receiver a
queueing delay later. Under DCQCN that gap is a stretch without marked packets, so without
a CNP, in which the sender's byte counter completes and fast recovery lifts it: the
winners a high fan-in incast shows per packet (docs/transport.md, "High fan-in under PFC
and DCQCN"). An even service hands every class its share of every step and erases the
gap.

The state (`engine.transport.structures`): per link a ring of bins (a column of
`LinkState.fifo_bytes`, the bytes in each bin) with the absolute indices of its oldest and
newest bins (`fifo_head`, `fifo_tail`; empty when the head has passed the tail); per entry
in the queue its bytes in each bin of the ring (a column of `ClassState.fifo`) and the
newest bin it has bytes in (`fifo_last`). The columns are
the run's first network's (`fifo_at` of each link and entry), so that a run cut to its
live part (`engine.transport.live`) keeps the rings in place. A bin gathers the arrivals of
`Knobs.fifo_bin_steps` steps; a step without arrivals opens none (`fifo_stamp`: the time
the newest opened at), so that the head never walks empty bins. A ring holds a power of
two of them, so that a bin's place in it is a mask (`engine.transport.fifo_shape`). A link's
service empties its oldest bins whole and takes a share of the next, each entry's bytes in
that bin in proportion. When the ring is full, arrivals join its newest bin: the tail
coarsens while the head, being served, keeps its resolution. A queue only one class uses
(`LinkTable.shared` false) keeps no bins: any order serves it alike. A ring of no bins is
the even service (`engine.transport.queues.serve_queues`).

Inlined into the step kernel; `engine.transport.fifo_reference` is the plain-Python twin.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.transport.indexing import index, ring_mask
from engine.transport.structures import State, Tables


@njit(cache=True, nogil=True, inline="always")
def fifo_plan(
    tables: Tables,
    state: State,
    allowed: np.ndarray,
    plan: tuple,
    begin: int,
    count: int,
) -> None:
    """Serve links ``begin:begin+count`` in bins: for each, the bins this step empties
    wholly (``first[k]`` up to ``full_end[k]``) and the share `part[k]` it takes of the
    next one. Moves each link's head past what it emptied."""
    first, full_end, part = plan
    ls = state.links
    bins, head, tail, at_link = ls.fifo_bytes, ls.fifo_head, ls.fifo_tail, ls.fifo_at
    mask = ring_mask(bins.shape[0])
    dt = tables.knobs.dt
    shared = tables.links.shared
    for at in range(count):
        k = begin + at
        h, t = head[k], tail[k]
        if h > t or not shared[k]:
            continue  # empty, or one class's: `fifo_take` reads no plan of it
        col = index(at_link[k])
        budget = allowed[k] * dt
        first[k] = h
        share = 0.0
        while h <= t:
            pos = h & mask
            held = bins[pos, col]
            if held <= budget:
                budget -= held
                bins[pos, col] = 0.0
                h += 1
            else:
                share = budget / held
                bins[pos, col] = held - budget
                break
        full_end[k] = h
        part[k] = share
        head[k] = h


@njit(cache=True, nogil=True, inline="always")
def fifo_take(state: State, plan: tuple, e: int, k: int, queued: float) -> float:
    """Bytes entry `e` (on link `k`, `queued` bytes in its queue) leaves with this step,
    as `fifo_plan` served its link: all of them once every bin it has bytes in is
    emptied, else its bytes in the emptied bins and its share of the next."""
    first, full_end, part = plan
    cs = state.classes
    fifo, last, col = cs.fifo, cs.fifo_last, index(cs.fifo_at[e])
    mask = ring_mask(fifo.shape[0])
    if last[e] < state.links.fifo_head[k]:
        # every bin it has bytes in is emptied (this step, from `first[k]` on, or before:
        # an empty ring has no plan)
        for b in range(max(first[k], last[e] - mask), last[e] + 1):
            fifo[b & mask, col] = 0.0
        return queued
    out = 0.0
    for b in range(first[k], full_end[k]):
        pos = b & mask
        out += fifo[pos, col]
        fifo[pos, col] = 0.0
    if part[k] > 0.0:
        pos = full_end[k] & mask
        x = fifo[pos, col] * part[k]
        fifo[pos, col] -= x
        out += x
    return min(out, queued)


@njit(cache=True, nogil=True, inline="always")
def fifo_forget(state: State, e: int, k: int) -> None:
    """Entry `e`'s queue on link `k` left with its crumbs: take what its bins still hold
    out of them."""
    cs, ls = state.classes, state.links
    fifo, col = cs.fifo, index(cs.fifo_at[e])
    bins, lcol = ls.fifo_bytes, index(ls.fifo_at[k])
    mask = ring_mask(fifo.shape[0])
    for b in range(ls.fifo_head[k], cs.fifo_last[e] + 1):
        pos = b & mask
        bins[pos, lcol] = max(bins[pos, lcol] - fifo[pos, col], 0.0)
        fifo[pos, col] = 0.0


@njit(cache=True, nogil=True, inline="always")
def fifo_arrive(state: State, now: int, e: int, k: int, nbytes: float) -> None:
    """`nbytes` of entry `e` join link `k`'s queue at bin time `now` (this step's): into
    the newest bin if it opened at `now`, else into a new one, or the newest when the ring
    is full."""
    cs, ls = state.classes, state.links
    head, tail, stamp = ls.fifo_head, ls.fifo_tail, ls.fifo_stamp
    mask = ring_mask(cs.fifo.shape[0])
    if (tail[k] < head[k] or stamp[k] < now) and tail[k] - head[k] < mask:
        tail[k] += 1
    stamp[k] = now
    b = tail[k]
    pos = b & mask
    ls.fifo_bytes[pos, index(ls.fifo_at[k])] += nbytes
    cs.fifo[pos, index(cs.fifo_at[e])] += nbytes
    cs.fifo_last[e] = b
