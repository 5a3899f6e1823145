"""DCQCN's reaction point as the NIC runs it: a small state machine per flow class.

The published fluid model (`engine.transport.control.dcqcn_derivatives`) averages DCQCN's
events into rates: a cut, a timer event and a byte-counter event each happen with some
probability per packet, and every marked packet is taken to restart the counters. That
holds while cuts are rare next to the counters' spans (the paper's 10 MB byte counter and
55 us timer). At NVIDIA's defaults it does not: a cut comes at most once per tau = 4 us,
the 32 KB byte counter fires every 0.65 us at 400G, and the timer needs 300 us. There the
flows move in step and the averages miss what the packets do (tests/validation/
test_packet_level.py): fast recovery puts R_C back at R_T between cuts, so R_T barely
falls and the queue fills to PFC's XOFF; the deep queue then drains with every packet
marked, the cuts go on every 4 us long after the senders slowed down, R_C falls to its
floor, and only the 300 us timer lifts it again.

So here each class runs the reaction point itself, with the clocks and counters the NIC
keeps (the feedback it reads is still the fluid's, one feedback delay late):

- marks ride the packets that leave the queues (`out_Bps`, a paused sender still hears of
  what it sent before) with the path's mark probability p; after a cut none counts for
  tau (CNP interval, decrease period), then the first marked packet makes the next cut.
  Packets reach the receiver one spacing (packet size over `out_Bps`) apart, each marked
  with p, and the cut waits for the packet at which the summed -log(1 - p) passes an
  Exp(1) draw (`marks_needed`, per class and cut, so classes that see the same marks
  still cut apart, as flows do). The receiver's CNP interval starts at the marked packet
  it answers, so the train of the flow's packets is locked to it: the first packet after
  tau comes ceil(tau / g) g - tau after it (g the spacing). That matters at high fan-in,
  where a flow's packets come far apart: at 16:1 on 400G g is 1.3 us, so a flow with
  every packet marked is cut every 5.2 us, not every 4. At a cut R_T = R_C (always, or
  as NVIDIA's CLAMP_TGT_RATE only after an increase since the last cut), R_C is cut by
  min(alpha / 2, largest cut), the counters and stages restart;
- the timer (every T) and the byte counter (every B bytes sent) raise the rate, through
  fast recovery for the first F stages, then additive, then hyper increase;
- alpha moves every alpha interval by the gain, towards 1 if a cut came in it.

The class's flows move together (one state for all, as the fluid's classes always have).
`engine.transport.reaction_reference` is the plain-Python twin.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.runtime.colour_hash import GOLDEN, MIX1, MIX2
from engine.transport.structures import DcqcnKnobs

# Rows of a class's reaction-point state (`ClassState.rp`, one column per class): clocks,
# counters and flags, then the class's identity, its cuts so far, the summed hazard the
# next cut waits for (drawn per cut, see `marks_needed`) and where the class's next packet
# stands, in spacings (`packet_phase`).
(
    SINCE_CUT,
    MARKS,
    BYTES,
    TIMER,
    BYTE_STAGE,
    TIMER_STAGE,
    ALPHA_CLOCK,
    CUT_SEEN,
    RAISED,
    IDENTITY,
    CUTS,
    NEED,
    PHASE,
) = range(13)
RP_ROWS = 13
P_CEIL = 1e-12  # as in `engine.transport.control`: log(1 - p) stays finite
MAX_EVENTS = 64  # events one class may take in one step (a bound, never reached)


def new_reaction_state(identities: np.ndarray | int) -> np.ndarray:
    """The reaction points' state at the start: no cut yet, counters at zero, raised (a
    flow at line rate has not been cut since it was raised), each class its identity for
    the draws (`identities`, or 0, 1, ... for a count): kept with the class when a run
    keeps only part of its classes, and alike in copies of a part
    (`engine.transport.copies.ranks_in_parts`)."""
    ids = np.arange(identities) if isinstance(identities, int) else np.asarray(identities)
    rp = np.zeros((RP_ROWS, ids.size))
    rp[SINCE_CUT] = math.inf
    rp[RAISED] = 1.0
    rp[IDENTITY] = ids
    for c in range(ids.size):
        rp[NEED, c] = marks_needed(float(ids[c]), 0.0)
        rp[PHASE, c] = packet_phase(float(ids[c]), 0.0)
    return rp


@njit(cache=True, nogil=True, inline="always")
def _uniform(identity: float, cuts: float, stream: int) -> float:
    """A number in (0, 1) from splitmix64 of a class's identity, its cut count and a
    stream number (one stream per draw the reaction point makes)."""
    z = np.uint64(identity) * GOLDEN + np.uint64(cuts) * MIX1 + np.uint64(stream)
    z = (z ^ (z >> np.uint64(30))) * MIX1
    z = (z ^ (z >> np.uint64(27))) * MIX2
    z = z ^ (z >> np.uint64(31))
    return (float(z >> np.uint64(11)) + 0.5) * 2.0**-53


@njit(cache=True, nogil=True, inline="always")
def marks_needed(identity: float, cuts: float) -> float:
    """The hazard (summed over the packets that reach the receiver after the dead time,
    -log(1 - p) each) the next cut of a class waits for: the first marked packet is the
    first at which that sum passes an Exp(1) draw. Drawn from a hash of the class's
    identity and cut count, so a run is reproducible, the plain-Python twin draws alike,
    and classes that see the same marks still cut apart, as flows do per packet."""
    return -math.log(_uniform(identity, cuts, 1))


@njit(cache=True, nogil=True, inline="always")
def packet_phase(identity: float, cuts: float) -> float:
    """Where a class's first packet stands at its start, in packet spacings (0, 1]: the
    flows' trains do not start in step. After a cut the phase is no draw: the receiver's
    CNP interval starts at the marked packet it answers, so the train is locked to it
    (`react_per_cut`). Drawn as `marks_needed`."""
    return _uniform(identity, cuts, 2)


@njit(cache=True, nogil=True, inline="always")
def _next_packet(phase: float, passed: float) -> float:
    """Where the next packet stands (in spacings) once `passed` spacings have gone by."""
    if passed < phase:
        return phase - passed
    return phase + math.floor(passed - phase) + 1.0 - passed


@njit(cache=True, nogil=True, inline="always")
def _increase(rc: float, rt: float, ts: float, bs: float, line: float, k: DcqcnKnobs):
    """One increase event at timer stage `ts` and byte stage `bs`: fast recovery for the
    first F stages, then additive, then (both counters, or the timer alone without a byte
    counter, past them) hyper increase of R_T; R_C halfway to R_T."""
    if math.isfinite(k.byte_counter):
        fast = max(ts, bs) < k.fast_steps
        hyper = min(ts, bs) > k.fast_steps
    else:
        fast = ts < k.fast_steps
        hyper = ts > k.fast_steps + 1.0
    if not fast:
        rt = min(rt + (k.rate_hai if hyper else k.rate_ai), line)
    return min((rt + rc) / 2.0, line), rt


@njit(cache=True, nogil=True, inline="always")
def mark_hazard(p: float) -> float:
    """What a packet marked with probability `p` adds to the hazard a cut waits for:
    -log(1 - p), finite (`P_CEIL`). Apart from `react_per_cut`, so that classes seeing the
    same marks (an incast's senders, one after another) take one logarithm."""
    if p > 0.0:
        return -math.log1p(-min(p, 1.0 - P_CEIL))
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def react_per_cut(
    c: int,
    rc: np.ndarray,
    rt: np.ndarray,
    alpha: np.ndarray,
    rp: np.ndarray,
    seen: tuple[float, float, float],
    line: float,
    tau: float,
    k: DcqcnKnobs,
    pkt: float,
    dt: float,
) -> None:
    """Move class `c`'s reaction point on by `dt` (`tau` its dead time after a cut: the
    decrease period, or the CNP interval its receiving port leaves it), having `seen`
    (hazard, sent_Bps, out_Bps): marks on its path (their `mark_hazard` per packet reaching
    the receiver), what it sends now and what left the network (per flow, one feedback
    delay ago). The events inside the step (the end of a cut's dead time, a cut, a timer
    or byte-counter event, an alpha update) are taken in their order, the byte counter at
    the pace R_C sets, so the outcome does not hang on the step."""
    hazard, sent_Bps, out_Bps = seen
    packets = out_Bps / pkt if out_Bps > 0.0 else 0.0  # per second, reaching the receiver
    pace = sent_Bps / rc[c] if rc[c] > 0.0 else 0.0  # what the flow sends per unit of R_C
    left = dt
    for _ in range(MAX_EVENTS):
        since = rp[SINCE_CUT, c]
        dead = max(tau - since, 0.0)
        to_cut = math.inf
        if hazard > 0.0 and packets > 0.0:
            # the packet at which the summed hazard passes the draw: the next one, or
            # whole packets after it
            after = max(math.ceil((rp[NEED, c] - rp[MARKS, c]) / hazard), 1.0) - 1.0
            to_cut = dead + (_next_packet(rp[PHASE, c], packets * dead) + after) / packets
        to_timer = k.timer - rp[TIMER, c] if k.timer > 0.0 else math.inf
        to_bytes = math.inf
        if math.isfinite(k.byte_counter) and pace > 0.0:
            to_bytes = (k.byte_counter - rp[BYTES, c]) / (pace * rc[c])
        to_alpha = k.tau_alpha - rp[ALPHA_CLOCK, c]
        t = max(min(to_cut, to_timer, to_bytes, to_alpha), 0.0)
        span = min(t, left)
        # packets inside the dead time pass uncounted, those after it add their hazard
        rp[PHASE, c] = _next_packet(rp[PHASE, c], packets * min(span, dead))
        moved = packets * max(span - dead, 0.0)
        if moved >= rp[PHASE, c]:
            crossed = math.floor(moved - rp[PHASE, c]) + 1.0
            rp[MARKS, c] += crossed * hazard
            rp[PHASE, c] += crossed - moved
        else:
            rp[PHASE, c] -= moved
        rp[SINCE_CUT, c] += span
        rp[TIMER, c] += span
        rp[BYTES, c] += pace * rc[c] * span
        rp[ALPHA_CLOCK, c] += span
        left -= span
        if t > span:
            break  # no event before the step ends
        if to_cut <= t:
            _cut(c, rc, rt, alpha, rp, line, k)
        elif to_alpha <= t:
            rp[ALPHA_CLOCK, c] = 0.0
            alpha[c] = (1.0 - k.gain) * alpha[c] + k.gain * rp[CUT_SEEN, c]
            rp[CUT_SEEN, c] = 0.0
        elif to_timer <= t:
            rp[TIMER, c] = 0.0
            rp[TIMER_STAGE, c] += 1.0
            rc[c], rt[c] = _increase(rc[c], rt[c], rp[TIMER_STAGE, c], rp[BYTE_STAGE, c], line, k)
            if k.clamp_after_timer > 0.0:
                rp[RAISED, c] = 1.0
        else:
            rp[BYTES, c] = 0.0
            rp[BYTE_STAGE, c] += 1.0
            rc[c], rt[c] = _increase(rc[c], rt[c], rp[TIMER_STAGE, c], rp[BYTE_STAGE, c], line, k)
            rp[RAISED, c] = 1.0


@njit(cache=True, nogil=True, inline="always")
def _cut(
    c: int,
    rc: np.ndarray,
    rt: np.ndarray,
    alpha: np.ndarray,
    rp: np.ndarray,
    line: float,
    k: DcqcnKnobs,
) -> None:
    """A CNP's cut: R_T = R_C (always, or only after an increase since the last cut),
    R_C cut by min(alpha / 2, the largest cut), the counters and stages restarted."""
    if k.clamp_always > 0.0 or rp[RAISED, c] > 0.0:
        rt[c] = rc[c]
    rc[c] = max(rc[c] * (1.0 - min(alpha[c] / 2.0, k.max_cut)), min(k.rate_min, line))
    rp[SINCE_CUT, c] = 0.0
    rp[MARKS, c] = 0.0
    rp[BYTES, c] = 0.0
    rp[TIMER, c] = 0.0
    rp[BYTE_STAGE, c] = 0.0
    rp[TIMER_STAGE, c] = 0.0
    rp[RAISED, c] = 0.0
    rp[CUT_SEEN, c] = 1.0
    rp[CUTS, c] += 1.0
    rp[NEED, c] = marks_needed(rp[IDENTITY, c], rp[CUTS, c])
    rp[PHASE, c] = 1.0  # the next packet one spacing after the marked one the cut answers
