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
    reaction.react_per_cut(0, cs.rc, cs.rt, cs.alpha, cs.rp, p, sent, out, LINE, k, PKT, dt)


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
    for p, sent, out, dt in steps:
        step(kernel, knobs, p, sent, out, dt)
        reaction_reference.react_per_cut(twin, 0, (p, sent, out), LINE, knobs, PKT, dt)
        for name in ("rc", "rt", "alpha", "rp"):
            np.testing.assert_allclose(getattr(kernel, name), getattr(twin, name), rtol=1e-9)
        assert knobs.rate_min <= kernel.rc[0] <= LINE and kernel.rt[0] <= LINE
        assert 0.0 <= kernel.alpha[0] <= 1.0


def test_the_draws_are_exponential_and_alike_in_both(catalog):
    draws = [reaction.marks_needed(float(c), float(n)) for c in range(200) for n in range(50)]
    assert np.mean(draws) == pytest.approx(1.0, rel=0.03)
    assert np.median(draws) == pytest.approx(math.log(2.0), rel=0.05)
    for c, n in ((0, 0), (7, 3), (12345, 678)):
        assert reaction.marks_needed(float(c), float(n)) == reaction_reference.marks_needed(c, n)


def test_a_train_of_marks_cuts_once_per_tau_while_the_sender_is_paused(nvidia):
    # Every packet leaving marked, the sender paused (nothing sent: the byte counter
    # stands still): a cut every tau (plus the wait for a marked packet, here a few
    # nanoseconds), each by alpha / 2; R_T is set to R_C only at the first cut (the flow
    # was raised before it, never after). Alpha falls from 1 towards a quarter (a cut in
    # one alpha interval of four) by 5/1024 per us, so it stays above 0.8 over 40 us.
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
        step(cs, nvidia, 1.0, LINE, LINE, 0.02e-6)  # the first cut, within a packet
        assert cs.rp[reaction.CUTS, 0] == 1
        assert cs.rp[reaction.BYTE_STAGE, 0] == 0
        while cs.rp[reaction.SINCE_CUT, 0] + dt < second * (1 - 1e-9):
            step(cs, nvidia, 0.0, cs.rc[0], 0.0, dt)
        assert cs.rp[reaction.BYTE_STAGE, 0] == 1
        assert cs.rc[0] == pytest.approx(0.75 * LINE)
        step(cs, nvidia, 0.0, cs.rc[0], 0.0, dt)
        assert cs.rp[reaction.BYTE_STAGE, 0] == 2
        assert cs.rc[0] == pytest.approx(0.875 * LINE)
