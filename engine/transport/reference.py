"""Plain-Python twins of the transport kernels, for the tests.

Written for reading, not speed: each link's and each class's entries are gathered into
lists first, then every mechanism walks them. The rules and the order in which sums are
taken are those of `engine.transport.control` and `engine.transport.step`, so the numba
kernels must reproduce these results to rounding. `run_window` has the kernel's signature,
so `engine.transport.simulate.simulate(..., backend="reference")` runs a whole simulation
on the twin.
"""

from __future__ import annotations

import math

from engine.transport.fifo_reference import fifo_arrive, fifo_forget, fifo_plan, fifo_take
from engine.transport.reaction_reference import react_per_cut
from engine.transport.structures import (
    CONTROL_CREDIT,
    CONTROL_PFC,
    DcqcnKnobs,
    IbccKnobs,
    SampleAcc,
    SampleRows,
    State,
    Stats,
    Tables,
)

CRUMB_BYTES = 1e-6
ROOT_SHARE = 1.0 - 1e-9
P_CEIL = 1e-12


# --- rate controls -----------------------------------------------------------------------


def red_probability(queue: float, kmin: float, kmax: float, pmax: float) -> float:
    """RED: 0 up to Kmin, linear to Pmax at Kmax, 1 above."""
    if pmax <= 0.0 or queue <= kmin:
        return 0.0
    if queue > kmax:
        return 1.0
    # the fraction first, capped at 1, so rounding never lifts it past Pmax at Kmax
    return pmax * min((queue - kmin) / (kmax - kmin), 1.0)


def _counter_rate(rate_pkts: float, span: float, log_keep: float, p: float) -> float:
    x = -span * log_keep
    if x < 1e-9:
        return rate_pkts / span if span > 0.0 else 0.0
    if x > 700.0:
        return 0.0  # a mark-free span this long never happens (and expm1 would overflow)
    return p * rate_pkts / math.expm1(x)


def _goodput(tables, cs, c, out):
    """Bytes the receiver keeps of `out` (go-back-N throws away those behind a loss)."""
    gbn = tables.classes.gbn_packets[c]
    if gbn <= 0.0:
        return out
    good = out / (1.0 + cs.loss_p[c] * gbn)
    cs.remaining[c] += out - good
    return good


def dcqcn_derivatives(rc, rt, alpha, p, rate_seen, k: DcqcnKnobs, pkt):
    """The DCQCN fluid model's derivatives of R_C, R_T and alpha (see `control`)."""
    rp = max(rate_seen, 0.0) / pkt
    if p <= 0.0:
        events = 1.0 / k.timer + rp * pkt / k.byte_counter
        return (rt - rc) / 2.0 * events, k.rate_hai * events, -k.gain / k.tau_alpha * alpha
    p = min(p, 1.0 - P_CEIL)
    log_keep = math.log1p(-p)
    bc_pkts = k.byte_counter / pkt
    timer_pkts = k.timer * rp
    a = -math.expm1(k.tau * rp * log_keep)
    alpha_target = -math.expm1(k.tau_alpha * rp * log_keep)
    timer_events = _counter_rate(rp, timer_pkts, log_keep, p) if timer_pkts > 0.0 else 1.0 / k.timer
    byte_events = _counter_rate(rp, bc_pkts, log_keep, p) if math.isfinite(bc_pkts) else 0.0
    timer_past_f = timer_events * math.exp(k.fast_steps * timer_pkts * log_keep)
    byte_past_f = (
        byte_events * math.exp(k.fast_steps * bc_pkts * log_keep) if byte_events > 0.0 else 0.0
    )
    if math.isfinite(bc_pkts):
        both_past_f = math.exp(k.fast_steps * max(bc_pkts, timer_pkts) * log_keep)
    else:
        both_past_f = math.exp((k.fast_steps + 1.0) * timer_pkts * log_keep)
    cut = min(alpha / 2.0, k.max_cut)
    d_alpha = k.gain / k.tau_alpha * (alpha_target - alpha)
    cuts = a / k.tau
    raises = byte_events + k.clamp_after_timer * timer_events
    clamp = raises / (raises + cuts) if raises > 0.0 else 0.0
    if k.clamp_always > 0.0:
        clamp = 1.0
    d_rt = (
        -(rt - rc) * cuts * clamp
        + k.rate_ai * (byte_past_f + timer_past_f)
        + (k.rate_hai - k.rate_ai) * (byte_events + timer_events) * both_past_f
    )
    d_rc = -rc * cut * a / k.tau + (rt - rc) / 2.0 * (byte_events + timer_events)
    return d_rc, d_rt, d_alpha


