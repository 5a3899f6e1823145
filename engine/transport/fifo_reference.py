"""Plain-Python twin of `engine.transport.fifo` (FIFO egress queues in bins), for the tests.

The same rules and the same order of sums as the kernel's: a link's service empties its
oldest bins whole and takes a share of the next; an entry leaves with its bytes in them, or
with all it holds once every bin it has bytes in is empty; arrivals join the newest bin if
it opened in their bin time, else a new one, or the newest when the ring is full.
"""

from __future__ import annotations

from engine.transport.structures import State


def fifo_plan(
    state: State, allowed: list[float], dt: float, shared
) -> dict[int, tuple[int, int, float]]:
    """Per link two or more classes share (`shared`): (first bin emptied, end of
    the bins emptied wholly, share taken of the next); moves each link's head past what it
    emptied."""
    ls = state.links
    width = ls.fifo_bytes.shape[0]
    plan = {}
    for k in range(len(allowed)):
        if not shared[k]:
            continue
        col = int(ls.fifo_at[k])
        budget = allowed[k] * dt
        h, t = int(ls.fifo_head[k]), int(ls.fifo_tail[k])
        first, share = h, 0.0
        while h <= t:
            held = float(ls.fifo_bytes[h % width, col])
            if held <= budget:
                budget -= held
                ls.fifo_bytes[h % width, col] = 0.0
                h += 1
            else:
                share = budget / held
                ls.fifo_bytes[h % width, col] = held - budget
                break
        ls.fifo_head[k] = h
        plan[k] = (first, h, share)
    return plan


def fifo_take(state: State, plan: tuple[int, int, float], e: int, k: int, queued: float) -> float:
    """Bytes entry `e` leaves its queue on link `k` with this step under the link's `plan`:
    all it holds once every bin it has bytes in is emptied."""
    cs = state.classes
    fifo, last, col = cs.fifo, int(cs.fifo_last[e]), int(cs.fifo_at[e])
    width = fifo.shape[0]
    first, full_end, share = plan
    if last < int(state.links.fifo_head[k]):
        for b in range(max(first, last - width + 1), last + 1):
            fifo[b % width, col] = 0.0
        return queued
    out = 0.0
    for b in range(first, full_end):
        out += float(fifo[b % width, col])
        fifo[b % width, col] = 0.0
    if share > 0.0:
        x = float(fifo[full_end % width, col]) * share
        fifo[full_end % width, col] -= x
        out += x
    return min(out, queued)


def fifo_forget(state: State, e: int, k: int) -> None:
    """Entry `e`'s queue on link `k` left with its crumbs: clear its bins."""
    cs, ls = state.classes, state.links
    col, lcol = int(cs.fifo_at[e]), int(ls.fifo_at[k])
    width = cs.fifo.shape[0]
    for b in range(int(ls.fifo_head[k]), int(cs.fifo_last[e]) + 1):
        pos = b % width
        ls.fifo_bytes[pos, lcol] = max(
            float(ls.fifo_bytes[pos, lcol]) - float(cs.fifo[pos, col]), 0.0
        )
        cs.fifo[pos, col] = 0.0


def fifo_arrive(state: State, now: int, e: int, k: int, nbytes: float) -> None:
    """`nbytes` of entry `e` join link `k`'s queue at bin time `now` (this step's): into
    the newest bin if it opened at `now`, else a new one (the newest when full)."""
    ls, cs = state.links, state.classes
    width = cs.fifo.shape[0]
    head, tail = int(ls.fifo_head[k]), int(ls.fifo_tail[k])
    opens = tail < head or int(ls.fifo_stamp[k]) < now
    if opens and tail - head < width - 1:
        ls.fifo_tail[k] = tail + 1
    ls.fifo_stamp[k] = now
    b = int(ls.fifo_tail[k])
    ls.fifo_bytes[b % width, int(ls.fifo_at[k])] += nbytes
    cs.fifo[b % width, int(cs.fifo_at[e])] += nbytes
    cs.fifo_last[e] = b
