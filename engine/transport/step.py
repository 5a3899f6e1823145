"""The time-stepped fluid kernel: one step of every queue, pause, credit and rate.

A step of `dt` seconds, in this order:

1-4. *What moves* (`engine.transport.queues`): what each link may send (capacity, a pause
   in force, the credit window), switch egress queues serving their classes (FIFO bins),
   NICs injecting their classes' offers (water filling), arrivals joining their queues and
   overflow dropped and returned to its sender. Bytes move one hop per step.
5. *Pause state.* A port whose held bytes reach XOFF asks for a pause, one at XON or below
   resumes; the request enters the history the upstream port reads late.
6. *Marks.* The standing queue (what could not be served) sets the ECN probability (RED)
   and the IB CC congestion flag (above the threshold, and the port not held back itself:
   roots mark, victims do not).
7. *Senders react.* Each class's path mark probability, BECN flag, send rate and rate out of
   the network enter its feedback history; every `cc_every` steps DCQCN (the reaction point
   of `engine.transport.reaction`, taking the events inside those steps in their order, or
   the published mean field) and IB CC move on what they saw one feedback delay ago.
8. *Completion.* A class whose bytes are all delivered finishes at the end of the step.

`run_window` takes many steps in one call and writes the statistics and time series the
driver (`engine.transport.simulate`) reads. Every step function works on one block of the
network (`engine.transport.blocks`: whole parts, cache-sized), and the window's steps run
block after block; a small network is one block. `engine.transport.reference` is the
plain-Python twin of the same step, blocks aside, used by the tests.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.transport.control import dcqcn_step, ibcc_step, red_probability
from engine.transport.indexing import block_range, index, zero
from engine.transport.queues import allowed_rates, arrive, inject, serve_queues, track_tails
from engine.transport.reaction import mark_hazard, react_per_cut
from engine.transport.structures import (
    CONTROL_PFC,
    SampleAcc,
    SampleRows,
    State,
    Stats,
    Tables,
)

# A link sending at least this share of its capacity is not held back (a root, not a victim).
ROOT_SHARE = 1.0 - 1e-9


@njit(cache=True, nogil=True, inline="always")
def _pause(tables: Tables, state: State, stats: Stats, r: tuple) -> None:
    """Step 5: XOFF at or above the threshold, XON at or below the resume level."""
    control, xoff_at, xon_at = tables.links.control, tables.links.xoff, tables.links.xon
    occupancy, xoff, ring = state.links.occupancy, state.links.xoff, state.links.pfc_ring
    events = stats.xoff_events
    slot = index(state.clock.step[0] % ring.shape[0])
    begin, count = block_range(r[4], r[5])
    for at in range(count):
        k = begin + at
        if control[k] != CONTROL_PFC:
            continue
        if not xoff[k] and occupancy[k] >= xoff_at[k]:
            xoff[k] = True
            events[k] += 1.0
        elif xoff[k] and occupancy[k] <= xon_at[k]:
            xoff[k] = False
        ring[slot, k] = xoff[k]


@njit(cache=True, nogil=True, inline="always")
def _mark(tables: Tables, state: State, stats: Stats, s: tuple, r: tuple) -> None:
    """Step 6: standing queues set marks; the window statistics of every link."""
    allowed, paused, queue_total, served, acc_paused = s
    lk = tables.links
    capacity, kmin, kmax, pmax, fecn = lk.capacity, lk.kmin, lk.kmax, lk.pmax, lk.fecn_threshold
    ls = state.links
    occupancy, standing_q, mark_prob, congested = ls.occupancy, ls.queue, ls.mark_prob, ls.congested
    queue_time, marked, served_sum = stats.queue_time, stats.marked, stats.served
    paused_time, max_queue, max_occupancy = stats.paused_time, stats.max_queue, stats.max_occupancy
    dt = tables.knobs.dt
    begin, count = block_range(r[4], r[5])
    for at in range(count):
        li = begin + at
        standing = max(queue_total[li] - served[li], 0.0)
        standing_q[li] = standing
        p = red_probability(standing, kmin[li], kmax[li], pmax[li])
        mark_prob[li] = p
        congested[li] = standing > fecn[li] and allowed[li] >= capacity[li] * ROOT_SHARE
        queue_time[li] += standing * dt
        marked[li] += p * served[li]
        served_sum[li] += served[li]
        if paused[li]:
            paused_time[li] += dt
            acc_paused[li] += 1.0
        if standing > max_queue[li]:
            max_queue[li] = standing
        if occupancy[li] > max_occupancy[li]:
            max_occupancy[li] = occupancy[li]


@njit(cache=True, nogil=True, inline="always")
def _react(tables: Tables, state: State, sent: np.ndarray, r: tuple) -> None:
    """Step 7: feedback histories, then each sending class's rate control moves one step
    (neither without DCQCN and IB CC: nothing else reads the histories)."""
    cptr, mult, start = tables.classes.ptr, tables.classes.multiplicity, tables.classes.start
    line, fb_steps = tables.classes.line_rate, tables.classes.feedback_steps
    cnp_tau = tables.classes.cnp_tau
    link = tables.entries.link
    cs = state.classes
    finish, rc, rt, alpha, ccti = cs.finish, cs.rc, cs.rt, cs.alpha, cs.ccti
    fb_mark, fb_rate, fb_becn = cs.fb_mark, cs.fb_rate, cs.fb_becn
    fb_out, last_out, delivered, rp = cs.fb_out, cs.last_out, cs.delivered, cs.rp
    mark_prob, congested = state.links.mark_prob, state.links.congested
    k = tables.knobs
    if not (k.dcqcn_on or k.ibcc_on):
        return
    dq, ib = tables.dcqcn, tables.ibcc
    n = state.clock.step[0]
    width = fb_mark.shape[0]
    slot = index(n % width)  # once a step; the rows before it by a wrap, not a division
    now = state.clock.time[0]
    cc_dt = k.cc_every * k.dt
    per_cut = k.dcqcn_on and dq.per_cut > 0.0
    on_cc_step = n % k.cc_every == 0
    seen_p, seen_hazard = 0.0, 0.0  # the last class's marks: the next often sees the same
    begin, count = block_range(r[0], r[1])
    for at in range(count):
        c = begin + at
        if finish[c] < math.inf:
            continue
        keep = 1.0
        becn = 0.0
        for e in range(index(cptr[c]) + 1, cptr[c + 1]):
            li = index(link[e])
            keep *= 1.0 - mark_prob[li]
            if congested[li]:
                becn = 1.0
        fb_mark[slot, c] = 1.0 - keep
        fb_becn[slot, c] = becn
        per_flow_s = 1.0 / (k.dt * mult[c])  # bytes in this step -> one flow's bytes/s
        fb_rate[slot, c] = sent[c] * per_flow_s
        if per_cut:
            fb_out[slot, c] = (delivered[c] - last_out[c]) * per_flow_s
            last_out[c] = delivered[c]
        if start[c] > now or not on_cc_step:
            continue
        lag = min(fb_steps[c], width - 1)
        if n >= lag:
            old = slot - lag
            if old < 0:
                old += width
            old = index(old)
            p_seen, rate_seen, becn_seen = fb_mark[old, c], fb_rate[old, c], fb_becn[old, c]
            out_seen = fb_out[old, c]
        else:
            p_seen, rate_seen, becn_seen, out_seen = 0.0, line[c], 0.0, 0.0
        if per_cut:
            sending = 0.0  # the byte counter counts what left over the interval, as it left
            for j in range(k.cc_every):
                row = slot - j  # j < cc_every <= width
                if row < 0:
                    row += width
                row = index(row)
                sending += fb_rate[row, c]
            sending /= k.cc_every
            if p_seen != seen_p:
                seen_p, seen_hazard = p_seen, mark_hazard(p_seen)
            react_per_cut(
                c,
                rc,
                rt,
                alpha,
                rp,
                (seen_hazard, sending, out_seen),
                line[c],
                cnp_tau[c],
                dq,
                k.pkt_bytes,
                cc_dt,
            )
        elif k.dcqcn_on:
            rc[c], rt[c], alpha[c] = dcqcn_step(
                rc[c], rt[c], alpha[c], p_seen, rate_seen, line[c], dq, k.pkt_bytes, cc_dt
            )
        if k.ibcc_on:
            ccti[c] = ibcc_step(ccti[c], becn_seen, rate_seen, ib, k.pkt_bytes, cc_dt)


@njit(cache=True, nogil=True, inline="always")
def _finish(tables: Tables, state: State, r: tuple) -> int:
    """Step 8: classes with every byte delivered finish at the end of the step."""
    cptr, start = tables.classes.ptr, tables.classes.start
    queue, finish, remaining = state.classes.queue, state.classes.finish, state.classes.remaining
    now = state.clock.time[0]
    end = now + tables.knobs.dt
    done = 0
    begin, count = block_range(r[0], r[1])
    for at in range(count):
        c = begin + at
        if finish[c] < math.inf or remaining[c] > 0.0 or start[c] > now:
            continue
        empty = True
        for e in range(index(cptr[c]) + 1, cptr[c + 1]):
            if queue[e] > 0.0:
                empty = False
                break
        if empty:
            finish[c] = end
            done += 1
    return done


@njit(cache=True, nogil=True, inline="always")
def _step(
    tables: Tables, state: State, stats: Stats, acc: SampleAcc, scratch: tuple, r: tuple
) -> int:
    """Advance block `r` (its class, entry, link and group ranges) by one step of `dt`;
    return the number of its classes that finished."""
    (
        allowed,
        paused,
        queue_total,
        served,
        claim_total,
        normal_total,
        inflow,
        held,
        egress_in,
        drop_share,
        arrivals,
        sent,
        offer,
        satisfied,
        plan_first,
        plan_end,
        plan_part,
        _,
        _,
    ) = scratch
    zero(arrivals, r[2], r[3])
    zero(inflow, r[4], r[5])
    zero(held, r[4], r[5])
    zero(egress_in, r[4], r[5])
    zero(sent, r[0], r[1])
    allowed_rates(tables, state, allowed, paused, r)
    serve_queues(
        tables,
        state,
        allowed,
        (
            queue_total,
            served,
            claim_total,
            normal_total,
            arrivals,
            inflow,
            held,
            egress_in,
            stats.delivered,
            acc.delivered,
            (plan_first, plan_end, plan_part),
        ),
        r,
    )
    inject(
        tables,
        state,
        allowed,
        (
            served,
            arrivals,
            inflow,
            egress_in,
            sent,
            offer,
            satisfied,
            stats.delivered,
            acc.delivered,
            stats.sent,
        ),
        r,
    )
    arrive(
        tables,
        state,
        stats,
        (arrivals, inflow, held, egress_in, queue_total, served, drop_share),
        r,
    )
    track_tails(tables, state, queue_total, r)
    _pause(tables, state, stats, r)
    _mark(tables, state, stats, (allowed, paused, queue_total, served, acc.paused), r)
    _react(tables, state, sent, r)
    done = _finish(tables, state, r)
    state.clock.time[0] += tables.knobs.dt
    state.clock.step[0] += 1
    return done


@njit(cache=True, nogil=True)
def new_scratch(n_links: int, n_entries: int, n_classes: int, n_blocks: int) -> tuple:
    """Per-step work arrays, allocated once per window (per link: what FIFO service
    empties, `engine.transport.fifo.fifo_plan`); per block where its steps reached (steps
    taken, open sample's steps, rows written; the clock's time)."""
    return (
        np.zeros(n_links),
        np.zeros(n_links, dtype=np.bool_),
        np.zeros(n_links),
        np.zeros(n_links),
        np.zeros(n_links),
        np.zeros(n_links),
        np.zeros(n_links),
        np.zeros(n_links),
        np.zeros(n_links),
        np.zeros(n_links),
        np.zeros(n_entries),
        np.zeros(n_classes),
        np.zeros(n_classes),
        np.zeros(n_classes, dtype=np.bool_),
        np.zeros(n_links, dtype=np.int64),
        np.zeros(n_links, dtype=np.int64),
        np.zeros(n_links),
        np.zeros((n_blocks, 3), dtype=np.int64),
        np.zeros(n_blocks),
    )


@njit(cache=True, nogil=True, inline="always")
def _block(tables: Tables, b: int) -> tuple:
    """Block `b`'s class, entry, link and group ranges."""
    bl = tables.blocks
    return (
        bl.classes[b],
        bl.classes[b + 1],
        bl.entries[b],
        bl.entries[b + 1],
        bl.links[b],
        bl.links[b + 1],
        bl.groups[b],
        bl.groups[b + 1],
    )