def dcqcn_step(rc, rt, alpha, p, rate_seen, line_rate, k: DcqcnKnobs, pkt, dt):
    """One Euler step of DCQCN, clamped to [minimum, line] and alpha to [0, 1]."""
    d_rc, d_rt, d_alpha = dcqcn_derivatives(rc, rt, alpha, p, rate_seen, k, pkt)
    floor = min(k.rate_min, line_rate)
    return (
        min(max(rc + d_rc * dt, floor), line_rate),
        min(max(rt + d_rt * dt, floor), line_rate),
        min(max(alpha + d_alpha * dt, 0.0), 1.0),
    )


def ibcc_rate(ccti: float, line_rate: float, k: IbccKnobs) -> float:
    """IB CC injection rate at an index: the CCT multiplier sets the gap in packet times."""
    i = math.floor(ccti)
    return line_rate / (1.0 + math.floor(k.cct_coef * i * i) / (1 << k.cct_shift))


def ibcc_step(
    ccti: float, becn: float, rate_seen: float, k: IbccKnobs, pkt: float, dt: float
) -> float:
    """One step of the CCT index (BECNs up, timer down, clamped)."""
    becns_per_s = max(rate_seen, 0.0) / pkt * becn * k.mark_fraction
    ccti = ccti + (k.ccti_increase * becns_per_s - 1.0 / k.ccti_timer) * dt
    return min(max(ccti, k.ccti_min), k.ccti_limit)


# --- one step ----------------------------------------------------------------------------


def _layout(tables: Tables):
    """Entries per link (switch hops only) and per class, in index order."""
    ent = tables.entries
    n_links = len(tables.links.capacity)
    on_link = [[] for _ in range(n_links)]
    for e in range(len(ent.link)):
        if ent.prev[e] >= 0:
            on_link[int(ent.link[e])].append(e)
    ptr = tables.classes.ptr
    hops = [list(range(int(ptr[c]), int(ptr[c + 1]))) for c in range(len(ptr) - 1)]
    return on_link, hops


def _gate_room(tables: Tables, cs, c: int) -> float:
    """What class `c` may send before it leads its slowest gate by more than its slack."""
    g, size = tables.gates, tables.classes.size
    progress = [
        cs.delivered[d] / size[d]
        for d in g.cls[g.ptr[c] : g.ptr[c + 1]]
        if cs.finish[d] == math.inf
    ]
    if not progress:
        return math.inf
    sent = size[c] - cs.remaining[c]
    return max(min(progress) * size[c] + g.slack[c] - sent, 0.0)


