"""The rate-control kernels (ECN, DCQCN, IB CC) against their plain-Python twins and the
published DCQCN fluid model."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.transport import control, reference
from engine.transport.defaults import dcqcn_params, ib_cc_params
from engine.transport.tables import dcqcn_knobs, ibcc_knobs

REL = 1e-12


@pytest.fixture(scope="module", params=["dcqcn-paper", "dcqcn-nvidia"])
def dcqcn(request, catalog):
    return dcqcn_knobs(dcqcn_params(catalog, request.param))


@pytest.fixture(scope="module")
def ibcc(catalog):
    return ibcc_knobs(ib_cc_params(catalog))


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 3e6), st.floats(0, 2e5), st.floats(1e3, 2e6), st.floats(0, 1))
def test_red_marking_matches_reference_and_its_shape(queue, kmin, span, pmax):
    kmax = kmin + span
    p = control.red_probability(queue, kmin, kmax, pmax)
    assert p == reference.red_probability(queue, kmin, kmax, pmax)
    if pmax == 0 or queue <= kmin:
        assert p == 0
    elif queue > kmax:
        assert p == 1
    else:
        assert 0 <= p <= pmax


rates = st.floats(1e6, 1e11)
probabilities = st.one_of(st.just(0.0), st.floats(1e-9, 0.5), st.floats(0.5, 1.0))


@settings(max_examples=300, deadline=None)
@given(rates, rates, st.floats(0, 1), probabilities, st.floats(0, 1e11))
def test_dcqcn_derivatives_match_reference(dcqcn, rc, rt, alpha, p, seen):
    got = control.dcqcn_derivatives(rc, rt, alpha, p, seen, dcqcn, 4096.0)
    want = reference.dcqcn_derivatives(rc, rt, alpha, p, seen, dcqcn, 4096.0)
    for g, w in zip(got, want, strict=True):
        assert close(g, w, 1e-10), (got, want)


@settings(max_examples=200, deadline=None)
@given(rates, rates, st.floats(0, 1), probabilities, st.floats(0, 1e11), st.floats(1e-8, 1e-6))
def test_dcqcn_step_matches_reference_and_stays_in_bounds(dcqcn, rc, rt, alpha, p, seen, dt):
    line = 5e10
    rc, rt = min(rc, line), min(rt, line)
    got = control.dcqcn_step(rc, rt, alpha, p, seen, line, dcqcn, 4096.0, dt)
    want = reference.dcqcn_step(rc, rt, alpha, p, seen, line, dcqcn, 4096.0, dt)
    for g, w in zip(got, want, strict=True):
        assert close(g, w, 1e-10)
    new_rc, new_rt, new_alpha = got
    assert min(dcqcn.rate_min, line) <= new_rc <= line
    assert min(dcqcn.rate_min, line) <= new_rt <= line
    assert 0.0 <= new_alpha <= 1.0


def test_an_unmarked_flow_at_line_rate_stays_there_and_forgets_alpha(dcqcn):
    line = 5e10
    d_rc, d_rt, d_alpha = control.dcqcn_derivatives(line, line, 0.5, 0.0, line, dcqcn, 4096.0)
    assert d_rc == 0.0 and d_rt > 0.0 and d_alpha < 0.0
    rc, rt, _ = control.dcqcn_step(line, line, 0.5, 0.0, line, line, dcqcn, 4096.0, 1e-7)
    assert rc == line and rt == line


def test_marks_cut_the_rate_and_raise_alpha(dcqcn):
    line = 5e10
    d_rc, _d_rt, d_alpha = control.dcqcn_derivatives(line, line, 0.1, 0.05, line, dcqcn, 4096.0)
    assert d_rc < 0.0 and d_alpha > 0.0


def _published_fixed_point(n, k, capacity=5e9, pkt=1000.0):
    """p* of the fluid model of Zhu et al. (CoNEXT 2016) for N flows, by bisection on
    dR_T/dt = 0 with dR_C/dt = 0 substituted (R_C = C/N); written from the paper's equations."""
    r = capacity / n
    rp, bc = r / pkt, k.byte_counter / pkt

    def excess(p):
        lk = math.log1p(-p)
        a = -math.expm1(k.tau * rp * lk)
        alpha = -math.expm1(k.tau_alpha * rp * lk)
        b = p * rp / math.expm1(-bc * lk)
        d = p * rp / math.expm1(-k.timer * rp * lk)
        c, e = b * math.exp(k.fast_steps * bc * lk), d * math.exp(k.fast_steps * k.timer * rp * lk)
        return r * alpha * a * a / (k.tau**2 * (b + d)) - k.rate_ai * (c + e)

    lo, hi = 1e-9, 0.03
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if excess(mid) > 0 else (mid, hi)
    p = lo
    lk = math.log1p(-p)
    a = -math.expm1(k.tau * rp * lk)
    alpha = -math.expm1(k.tau_alpha * rp * lk)
    b = p * rp / math.expm1(-bc * lk)
    d = p * rp / math.expm1(-k.timer * rp * lk)
    rt = r + r * alpha * a / (k.tau * (b + d))
    return p, r, rt, alpha


