"""The rate controls as small numba kernels: ECN marking, DCQCN, InfiniBand CC.

ECN (RED at a switch egress queue q): no mark below Kmin, probability rising linearly to
Pmax at Kmax, every packet above Kmax.

DCQCN is the fluid model of Zhu, Ghobadi, Misra and Padhye (CoNEXT 2016), per flow, with the
mark probability p and the flow's send rate R as the sender sees them one feedback delay
late: a CNP arrives in a decrease interval tau with probability a = 1 - (1-p)^(tau R); each
cuts R_C by alpha/2 and sets R_T = R_C (NVIDIA's firmware: only when the rate was raised
since the cut before, see `_clamp_share`); alpha follows the share of alpha intervals with a
mark; the timer (every T) and the byte counter (every B bytes) raise the rate, the first F
stages by fast recovery towards R_T, later ones by additive increase of R_T. Hyper increase
(NVIDIA's later stage) is this model's extension: increase events when both counters have
passed F stages without a mark (with no byte counter, when the timer has passed F + 1),
derived the same way; with R_HAI = R_AI the model is exactly the published one.

IB CC (IBA Annex A10 in fluid form): while a port is congested it marks one packet in
``marking_rate + 1``; each BECN at the source raises the CCT index by CCTI_Increase, the
timer lowers it by one per expiry; the flow's rate is line x t_pkt / (t_pkt + gap), the gap
read from the congestion control table at the index.

`engine.transport.reference` holds the plain-Python twins the tests compare against.
"""

from __future__ import annotations

import math

from numba import njit

from engine.transport.structures import DcqcnKnobs, IbccKnobs

# A probability this close to 1 is treated as 1 - P_CEIL, so that log(1 - p) stays finite.
P_CEIL = 1e-12


@njit(cache=True, nogil=True, inline="always")
def red_probability(queue: float, kmin: float, kmax: float, pmax: float) -> float:
    """ECN marking probability of a packet leaving a queue of `queue` bytes."""
    if pmax <= 0.0 or queue <= kmin:
        return 0.0
    if queue > kmax:
        return 1.0
    # the fraction first, capped at 1, so rounding never lifts it past Pmax at Kmax
    return pmax * min((queue - kmin) / (kmax - kmin), 1.0)


@njit(cache=True, nogil=True, inline="always")
def _events_without_mark(rate_pkts: float, span: float, log_keep: float, p: float) -> float:
    """Rate (1/s) of counter events, one per `span` packets (span = T x rate for the timer),
    in the fluid model: p R / ((1-p)^(-span) - 1), whose limit without marks is R / span."""
    x = -span * log_keep
    if x < 1e-9:
        return rate_pkts / span if span > 0.0 else 0.0
    if x > 700.0:
        return 0.0  # a mark-free span this long never happens (and expm1 would overflow)
    return p * rate_pkts / math.expm1(x)


@njit(cache=True, nogil=True, inline="always")
def _clamp_share(cuts: float, byte_events: float, timer_events: float, k: DcqcnKnobs) -> float:
    """The share of cuts that also set R_T = R_C: all of them in the published model;
    otherwise those with an increase event since the cut before (stationary odds of the
    increase events winning the race against the next cut)."""
    if k.clamp_always > 0.0:
        return 1.0
    raises = byte_events + k.clamp_after_timer * timer_events
    if raises <= 0.0:
        return 0.0
    return raises / (raises + cuts)