def reference_step(tables: Tables, state: State, stats: Stats, acc: SampleAcc) -> int:
    """One step of the model in plain Python; returns the number of classes that finished."""
    lk, ent, cl, k = tables.links, tables.entries, tables.classes, tables.knobs
    ls, cs = state.links, state.classes
    dt, n, now = k.dt, int(state.clock.step[0]), float(state.clock.time[0])
    n_links, n_classes, n_entries = len(lk.capacity), len(cl.size), len(ent.link)
    on_link, hops = _layout(tables)

    # 1. what each link may send
    allowed, paused = [0.0] * n_links, [False] * n_links
    width = ls.pfc_ring.shape[0]
    for li in range(n_links):
        rate, held = lk.capacity[li], False
        if lk.control[li] == CONTROL_PFC:
            lag = int(lk.react_steps[li])
            held = bool(ls.pfc_ring[(n - lag) % width, li]) if n >= lag else False
            rate = 0.0 if held else rate
        elif lk.control[li] == CONTROL_CREDIT:
            window = max(lk.buffer[li] - ls.backlog[li], 0.0) / max(lk.credit_rtt[li], dt)
            rate = min(rate, window, max(lk.buffer[li] - ls.occupancy[li], 0.0) / dt)
        allowed[li], paused[li] = rate, held

    # 2. switch egress queues serve (FIFO bins, or evenly with drained tails first)
    arrivals = [0.0] * n_entries
    inflow, held_back, egress_in, served = ([0.0] * n_links for _ in range(4))
    queue_total = [0.0] * n_links
    fifo = k.fifo_width > 0
    plan = fifo_plan(state, allowed, dt, lk.shared) if fifo else None
    for li in range(n_links):
        claims, normal = 0.0, 0.0
        for e in on_link[li]:
            q = cs.queue[e]
            queue_total[li] += q
            if q > 0.0 and cs.deadline[e] < math.inf:
                left = cs.deadline[e] - now
                claims += q if left <= dt else q * dt / left
            else:
                normal += q
        on_link[li] = (on_link[li], claims, normal)
    for e in range(n_entries):
        if ent.prev[e] < 0 or cs.queue[e] <= 0.0:
            continue
        li = int(ent.link[e])
        _, claims, normal = on_link[li]
        q, budget = cs.queue[e], allowed[li] * dt
        if fifo and lk.shared[li]:
            out = fifo_take(state, plan[li], e, li, q)
        elif fifo:
            out = q if q <= budget else budget
        elif cs.deadline[e] < math.inf:
            left = cs.deadline[e] - now
            want = q if left <= dt else q * dt / left
            out = want if claims <= budget else want * budget / claims
        else:
            rest = max(budget - claims, 0.0)
            out = q if normal <= rest else q * rest / normal
        if q - out < CRUMB_BYTES * tables.classes.multiplicity[int(ent.cls[e])]:
            out = q
            if fifo and lk.shared[li]:
                fifo_forget(state, e, li)
        cs.queue[e] = q - out
        held_back[int(ent.prev[e])] += q - out
        served[li] += out
        c = int(ent.cls[e])
        if ent.last[e]:
            good = _goodput(tables, cs, c, out)
            cs.delivered[c] += good
            stats.delivered[c] += good
            acc.delivered[c] += good
        else:
            arrivals[e + 1] += out
            inflow[li] += out
            egress_in[int(ent.link[e + 1])] += out

    # 3. NICs inject: water filling of the offers on each NIC link
    offer = [0.0] * n_classes
    for c in range(n_classes):
        if cs.finish[c] < math.inf or cs.remaining[c] <= 0.0 or cl.start[c] > now:
            continue
        rate = cl.line_rate[c]
        if k.dcqcn_on:
            rate = min(rate, cs.rc[c])
        if k.ibcc_on:
            rate = min(rate, ibcc_rate(cs.ccti[c], cl.line_rate[c], tables.ibcc))
        offer[c] = min(cl.multiplicity[c] * rate * dt, cs.remaining[c])
        offer[c] = min(offer[c], _gate_room(tables, cs, c))
    sent = [0.0] * n_classes
    inj = tables.inject
    for g in range(len(inj.link)):
        li = int(inj.link[g])
        members = [int(c) for c in inj.cls[inj.ptr[g] : inj.ptr[g + 1]]]
        budget = allowed[li] * dt
        total = 0.0
        for c in members:
            total += offer[c]
        level = math.inf  # bytes per flow: the NIC serves its flows (queue pairs) in turn
        if total > budget:
            left, changed = budget, True
            open_set = {c for c in members if offer[c] > 0.0}  # nothing offered: met
            while changed and open_set:
                changed = False
                level = left / sum(float(cl.multiplicity[c]) for c in open_set)
                for c in members:
                    if c in open_set and offer[c] <= level * cl.multiplicity[c]:
                        open_set.discard(c)
                        left -= offer[c]
                        changed = True
            weight = sum(float(cl.multiplicity[c]) for c in open_set)
            level = left / weight if open_set else math.inf
        for c in members:
            out = min(offer[c], level * cl.multiplicity[c])
            if out >= cs.remaining[c] * (1.0 - 1e-12):
                out = cs.remaining[c]
            cs.remaining[c] -= out
            sent[c] = out
            stats.sent[c] += out
            served[li] += out
            e0 = int(cl.ptr[c])
            if ent.last[e0]:
                good = _goodput(tables, cs, c, out)
                cs.delivered[c] += good
                stats.delivered[c] += good
                acc.delivered[c] += good
            else:
                arrivals[e0 + 1] += out
                inflow[li] += out
                egress_in[int(ent.link[e0 + 1])] += out

    # 4. arrivals, with drops at a full lossless ingress or (lossy) a full egress queue
    share = [0.0] * n_links
    for x in range(n_links):
        if k.lossy:
            total = queue_total[x] - served[x] + egress_in[x]
            if total > lk.egress_buffer[x] and egress_in[x] > 0.0:
                share[x] = min((total - lk.egress_buffer[x]) / egress_in[x], 1.0)
        else:
            total = held_back[x] + inflow[x]
            if total > lk.buffer[x] and inflow[x] > 0.0:
                share[x] = min((total - lk.buffer[x]) / inflow[x], 1.0)
        ls.occupancy[x] = held_back[x]
        ls.backlog[x] = held_back[x]
    cs.loss_p[:] = 0.0
    for e in range(n_entries):
        a, kk = arrivals[e], int(ent.prev[e])
        if kk < 0 or a <= 0.0:
            continue
        lost = a * (share[int(ent.link[e])] if k.lossy else share[kk])
        cs.queue[e] += a - lost
        ls.occupancy[kk] += a - lost
        if fifo and a > lost and lk.shared[int(ent.link[e])]:
            fifo_arrive(state, n // k.fifo_bin_steps, e, int(ent.link[e]), a - lost)
        if lost > 0.0:
            c = int(ent.cls[e])
            cs.remaining[c] += lost
            cs.loss_p[c] = 1.0 - (1.0 - cs.loss_p[c]) * (1.0 - lost / a)
            stats.dropped[kk] += lost
            stats.dropped_class[c] += lost
            for f in hops[c]:
                cs.deadline[f] = math.inf

    # even service's tails: the first non-empty hop of a class with nothing left to send
    for c in range(n_classes):
        if fifo or cs.finish[c] < math.inf or cs.remaining[c] > 0.0:
            continue
        for e in hops[c][1:]:
            if cs.queue[e] > 0.0:
                if cs.deadline[e] == math.inf:
                    li = int(ent.link[e])
                    cs.deadline[e] = now + dt + queue_total[li] / lk.capacity[li]
                break

    # 5. pause requests and their history
    for x in range(n_links):
        if lk.control[x] != CONTROL_PFC:
            continue
        if not ls.xoff[x] and ls.occupancy[x] >= lk.xoff[x]:
            ls.xoff[x] = True
            stats.xoff_events[x] += 1.0
        elif ls.xoff[x] and ls.occupancy[x] <= lk.xon[x]:
            ls.xoff[x] = False
        ls.pfc_ring[n % width, x] = ls.xoff[x]

    # 6. marks on the standing queues; link statistics
    for li in range(n_links):
        standing = max(queue_total[li] - served[li], 0.0)
        ls.queue[li] = standing
        p = red_probability(standing, lk.kmin[li], lk.kmax[li], lk.pmax[li])
        ls.mark_prob[li] = p
        ls.congested[li] = (
            standing > lk.fecn_threshold[li] and allowed[li] >= lk.capacity[li] * ROOT_SHARE
        )
        stats.queue_time[li] += standing * dt
        stats.marked[li] += p * served[li]
        stats.served[li] += served[li]
        if paused[li]:
            stats.paused_time[li] += dt
            acc.paused[li] += 1.0
        stats.max_queue[li] = max(stats.max_queue[li], standing)
        stats.max_occupancy[li] = max(stats.max_occupancy[li], ls.occupancy[li])

    # 7. feedback histories and the senders' rate controls (nothing reads the histories
    # without DCQCN and IB CC)
    fb_width = cs.fb_mark.shape[0]
    for c in range(n_classes if (k.dcqcn_on or k.ibcc_on) else 0):
        if cs.finish[c] < math.inf:
            continue
        keep, becn = 1.0, 0.0
        for e in hops[c][1:]:
            keep *= 1.0 - ls.mark_prob[int(ent.link[e])]
            if ls.congested[int(ent.link[e])]:
                becn = 1.0
        slot = n % fb_width
        cs.fb_mark[slot, c], cs.fb_becn[slot, c] = 1.0 - keep, becn
        per_flow_s = 1.0 / (dt * cl.multiplicity[c])
        cs.fb_rate[slot, c] = sent[c] * per_flow_s
        if k.dcqcn_on and tables.dcqcn.per_cut > 0.0:  # the reaction point reads the rate out
            cs.fb_out[slot, c] = (cs.delivered[c] - cs.last_out[c]) * per_flow_s
            cs.last_out[c] = cs.delivered[c]
        if cl.start[c] > now or n % k.cc_every != 0:
            continue
        lag = min(int(cl.feedback_steps[c]), fb_width - 1)
        if n >= lag:
            old = (n - lag) % fb_width
            p_seen, rate_seen, becn_seen, out_seen = (
                cs.fb_mark[old, c],
                cs.fb_rate[old, c],
                cs.fb_becn[old, c],
                cs.fb_out[old, c],
            )
        else:
            p_seen, rate_seen, becn_seen, out_seen = 0.0, cl.line_rate[c], 0.0, 0.0
        cc_dt = k.cc_every * dt
        if k.dcqcn_on and tables.dcqcn.per_cut > 0.0:
            # the byte counter counts what left over the interval, as it left
            sending = sum(cs.fb_rate[(n - j) % fb_width, c] for j in range(k.cc_every))
            seen = (p_seen, sending / k.cc_every, out_seen)
            react_per_cut(
                cs, c, seen, cl.line_rate[c], cl.cnp_tau[c], tables.dcqcn, k.pkt_bytes, cc_dt
            )
        elif k.dcqcn_on:
            cs.rc[c], cs.rt[c], cs.alpha[c] = dcqcn_step(
                cs.rc[c],
                cs.rt[c],
                cs.alpha[c],
                p_seen,
                rate_seen,
                cl.line_rate[c],
                tables.dcqcn,
                k.pkt_bytes,
                cc_dt,
            )
        if k.ibcc_on:
            cs.ccti[c] = ibcc_step(
                cs.ccti[c], becn_seen, rate_seen, tables.ibcc, k.pkt_bytes, cc_dt
            )

    # 8. completions
    done = 0
    for c in range(n_classes):
        if cs.finish[c] < math.inf or cs.remaining[c] > 0.0 or cl.start[c] > now:
            continue
        if all(cs.queue[e] <= 0.0 for e in hops[c][1:]):
            cs.finish[c] = now + dt
            done += 1
    state.clock.time[0] += dt
    state.clock.step[0] += 1
    return done


def run_window(
    tables: Tables,
    state: State,
    stats: Stats,
    acc: SampleAcc,
    rows: SampleRows,
    n_steps: int,
    sample_every: int,
) -> int:
    """The twin of `engine.transport.step.run_window`."""
    unfinished = sum(1 for f in state.classes.finish if f == math.inf)
    dt = tables.knobs.dt
    taken = 0
    while taken < n_steps and unfinished > 0:
        unfinished -= reference_step(tables, state, stats, acc)
        taken += 1
        acc.steps[0] += 1
        if acc.steps[0] >= sample_every or unfinished == 0:
            r = int(rows.count[0])
            if r < len(rows.time):
                span = acc.steps[0] * dt
                rows.time[r] = state.clock.time[0]
                rows.class_rate[r, :] = acc.delivered / span
                rows.queue[r, :] = state.links.queue
                rows.paused[r, :] = acc.paused / acc.steps[0]
                rows.count[0] = r + 1
            acc.steps[0] = 0
            acc.paused[:] = 0.0
            acc.delivered[:] = 0.0
    return taken