@njit(cache=True, nogil=True, inline="always")
def _sample(
    tables: Tables, state: State, acc: SampleAcc, rows: SampleRows, r: tuple, every: int
) -> None:
    """After a step of block `r`: once the sample interval holds `every` steps (with
    `every` 1, at once: the run is done), write its row of the time series, for the
    block's classes and links."""
    acc_steps, acc_paused, acc_delivered = acc.steps, acc.paused, acc.delivered
    standing = state.links.queue
    if acc_steps[0] == 0 or acc_steps[0] < every:
        return
    row = rows.count[0]
    if row < rows.time.shape[0]:
        span = acc_steps[0] * tables.knobs.dt
        rows.time[row] = state.clock.time[0]
        begin, count = block_range(r[0], r[1])
        for at in range(count):
            c = begin + at
            rows.class_rate[row, c] = acc_delivered[c] / span
        begin, count = block_range(r[4], r[5])
        for at in range(count):
            li = begin + at
            rows.queue[row, li] = standing[li]
            rows.paused[row, li] = acc_paused[li] / acc_steps[0]
        rows.count[0] = row + 1
    acc_steps[0] = 0
    zero(acc_delivered, r[0], r[1])
    zero(acc_paused, r[4], r[5])


@njit(cache=True, nogil=True, inline="always")
def _unfinished(finish: np.ndarray, begin: int, end: int) -> int:
    """How many of classes `begin:end` have not finished."""
    first, count = block_range(begin, end)
    left = 0
    for at in range(count):
        if finish[first + at] == math.inf:
            left += 1
    return left


