"""DCQCN's reaction point per class (`engine.transport.reaction`) against its plain-Python
twin, and the NIC behaviour it is there for: cuts at most once per tau, counters restarted
only by a cut, the timer's gate after the last cut."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.transport import reaction, reaction_reference
from engine.transport.defaults import dcqcn_params
from engine.transport.tables import dcqcn_knobs

LINE = 50e9  # 400G in bytes/s
PKT = 4096.0


@pytest.fixture(scope="module", params=["dcqcn-paper", "dcqcn-nvidia"])
def knobs(request, catalog):
    return dcqcn_knobs(dcqcn_params(catalog, request.param))


@pytest.fixture(scope="module")
def nvidia(catalog):
    return dcqcn_knobs(dcqcn_params(catalog, "dcqcn-nvidia"))


def one_class(rc: float = LINE, rt: float = LINE, alpha: float = 1.0, identity: int = 0):
    """The arrays of one class's DCQCN state, as the kernel and the twin read them."""
    return SimpleNamespace(
        rc=np.array([rc]),
        rt=np.array([rt]),
        alpha=np.array([alpha]),
        rp=reaction.new_reaction_state(np.array([identity])),
    )


def step(cs, k, p: float, sent: float, out: float, dt: float) -> None:
    """One kernel step of class 0."""
    hazard = reaction.mark_hazard(p)
    reaction.react_per_cut(
        0, cs.rc, cs.rt, cs.alpha, cs.rp, (hazard, sent, out), LINE, k.tau, k, PKT, dt
    )


@settings(max_examples=150, deadline=None)
@given(
    st.floats(1e6, LINE),
    st.floats(0.0, 1.0),
    st.lists(
        st.tuples(
            st.one_of(st.just(0.0), st.floats(1e-6, 1.0)),
            st.floats(0.0, LINE),
            st.floats(0.0, LINE),
            st.floats(1e-8, 2e-6),
        ),
        min_size=1,
        max_size=40,
    ),
    st.integers(0, 1000),
)
def test_the_kernel_matches_its_twin_step_by_step(knobs, rate, alpha, steps, identity):
    kernel = one_class(rate, LINE, alpha, identity)
    twin = one_class(rate, LINE, alpha, identity)
    now, last_cut = 0.0, -math.inf
    for p, sent, out, dt in steps:
        cuts = kernel.rp[reaction.CUTS, 0]
        step(kernel, knobs, p, sent, out, dt)
        now += dt
        reaction_reference.react_per_cut(twin, 0, (p, sent, out), LINE, knobs.tau, knobs, PKT, dt)
        for name in ("rc", "rt", "alpha", "rp"):
            np.testing.assert_allclose(getattr(kernel, name), getattr(twin, name), rtol=1e-9)
        assert knobs.rate_min <= kernel.rc[0] <= LINE and kernel.rt[0] <= LINE
        assert 0.0 <= kernel.alpha[0] <= 1.0
        assert 0.0 < kernel.rp[reaction.PHASE, 0] <= 1.0 + 1e-9  # the next packet, ahead
        if kernel.rp[reaction.CUTS, 0] > cuts:  # never two cuts within the dead time
            assert kernel.rp[reaction.CUTS, 0] == cuts + 1  # (a step is shorter than tau)
            cut_at = now - kernel.rp[reaction.SINCE_CUT, 0]
            assert cut_at - last_cut >= knobs.tau * (1 - 1e-9)
            last_cut = cut_at


def test_the_draws_are_exponential_and_alike_in_both(catalog):
    draws = [reaction.marks_needed(float(c), float(n)) for c in range(200) for n in range(50)]
    assert np.mean(draws) == pytest.approx(1.0, rel=0.03)
    assert np.median(draws) == pytest.approx(math.log(2.0), rel=0.05)
    for c, n in ((0, 0), (7, 3), (12345, 678)):
        assert reaction.marks_needed(float(c), float(n)) == reaction_reference.marks_needed(c, n)


def test_the_packet_phases_are_uniform_apart_from_the_marks_and_alike_in_both():
    phases = np.array(
        [reaction.packet_phase(float(c), float(n)) for c in range(200) for n in range(50)]
    )
    assert phases.min() > 0.0 and phases.max() < 1.0
    assert np.mean(phases) == pytest.approx(0.5, rel=0.02)
    assert np.mean(phases < 0.25) == pytest.approx(0.25, rel=0.05)
    needs = [reaction.marks_needed(float(c), float(n)) for c in range(200) for n in range(50)]
    assert abs(np.corrcoef(phases, needs)[0, 1]) < 0.05  # two streams, not one
    for c, n in ((0, 0), (7, 3), (12345, 678)):
        assert reaction.packet_phase(float(c), float(n)) == reaction_reference.packet_phase(c, n)


def _wait_for_the_next_cut(k, p: float, spacing: float, identity: int) -> float:
    """After a first cut, the time from the end of the dead time to the next cut of a
    class whose packets reach the receiver `spacing` apart, each marked with `p`."""
    cs = one_class(identity=identity)
    out = PKT / spacing
    dt = spacing / 7.0
    while cs.rp[reaction.CUTS, 0] < 1:
        step(cs, k, 1.0, 0.0, out, dt)
    elapsed = cs.rp[reaction.SINCE_CUT, 0]  # since the first cut
    while cs.rp[reaction.CUTS, 0] < 2:
        step(cs, k, p, 0.0, out, dt)
        elapsed += dt
    return elapsed - cs.rp[reaction.SINCE_CUT, 0] - k.tau