def test_without_clamping_a_train_of_cuts_keeps_the_target_rate(catalog):
    # Every packet marked: cuts every decrease interval and no increase event in between.
    # The published DCQCN pulls R_T down to R_C at each cut; NVIDIA's CLAMP_TGT_RATE = 0
    # leaves R_T where the flow was before the train.
    rc, rt = 10e9, 50e9
    paper = dcqcn_knobs(dcqcn_params(catalog, "dcqcn-paper"))
    nvidia = dcqcn_knobs(dcqcn_params(catalog, "dcqcn-nvidia"))
    for k in (paper, nvidia):
        d_rc, _, _ = control.dcqcn_derivatives(rc, rt, 1.0, 1.0, rc, k, 4096.0)
        assert d_rc < 0.0
    _, d_rt_paper, _ = control.dcqcn_derivatives(rc, rt, 1.0, 1.0, rc, paper, 4096.0)
    _, d_rt_nvidia, _ = control.dcqcn_derivatives(rc, rt, 1.0, 1.0, rc, nvidia, 4096.0)
    assert d_rt_paper < -0.1 * (rt - rc) / paper.tau
    assert abs(d_rt_nvidia) < 1e-6 * (rt - rc) / nvidia.tau
    # With marks rare, increase events win the race against the next cut: nearly every cut
    # clamps, as in the published model.
    clamping = nvidia._replace(clamp_always=1.0)
    p = 1e-4
    _, d_rt_rare, _ = control.dcqcn_derivatives(rc, rt, 0.1, p, rc, nvidia, 4096.0)
    _, d_rt_clamped, _ = control.dcqcn_derivatives(rc, rt, 0.1, p, rc, clamping, 4096.0)
    clamp_term = (rt - rc) * -math.expm1(nvidia.tau * rc / 4096.0 * math.log1p(-p)) / nvidia.tau
    assert d_rt_clamped < d_rt_rare <= d_rt_clamped + 0.1 * clamp_term


@pytest.mark.parametrize("n", [2, 10])
def test_the_published_fixed_point_is_a_rest_point_of_the_kernel(catalog, n):
    k = dcqcn_knobs(dcqcn_params(catalog, "dcqcn-paper"))
    p, r, rt, alpha = _published_fixed_point(n, k)
    d_rc, d_rt, d_alpha = control.dcqcn_derivatives(r, rt, alpha, p, r, k, 1000.0)
    # Each term of the model is of order R/tau; at the fixed point they cancel.
    scale = r / k.tau
    assert abs(d_rc) < 1e-6 * scale
    assert abs(d_rt) < 1e-6 * scale
    assert abs(d_alpha) < 1e-9


def test_ib_cc_rate_follows_the_congestion_control_table(ibcc):
    line = 5e10
    assert control.ibcc_rate(0.0, line, ibcc) == line
    rates = [control.ibcc_rate(float(i), line, ibcc) for i in range(128)]
    assert all(a >= b for a, b in itertools.pairwise(rates))
    # mellanox_default: multiplier(127) = floor(7 * 127^2 / (95^2 * 0.218)) = 57.
    assert rates[127] == pytest.approx(line / 58)
    for i in range(128):
        assert rates[i] == reference.ibcc_rate(float(i), line, ibcc)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 127), st.floats(0, 1), st.floats(0, 1e11), st.floats(1e-8, 1e-6))
def test_ib_cc_index_matches_reference_and_moves_the_right_way(ibcc, ccti, becn, seen, dt):
    got = control.ibcc_step(ccti, becn, seen, ibcc, 4096.0, dt)
    assert close(got, reference.ibcc_step(ccti, becn, seen, ibcc, 4096.0, dt), 1e-12)
    assert ibcc.ccti_min <= got <= ibcc.ccti_limit
    if becn == 0.0:
        assert got <= ccti
    quiet = control.ibcc_step(ccti, 0.0, seen, ibcc, 4096.0, dt)
    assert got >= quiet