@njit(cache=True, nogil=True, _nrt=False)
def _run_block(
    tables: Tables,
    state: State,
    stats: Stats,
    acc: SampleAcc,
    rows: SampleRows,
    scratch: tuple,
    r: tuple,
    n_steps: int,
    sample_every: int,
    until_done: bool,
) -> int:
    """Take up to `n_steps` steps of block `r` (with `until_done`, only while a class of
    it is unfinished), a row of the time series every `sample_every`; return the steps
    taken."""
    left = _unfinished(state.classes.finish, r[0], r[1])
    taken = 0
    while taken < n_steps and (left > 0 or not until_done):
        left -= _step(tables, state, stats, acc, scratch, r)
        acc.steps[0] += 1
        taken += 1
        _sample(tables, state, acc, rows, r, sample_every)
    return taken


# The steps run without numba's reference counting (`_nrt=False`): every array a step
# reads comes from outside (the run's tables and state, the scratch `run_window`
# allocates), and nothing inside allocates or keeps one. With it, each of the step's
# functions inlined into the loop counted a reference to every array of the tables and
# state it takes, twice per step: an atomic add and subtract per array, about 2 us a
# step whatever the network's size (a 2-flow incast: 1.9 us a step with, 0.12 without;
# the 64:1 incast 5.0 against 2.6 us).
@njit(cache=True, nogil=True, _nrt=False)
def _steps(
    tables: Tables,
    state: State,
    stats: Stats,
    acc: SampleAcc,
    rows: SampleRows,
    n_steps: int,
    sample_every: int,
    scratch: tuple,
) -> int:
    """`run_window`'s steps, one block after the other, on the scratch arrays it
    allocated. Each block runs from the window's start until its classes are done (or
    the window is); those done before the last go on to where it stopped, as every link
    does in a run of the whole network; then the open sample closes if all are done."""
    reached, reached_time = scratch[-2], scratch[-1]
    clock = state.clock
    step0, time0, acc0, rows0 = clock.step[0], clock.time[0], acc.steps[0], rows.count[0]
    n_blocks = tables.blocks.classes.shape[0] - 1
    finish = state.classes.finish
    if _unfinished(finish, 0, finish.shape[0]) == 0:
        return 0
    taken = 0
    for b in range(n_blocks):
        clock.step[0], clock.time[0], acc.steps[0], rows.count[0] = step0, time0, acc0, rows0
        k = _run_block(
            tables, state, stats, acc, rows, scratch, _block(tables, b), n_steps, sample_every, True
        )
        reached[b, 0], reached[b, 1], reached[b, 2] = k, acc.steps[0], rows.count[0]
        reached_time[b] = clock.time[0]
        taken = max(taken, k)
    for b in range(n_blocks):
        if reached[b, 0] == taken:
            continue
        clock.step[0], clock.time[0] = step0 + reached[b, 0], reached_time[b]
        acc.steps[0], rows.count[0] = reached[b, 1], reached[b, 2]
        r = _block(tables, b)
        _run_block(
            tables, state, stats, acc, rows, scratch, r, taken - reached[b, 0], sample_every, False
        )
    # every block now stands where the last one stopped: the clock, the open sample and
    # the rows are theirs
    for b in range(n_blocks):
        if reached[b, 0] == taken:
            clock.step[0], clock.time[0] = step0 + taken, reached_time[b]
            acc.steps[0], rows.count[0] = reached[b, 1], reached[b, 2]
            break
    if _unfinished(finish, 0, finish.shape[0]) == 0:
        count, steps = rows.count[0], acc.steps[0]
        for b in range(n_blocks):
            rows.count[0], acc.steps[0] = count, steps
            _sample(tables, state, acc, rows, _block(tables, b), 1)
    return taken


@njit(cache=True, nogil=True)
def run_window(
    tables: Tables,
    state: State,
    stats: Stats,
    acc: SampleAcc,
    rows: SampleRows,
    n_steps: int,
    sample_every: int,
) -> int:
    """Take up to `n_steps` steps (fewer when every class has finished); gather `stats` and
    write one time-series row per `sample_every` steps. Returns the steps taken."""
    scratch = new_scratch(
        tables.links.capacity.shape[0],
        tables.entries.link.shape[0],
        tables.classes.size.shape[0],
        tables.blocks.classes.shape[0] - 1,
    )
    return _steps(tables, state, stats, acc, rows, n_steps, sample_every, scratch)
