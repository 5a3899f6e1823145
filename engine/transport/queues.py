"""What moves in one step: link allowances, queue service, NIC injection, arrivals.

The first half of `engine.transport.step`'s step, as numba functions inlined into it:

1. `allowed_rates`: what each link may send this step: its capacity, nothing while the far
   end's pause holds it (PFC: the XOFF state of `react_steps` steps ago), or what the credits
   allow (free far-end buffer over the credit round trip).
2. `serve_queues`: switch egress queues serve their classes in the order their bytes came
   (`engine.transport.fifo`), or with the even service: in proportion to the queued bytes,
   except that a class whose last byte has arrived is drained by the time the queue ahead
   of it is served, first.
3. `inject`: each NIC link shares what it may send among its flows (queue pairs, served in
   turn) by water filling over its classes' offers (`class_offers`: flows times line, DCQCN
   or IB CC rate), so a class of two flows gets twice the share of a class of one.
4. `arrive`: arrivals join their queues; overflow of a far-end buffer share (lossless) or of
   an egress port's buffer (lossy) is dropped and returned to its sender.
5. `track_tails`: under the even service, the drain deadlines of classes with nothing left
   to send.

Served and injected bytes arrive at the next hop at the end of the step (one step per hop).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.transport.control import ibcc_rate
from engine.transport.fifo import fifo_arrive, fifo_forget, fifo_plan, fifo_take
from engine.transport.indexing import block_range, index, zero
from engine.transport.structures import CONTROL_CREDIT, CONTROL_PFC, State, Stats, Tables

# Bytes per flow below this left in a queue leave with the rest (float crumbs never block a
# finish). Per flow, so that a class of k flows runs as k classes of one would, to the bit
# when k is a power of two (engine.transport.lumping).
CRUMB_BYTES = 1e-6


@njit(cache=True, nogil=True, inline="always")
def _goodput(out: float, loss_p: float, gbn: float) -> float:
    """Of `out` bytes of a class reaching its receiver, those it keeps (the rest are sent
    again). Under go-back-N a lost packet makes the receiver throw away the `gbn` packets
    behind it: with loss share `loss_p` a delivered byte is new with odds 1 / (1 + p gbn)
    (the ARQ efficiency of go-back-N over its window).

    Scalars in, a scalar out: handing arrays (or the state's tuple of arrays) to a function
    called inside a loop costs numba a reference count per array per call, which once made
    a step of a 3,500-class stage 25 times slower."""
    if gbn <= 0.0:
        return out
    return out / (1.0 + loss_p * gbn)


@njit(cache=True, nogil=True, inline="always")
def allowed_rates(
    tables: Tables, state: State, allowed: np.ndarray, paused: np.ndarray, r: tuple
) -> None:
    """Step 1: the rate each link of block `r` may send, and whether a pause holds it.
    (`r`: the block's class, entry, link and group ranges, `engine.transport.step`.)"""
    capacity, control = tables.links.capacity, tables.links.control
    react, buffer, rtt = tables.links.react_steps, tables.links.buffer, tables.links.credit_rtt
    occupancy, backlog, ring = state.links.occupancy, state.links.backlog, state.links.pfc_ring
    n = state.clock.step[0]
    dt = tables.knobs.dt
    width = ring.shape[0]
    slot = index(n % width)  # once a step; each link's row before it by a wrap, not a division
    begin, count = block_range(r[4], r[5])
    for at in range(count):
        li = begin + at
        rate = capacity[li]
        held = False
        if control[li] == CONTROL_PFC:
            lag = react[li]
            if n >= lag:
                old = slot - lag  # lag < width
                if old < 0:
                    old += width
                held = ring[index(old), li]
            if held:
                rate = 0.0
        elif control[li] == CONTROL_CREDIT:
            # Credits for the free buffer circulate once per round trip; the bytes in the
            # switch pipeline are part of that trip, not of the buffer. Never more than
            # the buffer has room for this step.
            window = max(buffer[li] - backlog[li], 0.0) / max(rtt[li], dt)
            rate = min(rate, window, max(buffer[li] - occupancy[li], 0.0) / dt)
        allowed[li] = rate
        paused[li] = held


@njit(cache=True, nogil=True, inline="always")
def serve_queues(tables: Tables, state: State, allowed: np.ndarray, s: tuple, r: tuple) -> None:
    """Step 2: switch egress queues serve their classes (in bins in the order their bytes
    came, or evenly)."""
    (
        queue_total,
        served,
        claim_total,
        normal_total,
        arrivals,
        inflow,
        held,
        egress_in,
        got,
        got_acc,
        plan,
    ) = s
    link, prev, cls, last = (
        tables.entries.link,
        tables.entries.prev,
        tables.entries.cls,
        tables.entries.last,
    )
    queue, deadline, delivered = (
        state.classes.queue,
        state.classes.deadline,
        state.classes.delivered,
    )
    loss_p, remaining = state.classes.loss_p, state.classes.remaining
    gbn, mult = tables.classes.gbn_packets, tables.classes.multiplicity
    dt = tables.knobs.dt
    now = state.clock.time[0]
    zero(queue_total, r[4], r[5])
    zero(claim_total, r[4], r[5])
    zero(normal_total, r[4], r[5])
    zero(served, r[4], r[5])
    fifo = tables.knobs.fifo_width > 0
    shared = tables.links.shared
    if fifo:
        first, count = block_range(r[4], r[5])
        fifo_plan(tables, state, allowed, plan, first, count)
    # Each link's queued bytes. While entries of one link come one after another (an
    # incast's hot spot), its running sum stays in a register: in memory, every add waits
    # for the one before. The same adds in the same order.
    run_link, run_sum = -1, 0.0
    begin, count = block_range(r[2], r[3])
    for at in range(count):
        e = begin + at
        if prev[e] < 0:
            continue
        li = index(link[e])
        q = queue[e]
        if li != run_link:
            if run_link >= 0:
                queue_total[run_link] = run_sum
            run_link, run_sum = li, queue_total[li]
        run_sum += q
        if fifo:
            continue
        if q > 0.0 and deadline[e] < math.inf:
            left = deadline[e] - now
            claim_total[li] += q if left <= dt else q * dt / left
        else:
            normal_total[li] += q
    if run_link >= 0:
        queue_total[run_link] = run_sum
    begin, count = block_range(r[2], r[3])
    for at in range(count):
        e = begin + at
        q = queue[e]
        if prev[e] < 0 or q <= 0.0:
            continue
        li = index(link[e])
        c = index(cls[e])
        budget = allowed[li] * dt
        if fifo and shared[li]:
            out = fifo_take(state, plan, e, li, q)
        elif fifo:
            out = q if q <= budget else budget
        elif deadline[e] < math.inf:
            left = deadline[e] - now
            want = q if left <= dt else q * dt / left
            out = want if claim_total[li] <= budget else want * budget / claim_total[li]
        else:
            rest = max(budget - claim_total[li], 0.0)
            out = q if normal_total[li] <= rest else q * rest / normal_total[li]
        if q - out < CRUMB_BYTES * mult[c]:
            out = q
            if fifo and shared[li]:
                fifo_forget(state, e, li)
        queue[e] = q - out
        held[index(prev[e])] += q - out
        served[li] += out
        if last[e]:
            good = _goodput(out, loss_p[c], gbn[c])
            remaining[c] += out - good
            delivered[c] += good
            got[c] += good
            got_acc[c] += good
        else:
            arrivals[e + 1] += out
            inflow[li] += out
            egress_in[index(link[e + 1])] += out


@njit(cache=True, nogil=True, inline="always")
def class_offers(tables: Tables, state: State, offer: np.ndarray, r: tuple) -> None:
    """Bytes each class would send this step: its flows times their rate (line rate, or
    less under DCQCN or IB CC), at most what it has left and what its pipeline gates
    allow; nothing before its start or after its finish."""
    mult, start, line = tables.classes.multiplicity, tables.classes.start, tables.classes.line_rate
    finish, remaining = state.classes.finish, state.classes.remaining
    rc, ccti = state.classes.rc, state.classes.ccti
    gptr, gcls, slack = tables.gates.ptr, tables.gates.cls, tables.gates.slack
    size, delivered = tables.classes.size, state.classes.delivered
    k = tables.knobs
    ib = tables.ibcc
    now = state.clock.time[0]
    begin, count = block_range(r[0], r[1])
    for at in range(count):
        c = begin + at
        if finish[c] < math.inf or remaining[c] <= 0.0 or start[c] > now:
            offer[c] = 0.0
            continue
        rate = line[c]
        if k.dcqcn_on:
            rate = min(rate, rc[c])
        if k.ibcc_on:
            rate = min(rate, ibcc_rate(ccti[c], line[c], ib))
        offer[c] = min(mult[c] * rate * k.dt, remaining[c])
        # Pipeline gates (engine.transport.gates): lead the least-delivered neighbour by
        # at most the slack. Written out here: a helper taking arrays, called once per
        # class per step, costs a reference count per array per call (see `_goodput`).
        lead = math.inf
        for i in range(index(gptr[c]), gptr[c + 1]):
            d = index(gcls[i])
            if finish[d] == math.inf:
                lead = min(lead, delivered[d] / size[d])
        if lead < math.inf:
            room = lead * size[c] + slack[c] - (size[c] - remaining[c])
            offer[c] = min(offer[c], max(room, 0.0))


@njit(cache=True, nogil=True, inline="always")
def inject(tables: Tables, state: State, allowed: np.ndarray, s: tuple, r: tuple) -> None:
    """Step 3: every NIC link shares what it may send among its classes' offers."""
    served, arrivals, inflow, egress_in, sent, offer, satisfied, got, got_acc, sent_sum = s
    gptr, glink, gcls = tables.inject.ptr, tables.inject.link, tables.inject.cls
    cptr, last, link = tables.classes.ptr, tables.entries.last, tables.entries.link
    mult = tables.classes.multiplicity
    remaining, delivered = state.classes.remaining, state.classes.delivered
    loss_p = state.classes.loss_p
    gbn = tables.classes.gbn_packets
    dt = tables.knobs.dt
    class_offers(tables, state, offer, r)
    run_link, run_in = -1, 0.0
    begin, count = block_range(r[6], r[7])
    for at in range(count):
        g = begin + at
        li = index(glink[g])
        budget = allowed[li] * dt
        total = 0.0
        for i in range(index(gptr[g]), gptr[g + 1]):
            # A class with nothing to offer (finished, not started, held by a gate) is met
            # from the start and takes no part in the sums: the arithmetic of the others
            # is then the same whether it is in the group or not (engine.transport.live).
            c = index(gcls[i])
            satisfied[c] = offer[c] <= 0.0
            total += offer[c]
        level = math.inf  # bytes per flow: the NIC serves its flows (queue pairs) in turn
        if total > budget:
            # Water filling per flow: classes whose flows offer less than the fair level
            # are met, the flows of the rest get the level.
            left = budget
            open_count = 0
            open_flows = 0.0
            for i in range(index(gptr[g]), gptr[g + 1]):
                c = index(gcls[i])
                if not satisfied[c]:
                    open_count += 1
                    open_flows += mult[c]
            changed = True
            while changed and open_count > 0:
                changed = False
                level = left / open_flows
                for i in range(index(gptr[g]), gptr[g + 1]):
                    c = index(gcls[i])
                    if not satisfied[c] and offer[c] <= level * mult[c]:
                        satisfied[c] = True
                        left -= offer[c]
                        open_count -= 1
                        open_flows -= mult[c]
                        changed = True
            level = left / open_flows if open_count > 0 else math.inf
        for i in range(index(gptr[g]), gptr[g + 1]):
            c = index(gcls[i])
            out = min(offer[c], level * mult[c])
            if out >= remaining[c] * (1.0 - 1e-12):
                out = remaining[c]
            remaining[c] -= out
            sent[c] = out
            sent_sum[c] += out
            served[li] += out
            e0 = index(cptr[c])
            if last[e0]:
                good = _goodput(out, loss_p[c], gbn[c])
                remaining[c] += out - good
                delivered[c] += good
                got[c] += good
                got_acc[c] += good
            else:
                arrivals[e0 + 1] += out
                inflow[li] += out
                # a running sum per next link, as `serve_queues` keeps the queued bytes
                nxt = index(link[e0 + 1])
                if nxt != run_link:
                    if run_link >= 0:
                        egress_in[run_link] = run_in
                    run_link, run_in = nxt, egress_in[nxt]
                run_in += out
    if run_link >= 0:
        egress_in[run_link] = run_in


@njit(cache=True, nogil=True, inline="always")
def arrive(tables: Tables, state: State, stats: Stats, s: tuple, r: tuple) -> None:
    """Step 4: arrivals join their queues; what overflows is dropped and returned to its
    sender. A lossless fabric (credits, PFC) accounts each ingress port against its
    buffer share, so overflow happens only when PFC's headroom is too small; a lossy one
    drops where a real switch does, at an egress queue over its port's buffer. A dropped
    byte is sent again; the share lost along each class's path (`loss_p`) sets what
    go-back-N throws away of what arrives next (`_goodput`). (`inflow`,
    `held` and `egress_in`, bytes arriving over, left behind on and arriving at each link,
    were summed while serving.)"""
    arrivals, inflow, held, egress_in, queue_total, served, drop_share = s
    prev, link, cls = tables.entries.prev, tables.entries.link, tables.entries.cls
    buffer, egress_buffer = tables.links.buffer, tables.links.egress_buffer
    queue, remaining, deadline, loss_p = (
        state.classes.queue,
        state.classes.remaining,
        state.classes.deadline,
        state.classes.loss_p,
    )
    cptr = tables.classes.ptr
    occupancy, backlog = state.links.occupancy, state.links.backlog
    dropped, dropped_class = stats.dropped, stats.dropped_class
    lossy = tables.knobs.lossy
    fifo, shared = tables.knobs.fifo_width > 0, tables.links.shared
    now_bin = state.clock.step[0] // tables.knobs.fifo_bin_steps
    begin, count = block_range(r[4], r[5])
    for at in range(count):
        k = begin + at
        share = 0.0
        if lossy:
            total = queue_total[k] - served[k] + egress_in[k]
            if total > egress_buffer[k] and egress_in[k] > 0.0:
                share = min((total - egress_buffer[k]) / egress_in[k], 1.0)
        else:
            total = held[k] + inflow[k]
            if total > buffer[k] and inflow[k] > 0.0:
                share = min((total - buffer[k]) / inflow[k], 1.0)
        drop_share[k] = share
        occupancy[k] = held[k]
        backlog[k] = held[k]
    zero(loss_p, r[0], r[1])
    begin, count = block_range(r[2], r[3])
    for at in range(count):
        e = begin + at
        k = prev[e]
        a = arrivals[e]
        if k < 0 or a <= 0.0:
            continue
        li = index(link[e])
        lost = a * (drop_share[li] if lossy else drop_share[k])
        queue[e] += a - lost
        occupancy[k] += a - lost
        if fifo and a > lost and shared[li]:
            fifo_arrive(state, now_bin, e, li, a - lost)
        if lost > 0.0:
            c = index(cls[e])
            remaining[c] += lost
            loss_p[c] = 1.0 - (1.0 - loss_p[c]) * (1.0 - lost / a)
            dropped[k] += lost
            dropped_class[c] += lost
            for f in range(index(cptr[c]), cptr[c + 1]):
                deadline[f] = math.inf


@njit(cache=True, nogil=True, inline="always")
def track_tails(tables: Tables, state: State, queue_total: np.ndarray, r: tuple) -> None:
    """Under the even service, give the first non-empty hop of a class with nothing left to
    send its drain deadline (now plus the time to serve the queue it waits in, as a FIFO
    would); a class sending again (after a drop) loses its deadlines."""
    if tables.knobs.fifo_width > 0:
        return
    cptr, link, capacity = tables.classes.ptr, tables.entries.link, tables.links.capacity
    queue, deadline = state.classes.queue, state.classes.deadline
    finish, remaining = state.classes.finish, state.classes.remaining
    end = state.clock.time[0] + tables.knobs.dt
    begin, count = block_range(r[0], r[1])
    for at in range(count):
        c = begin + at
        if finish[c] < math.inf or remaining[c] > 0.0:
            continue
        for e in range(index(cptr[c]) + 1, cptr[c + 1]):
            if queue[e] > 0.0:
                if deadline[e] == math.inf:
                    deadline[e] = end + queue_total[link[e]] / capacity[link[e]]
                break
