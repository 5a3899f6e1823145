"""Plain-Python twin of `engine.transport.reaction`: DCQCN's reaction point per class, step
by step, for the tests to hold the numba kernel to (and for reading)."""

from __future__ import annotations

import math

from engine.transport.structures import ClassState, DcqcnKnobs

_ROWS = (
    "since_cut",
    "marks",
    "bytes",
    "timer",
    "byte_stage",
    "timer_stage",
    "alpha_clock",
    "cut_seen",
    "raised",
    "identity",
    "cuts",
    "need",
    "phase",
)
_MASK = (1 << 64) - 1


def _uniform(identity: float, cuts: float, stream: int) -> float:
    """A number in (0, 1) from splitmix64 of identity, cut count and stream (as the kernel)."""
    z = (int(identity) * 0x9E3779B97F4A7C15 + int(cuts) * 0xBF58476D1CE4E5B9 + stream) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return ((z >> 11) + 0.5) * 2.0**-53


def marks_needed(identity: float, cuts: float) -> float:
    """Exp(1): the summed hazard the next cut waits for (as the kernel)."""
    return -math.log(_uniform(identity, cuts, 1))


def packet_phase(identity: float, cuts: float) -> float:
    """Where a class's first packet stands at its start, in packets (as the kernel)."""
    return _uniform(identity, cuts, 2)


def react_per_cut(
    cs: ClassState,
    c: int,
    seen: tuple[float, float, float],
    line: float,
    tau: float,
    k: DcqcnKnobs,
    pkt: float,
    dt: float,
) -> None:
    """One reaction-point step of class `c` on `seen` = (mark probability along the path
    and bytes/s out of the network, one feedback delay late; bytes/s sent now), per flow:
    the events inside the step in their order."""
    p, sent, out = seen
    s = {name: float(x) for name, x in zip(_ROWS, cs.rp[:, c], strict=True)}
    rates = {"rc": float(cs.rc[c]), "rt": float(cs.rt[c]), "alpha": float(cs.alpha[c])}
    hazard = -math.log1p(-min(p, 1.0 - 1e-12)) if p > 0.0 else 0.0  # per packet
    packets = out / pkt if out > 0.0 else 0.0  # per second, reaching the receiver
    pace = sent / rates["rc"] if rates["rc"] > 0.0 else 0.0
    left = dt
    for _ in range(64):
        dead = max(tau - s["since_cut"], 0.0)
        cut_at = math.inf
        if hazard > 0.0 and packets > 0.0:
            whole = max(math.ceil((s["need"] - s["marks"]) / hazard), 1.0) - 1.0
            cut_at = dead + (_next_packet(s["phase"], packets * dead) + whole) / packets
        until = {
            "cut": cut_at,
            "alpha": k.tau_alpha - s["alpha_clock"],
            "timer": k.timer - s["timer"] if k.timer > 0.0 else math.inf,
            "bytes": (k.byte_counter - s["bytes"]) / (pace * rates["rc"])
            if math.isfinite(k.byte_counter) and pace > 0.0
            else math.inf,
        }
        t = max(min(until.values()), 0.0)
        span = min(t, left)
        s["phase"] = _next_packet(s["phase"], packets * min(span, dead))  # no mark counts in tau
        moved = packets * max(span - dead, 0.0)
        if moved >= s["phase"]:
            crossed = math.floor(moved - s["phase"]) + 1.0
            s["marks"] += crossed * hazard
            s["phase"] += crossed - moved
        else:
            s["phase"] -= moved
        for clock in ("since_cut", "timer", "alpha_clock"):
            s[clock] += span
        s["bytes"] += pace * rates["rc"] * span
        left -= span
        if t > span:
            break
        event = next(name for name in ("cut", "alpha", "timer", "bytes") if until[name] <= t)
        _handle(event, s, rates, line, k)
    cs.rc[c], cs.rt[c], cs.alpha[c] = rates["rc"], rates["rt"], rates["alpha"]
    for i, name in enumerate(_ROWS):
        cs.rp[i, c] = s[name]


def _next_packet(phase: float, passed: float) -> float:
    """Where the next packet stands (in spacings) once `passed` spacings have gone by."""
    if passed < phase:
        return phase - passed
    return phase + math.floor(passed - phase) + 1.0 - passed


def _handle(event: str, s: dict, rates: dict, line: float, k: DcqcnKnobs) -> None:
    """Apply one event of the reaction point to its state `s` and `rates`."""
    if event == "cut":
        if k.clamp_always or s["raised"]:
            rates["rt"] = rates["rc"]
        cut = min(rates["alpha"] / 2.0, k.max_cut)
        rates["rc"] = max(rates["rc"] * (1.0 - cut), min(k.rate_min, line))
        for name in ("since_cut", "marks", "bytes", "timer", "byte_stage", "timer_stage"):
            s[name] = 0.0
        s["raised"], s["cut_seen"] = 0.0, 1.0
        s["cuts"] += 1.0
        s["need"] = marks_needed(s["identity"], s["cuts"])
        s["phase"] = 1.0  # the next packet one spacing after the marked one
    elif event == "alpha":
        s["alpha_clock"] = 0.0
        rates["alpha"] = (1.0 - k.gain) * rates["alpha"] + k.gain * s["cut_seen"]
        s["cut_seen"] = 0.0
    else:
        stage = "timer_stage" if event == "timer" else "byte_stage"
        s["timer" if event == "timer" else "bytes"] = 0.0
        s[stage] += 1.0
        _raise(s, rates, line, k)
        if event == "bytes" or k.clamp_after_timer:
            s["raised"] = 1.0


def _raise(s: dict, rates: dict, line: float, k: DcqcnKnobs) -> None:
    """An increase event: fast recovery, additive or hyper increase by the stages."""
    timer_stage, byte_stage, f = s["timer_stage"], s["byte_stage"], k.fast_steps
    if math.isfinite(k.byte_counter):
        fast, hyper = max(timer_stage, byte_stage) < f, min(timer_stage, byte_stage) > f
    else:
        fast, hyper = timer_stage < f, timer_stage > f + 1.0
    if not fast:
        rates["rt"] = min(rates["rt"] + (k.rate_hai if hyper else k.rate_ai), line)
    rates["rc"] = min((rates["rt"] + rates["rc"]) / 2.0, line)