@njit(cache=True, nogil=True, inline="always")
def dcqcn_derivatives(
    rc: float, rt: float, alpha: float, p: float, rate_seen: float, k: DcqcnKnobs, pkt: float
) -> tuple[float, float, float]:
    """d(R_C)/dt, d(R_T)/dt and d(alpha)/dt of one flow (rates in bytes/s)."""
    rp = max(rate_seen, 0.0) / pkt
    if p <= 0.0:
        # No marks: no cut, alpha decays, every increase event is past its fast stages.
        r_d = 1.0 / k.timer
        r_b = rp * pkt / k.byte_counter
        d_alpha = -k.gain / k.tau_alpha * alpha
        return (rt - rc) / 2.0 * (r_b + r_d), k.rate_hai * (r_b + r_d), d_alpha
    p = min(p, 1.0 - P_CEIL)
    log_keep = math.log1p(-p)
    bc_pkts = k.byte_counter / pkt
    timer_pkts = k.timer * rp
    if p > 0.0:
        a = -math.expm1(k.tau * rp * log_keep)
        alpha_target = -math.expm1(k.tau_alpha * rp * log_keep)
    else:
        a = 0.0
        alpha_target = 0.0
    # Timer events: one per T whatever the rate (the limit of the fluid term as R -> 0).
    r_d = _events_without_mark(rp, timer_pkts, log_keep, p) if timer_pkts > 0.0 else 1.0 / k.timer
    r_b = _events_without_mark(rp, bc_pkts, log_keep, p) if math.isfinite(bc_pkts) else 0.0
    r_e = r_d * math.exp(k.fast_steps * timer_pkts * log_keep)
    r_c = r_b * math.exp(k.fast_steps * bc_pkts * log_keep) if r_b > 0.0 else 0.0
    if math.isfinite(bc_pkts):
        hyper_span = k.fast_steps * max(bc_pkts, timer_pkts)
    else:
        hyper_span = (k.fast_steps + 1.0) * timer_pkts
    hyper = math.exp(hyper_span * log_keep)
    cut = min(alpha / 2.0, k.max_cut)
    d_alpha = k.gain / k.tau_alpha * (alpha_target - alpha)
    d_rt = (
        -(rt - rc) * a / k.tau * _clamp_share(a / k.tau, r_b, r_d, k)
        + k.rate_ai * (r_c + r_e)
        + (k.rate_hai - k.rate_ai) * (r_b + r_d) * hyper
    )
    d_rc = -rc * cut * a / k.tau + (rt - rc) / 2.0 * (r_b + r_d)
    return d_rc, d_rt, d_alpha


@njit(cache=True, nogil=True, inline="always")
def dcqcn_step(
    rc: float,
    rt: float,
    alpha: float,
    p: float,
    rate_seen: float,
    line_rate: float,
    k: DcqcnKnobs,
    pkt: float,
    dt: float,
) -> tuple[float, float, float]:
    """One explicit Euler step of DCQCN; rates stay within [minimum rate, line rate] and
    alpha within [0, 1]."""
    d_rc, d_rt, d_alpha = dcqcn_derivatives(rc, rt, alpha, p, rate_seen, k, pkt)
    floor = min(k.rate_min, line_rate)
    rc = min(max(rc + d_rc * dt, floor), line_rate)
    rt = min(max(rt + d_rt * dt, floor), line_rate)
    alpha = min(max(alpha + d_alpha * dt, 0.0), 1.0)
    return rc, rt, alpha


@njit(cache=True, nogil=True, inline="always")
def ibcc_rate(ccti: float, line_rate: float, k: IbccKnobs) -> float:
    """The injection rate of one flow at CCT index `ccti`: line x t_pkt / (t_pkt + gap)."""
    i = math.floor(ccti)
    multiplier = math.floor(k.cct_coef * i * i)
    gap_in_packets = multiplier / (1 << k.cct_shift)
    return line_rate / (1.0 + gap_in_packets)


@njit(cache=True, nogil=True, inline="always")
def ibcc_step(
    ccti: float, becn: float, rate_seen: float, k: IbccKnobs, pkt: float, dt: float
) -> float:
    """One step of the CCT index: up by CCTI_Increase per BECN (marked share of the packets
    sent while congested), down by one per timer expiry, within [CCTI_Min, CCTI_Limit]."""
    becn_rate = max(rate_seen, 0.0) / pkt * becn * k.mark_fraction
    ccti += (k.ccti_increase * becn_rate - 1.0 / k.ccti_timer) * dt
    return min(max(ccti, k.ccti_min), k.ccti_limit)