@pytest.mark.parametrize("p", [1.0, 0.1])
def test_a_cut_waits_for_a_marked_packet_in_whole_packets(nvidia, p):
    # Per packet the receiver answers the first marked packet after the dead time. Its CNP
    # interval started at the marked packet the last cut answered, so the flow's packets
    # after it come at whole spacings g from it: the first after tau at ceil(tau / g) g,
    # then each marked with p, the cut at the one where the summed hazard -log(1 - p)
    # passes the class's Exp(1) draw. Class by class, the kernel waits exactly that.
    spacing = 0.3e-6  # tau = 4 us is 13.3 spacings: the first packet after it 0.2 us on
    hazard = -math.log1p(-min(p, 1.0 - reaction.P_CEIL))
    first = math.ceil(nvidia.tau / spacing) * spacing - nvidia.tau
    for c in range(100):
        wait = _wait_for_the_next_cut(nvidia, p, spacing, c)
        e = reaction.marks_needed(float(c), 1.0)
        expected = first + (math.ceil(e / hazard) - 1.0) * spacing
        assert wait == pytest.approx(expected, rel=1e-6, abs=1e-12)


def test_with_every_packet_marked_a_flow_is_cut_every_whole_number_of_spacings(nvidia):
    # At 16:1 on 400G a flow's packets reach the receiver 1.3 us apart: tau = 4 us ends
    # between the third and the fourth, so with every packet marked the cuts come every
    # four spacings, 5.2 us (per packet, `tests/validation/packet_level.py`: 5.24 us apart
    # while the spacing is 1.31), whatever the step.
    spacing = 1.3e-6
    for dt in (0.1e-6, 0.4e-6):
        cs = one_class()
        cut_at, now = [], 0.0
        while len(cut_at) < 5:
            before = cs.rp[reaction.CUTS, 0]
            step(cs, nvidia, 1.0, 0.0, PKT / spacing, dt)
            now += dt
            if cs.rp[reaction.CUTS, 0] > before:
                cut_at.append(now - cs.rp[reaction.SINCE_CUT, 0])
        np.testing.assert_allclose(np.diff(cut_at), 4 * spacing, rtol=1e-9)


def test_a_train_of_marks_cuts_once_per_tau_while_the_sender_is_paused(nvidia):
    # Every packet leaving marked, the sender paused (nothing sent: the byte counter
    # stands still): a cut every tau (and on to the next packet: at the line they are
    # 82 ns apart, so every 49 spacings, 4.01 us), each by alpha / 2; R_T is set to R_C
    # only at the first cut (the flow was raised before it, never after). Alpha falls from
    # 1 towards a quarter (a cut in one alpha interval of four) by 5/1024 per us, so it
    # stays above 0.8 over 40 us.
    cs = one_class()
    dt = 0.1e-6
    for _ in range(round(40.05e-6 / dt)):
        step(cs, nvidia, 1.0, 0.0, LINE, dt)
    cuts = cs.rp[reaction.CUTS, 0]
    assert cuts == 10  # at 0 (no cut before) and then every tau = 4 us up to 36 us
    assert cs.rt[0] == LINE
    assert LINE * 0.5**10 <= cs.rc[0] <= LINE * 0.6**10


def test_after_the_last_cut_only_the_timer_lifts_a_flow_at_its_floor(nvidia):
    # A flow cut to its floor sends too little for its 32 KB byte counter: once the marks
    # stop, nothing raises it until the 300 us timer: R_T up by additive increase (with
    # NVIDIA's one fast-recovery stage, the first event is already past it, as in the
    # paper's pseudo-code: the stage counts before the test), R_C halfway to it.
    cs = one_class(rc=nvidia.rate_min, rt=0.25 * LINE, alpha=0.5)
    cs.rp[reaction.RAISED, 0] = 0.0
    dt = 1e-6
    step(cs, nvidia, 1.0, 0.0, LINE, dt)  # the last cut
    assert cs.rp[reaction.CUTS, 0] == 1
    floor = cs.rc[0]
    for _ in range(298):
        step(cs, nvidia, 0.0, cs.rc[0], 0.0, dt)
    assert cs.rc[0] == floor
    for _ in range(3):
        step(cs, nvidia, 0.0, cs.rc[0], 0.0, dt)
    assert cs.rc[0] == pytest.approx((0.25 * LINE + nvidia.rate_ai + floor) / 2)


def test_between_cuts_the_byte_counter_restores_the_rate_at_its_own_pace(nvidia):
    # After a cut from line rate (alpha 1: to half), the flow sends at R_C and its byte
    # counter fires every 32,767 bytes: first after B / (L/2), R_C halfway back to R_T
    # (which is at the line already), then after B / R_C at the raised pace, whatever the
    # step.
    b = nvidia.byte_counter
    second = b / (LINE / 2) + b / (0.75 * LINE)
    for dt in (0.05e-6, 0.4e-6):
        cs = one_class()
        step(cs, nvidia, 1.0, LINE, LINE, PKT / LINE)  # the first cut: the next packet
        assert cs.rp[reaction.CUTS, 0] == 1
        assert cs.rp[reaction.BYTE_STAGE, 0] == 0
        while cs.rp[reaction.SINCE_CUT, 0] + dt < second * (1 - 1e-9):
            step(cs, nvidia, 0.0, cs.rc[0], 0.0, dt)
        assert cs.rp[reaction.BYTE_STAGE, 0] == 1
        assert cs.rc[0] == pytest.approx(0.75 * LINE)
        step(cs, nvidia, 0.0, cs.rc[0], 0.0, dt)
        assert cs.rp[reaction.BYTE_STAGE, 0] == 2
        assert cs.rc[0] == pytest.approx(0.875 * LINE)
