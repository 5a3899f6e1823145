"""The fluid transport model against packets: the same networks, sent packet by packet.

`tests/validation/packet_level.py` moves MTU-sized packets through FIFO egress ports under
the same credits or PFC thresholds, and with DCQCN per packet where asked (no loss). Where
the fluid model shares and pushes back as packets do, both give the same flow throughput. Tolerance, fixed
before the first run (docs/transport.md names it as the target of a packet-level
comparison): the mean flow throughput and the makespan within 15%; per flow, the incast's
equal shares within the same 15%.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import pytest

from engine.catalog.devices import default_catalog
from engine.flows.traffic import permutation
from engine.model.overrides import apply_override
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.topology.templates import generate
from engine.transport.defaults import transport_config
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.params import Mechanisms
from engine.transport.simulate import simulate
from engine.transport.spray import bundle_sprayed
from engine.transport.workloads import incast, switch_spec, victim_incast
from tests.engine.transport.test_spray import path_by_path
from tests.validation.packet_level import run_packets
from tests.validation.test_transport import _paper_setup

TOLERANCE = 0.15


def mechanisms(mechanism: str):
    """(config, switch) of InfiniBand credits or RoCE PFC without congestion control, or
    (``roce_dcqcn``) of RoCE with PFC, ECN and DCQCN at NVIDIA's defaults."""
    catalog = default_catalog()
    if mechanism == "roce_dcqcn":
        return transport_config(catalog, "roce", "sn5600"), switch_spec(catalog, "sn5600", 400)
    if mechanism == "ib_credits":
        config = transport_config(catalog, "infiniband", "qm9700")
        return replace(config, mechanisms=Mechanisms("credit", False, False)), switch_spec(
            catalog, "qm9700", 400
        )
    config = transport_config(catalog, "roce", "sn5600")
    return replace(config, mechanisms=Mechanisms("pfc", False, False)), switch_spec(
        catalog, "sn5600", 400
    )


def both(network, config):
    """Per flow (class order, each class's flows alike in the fluid model): bytes and
    finish time from the fluid model and from packets."""
    packets = run_packets(network, config)
    fluid = simulate(network, config)
    assert fluid.finished and np.all(np.isfinite(packets.flow_finish_s))
    fluid_finish = fluid.finish_s[packets.flow_class]
    return packets.flow_bytes, fluid_finish, packets.flow_finish_s


def assert_close_throughput(nbytes, fluid_finish, packet_finish) -> None:
    fluid_mean = float(np.mean(nbytes / fluid_finish))
    packet_mean = float(np.mean(nbytes / packet_finish))
    assert fluid_mean == pytest.approx(packet_mean, rel=TOLERANCE)
    assert float(fluid_finish.max()) == pytest.approx(float(packet_finish.max()), rel=TOLERANCE)


@pytest.mark.parametrize("mechanism", ["ib_credits", "roce_pfc"])
def test_an_incast_shares_alike_in_packets_and_in_the_fluid(mechanism: str) -> None:
    config, spec = mechanisms(mechanism)
    nbytes, fluid_finish, packet_finish = both(incast(8, spec, 4e6), config)
    assert_close_throughput(nbytes, fluid_finish, packet_finish)
    np.testing.assert_allclose(fluid_finish, packet_finish, rtol=TOLERANCE)


@pytest.mark.parametrize("mechanism", ["ib_credits", "roce_pfc"])
def test_a_victim_behind_a_paused_port_is_slowed_alike(mechanism: str) -> None:
    config, spec = mechanisms(mechanism)
    network = victim_incast(4, spec, 8e6, 8e6)
    nbytes, fluid_finish, packet_finish = both(network, config)
    assert_close_throughput(nbytes, fluid_finish, packet_finish)
    victim = 1  # class 1 (one flow per class)
    assert fluid_finish[victim] == pytest.approx(packet_finish[victim], rel=TOLERANCE)


def _permutation(mechanism: str, mode: str):
    """A permutation on a 256-GPU leaf-spine fabric, 2:1 at the leaves, routed by `mode`
    (the flows between servers, 1 MB each): fabric, routes, catalog and configuration."""
    config, _ = mechanisms(mechanism)
    catalog = default_catalog()
    technology_switch = "qm9700" if mechanism == "ib_credits" else "sn5600"
    scenario = generate(
        "leaf-spine", gpus=256, server="hgx-h100", switch=technology_switch, oversubscription=2.0
    )
    scenario = apply_override(scenario, "routing.mode", mode)
    fabric = expand(scenario, catalog)
    src, dst = permutation(fabric, 1)
    cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
    routed = Router(fabric).route(src[cross], dst[cross], scenario.routing, connection_bytes=1e6)
    config = replace(scenario_transport_config(scenario, catalog), mechanisms=config.mechanisms)
    return fabric, routed, catalog, config


def permutation_network(mechanism: str):
    """The ECMP permutation of `_permutation` as a transport network, and its configuration."""
    fabric, routed, catalog, config = _permutation(mechanism, "ecmp")
    return scenario_network(fabric, routed, catalog), config


def permutation_runs(mechanism: str, mode: str):
    """Per flow of the permutation of `_permutation`: bytes and finish time in the fluid
    model and in packets. Sprayed flows run in the fluid model over their sets of links as
    links of several ports, and in packets each packet on one of the flow's paths at
    random."""
    fabric, routed, catalog, config = _permutation(mechanism, mode)
    if mode != "spray":
        return both(scenario_network(fabric, routed, catalog), config)
    bundled = bundle_sprayed(routed, fabric, fabric.link_capacity)
    as_sets = scenario_network(fabric, bundled.routed, catalog, ports=bundled.ports)
    split, owner = path_by_path(fabric, routed)
    as_paths = scenario_network(fabric, split, catalog)
    ways: list[list[list[int]]] = [[] for _ in range(routed.n_flows)]
    for s, f in enumerate(owner.tolist()):
        ways[f].append(as_paths.classes.path(int(as_paths.flow_class[s])).tolist())
    sprayed = list(zip(routed.flow_bytes.tolist(), ways, strict=True))
    fluid = simulate(as_sets, config)
    packets = run_packets(as_paths, config, sprayed=sprayed)
    assert fluid.finished and np.all(np.isfinite(packets.flow_finish_s))
    return routed.flow_bytes, fluid.finish_s[as_sets.flow_class], packets.flow_finish_s


@pytest.mark.parametrize("mode", ["ecmp", "adaptive", "spray"])
@pytest.mark.parametrize("mechanism", ["ib_credits", "roce_pfc"])
def test_a_permutation_finishes_alike_in_packets_and_in_the_fluid(mechanism, mode) -> None:
    nbytes, fluid_finish, packet_finish = permutation_runs(mechanism, mode)
    assert_close_throughput(nbytes, fluid_finish, packet_finish)


@pytest.mark.parametrize("mechanism", ["ib_credits", "roce_pfc", "roce_dcqcn"])
def test_packets_and_the_fluid_rank_ecmp_adaptive_and_spraying_alike(mechanism) -> None:
    """Static ECMP collides flows, adaptive routing places them apart, spraying spreads
    each over every uplink: both models rank them so by mean flow throughput (with RoCE's
    DCQCN on too, as the presets run it)."""
    means = {"fluid": [], "packets": []}
    for mode in ("ecmp", "adaptive", "spray"):
        nbytes, fluid_finish, packet_finish = permutation_runs(mechanism, mode)
        means["fluid"].append(float(np.mean(nbytes / fluid_finish)))
        means["packets"].append(float(np.mean(nbytes / packet_finish)))
    for model, (ecmp, adaptive, spray) in means.items():
        assert ecmp < adaptive <= spray * (1 + 1e-9), (model, ecmp, adaptive, spray)


# --- DCQCN per packet [ECND16, BARRE] --------------------------------------------------------
#
# Per packet, DCQCN's marks are random draws (RED), and after a collapse one draw more or
# less moves a whole trajectory: the 2:1 incast below reads 10.1-14.8 GB/s mean flow
# throughput over 32 seeds of the draws. One packet run is one sample of that spread, so
# these tests hold the fluid model against the mean of `SEEDS` packet runs, with the file's
# 15% unchanged (docs/transport.md, "The packets' own spread").

SEEDS = range(8)


def ensemble(network, config, **kwargs):
    """Packet runs of `network`, one per seed of `SEEDS` (the RED draws)."""
    return [run_packets(network, config, seed=seed, **kwargs) for seed in SEEDS]


def run_means(runs) -> list[float]:
    """Each packet run's mean flow throughput."""
    return [float(np.mean(r.flow_bytes / r.flow_finish_s)) for r in runs]


def mean_throughput_and_makespan(runs) -> tuple[float, float]:
    """Over packet runs: the mean of each run's mean flow throughput, and of its makespan."""
    makespans = [float(r.flow_finish_s.max()) for r in runs]
    return float(np.mean(run_means(runs))), float(np.mean(makespans))


def fluid_throughput_and_makespan(network, config, flow_class) -> tuple[float, float]:
    """The fluid model's mean flow throughput and makespan, per flow of a packet run."""
    fluid = simulate(network, config)
    assert fluid.finished
    finish = fluid.finish_s[flow_class]
    nbytes = network.classes.bytes[flow_class] / network.classes.multiplicity[flow_class]
    return float(np.mean(nbytes / finish)), float(finish.max())


@pytest.mark.parametrize("n", [2, 10])
def test_dcqcn_at_the_papers_settings_shares_alike_per_packet(n) -> None:
    # [ECND16]'s 40G incast (its parameters, 4 us feedback): over 10-20 ms every flow's
    # mean throughput agrees with the fluid model's within the file's 15%, on average over
    # the flows, and the receiver link is as busy in both.
    catalog = default_catalog()
    config, spec, shape, _ = _paper_setup(catalog, dt_s=1e-6)
    network = incast(n, spec, 1e12, shape, feedback_delay_s=4e-6)
    fluid = simulate(network, config, horizon_s=0.02).mean_rate_Bps(0.01, 0.02)
    runs = ensemble(network, config, horizon_s=0.02, window_s=(0.01, 0.02))
    per_packet = np.mean([r.window_bytes for r in runs], axis=0) / 0.01
    assert float(per_packet.mean()) == pytest.approx(float(fluid.mean()), rel=TOLERANCE)
    assert float(per_packet.sum()) == pytest.approx(float(fluid.sum()), rel=TOLERANCE)


@pytest.mark.parametrize("window_s", [(0.0, 0.5e-3), (0.5e-3, 1e-3)])
def test_dcqcn_at_nvidia_defaults_collapses_and_recovers_alike_per_packet(window_s) -> None:
    # Per packet, NVIDIA's defaults (32 KB byte counter, a cut at most every 4 us) keep a 4:1
    # incast's senders near line rate at first: byte-counter fast recovery restores R_C
    # within about 3 us of each cut, and a cut clamps R_T to the rate's peak. The queue
    # fills to PFC's XOFF in about 40 us; draining, every packet leaves marked, the cuts go
    # on every 4 us after the senders slowed, R_C falls to its floor, and only the 300 us
    # timer lifts it again. The published mean-field model settled at once with the link
    # full; the reaction point per class (`engine.transport.reaction`) follows the packets:
    # the receiver link's throughput over each window within the file's 15%.
    catalog = default_catalog()
    config = replace(
        transport_config(catalog, "roce", "sn5600"), mechanisms=Mechanisms("pfc", True, False)
    )
    network = incast(4, switch_spec(catalog, "sn5600", 400), 1e12)
    t0, t1 = window_s
    fluid = simulate(network, config, horizon_s=t1).mean_rate_Bps(t0, t1).sum()
    runs = ensemble(network, config, horizon_s=t1, window_s=window_s)
    per_packet = float(np.mean([r.window_bytes.sum() for r in runs])) / (t1 - t0)
    assert per_packet == pytest.approx(fluid, rel=TOLERANCE)


@pytest.mark.parametrize("workload", ["victim", "permutation"])
def test_dcqcn_at_nvidia_defaults_finishes_alike_in_packets_and_in_the_fluid(workload) -> None:
    # The workloads the PFC-only tests above run, with DCQCN on at NVIDIA's defaults: the
    # 4:1 incast with its victim (8 MB each) and the 256-GPU ECMP permutation (1 MB). The
    # published mean field finished them 34% early and 7% late (mean flow finish); the
    # reaction point per class follows the packets within the file's 15%.
    config, spec = mechanisms("roce_dcqcn")
    if workload == "victim":
        network = victim_incast(4, spec, 8e6, 8e6)
    else:
        network, config = permutation_network("roce_dcqcn")
    runs = ensemble(network, config)
    packet_mean, packet_makespan = mean_throughput_and_makespan(runs)
    fluid_mean, fluid_makespan = fluid_throughput_and_makespan(network, config, runs[0].flow_class)
    assert fluid_mean == pytest.approx(packet_mean, rel=TOLERANCE)
    assert fluid_makespan == pytest.approx(packet_makespan, rel=TOLERANCE)


PER_PORT_GAP = pytest.mark.xfail(
    strict=True,
    reason="4:1 with a victim: the fluid's makespan 1.02 ms, the packets' 1.22 ms (-17%; the "
    "mean flow throughput within 15%). Per packet a port's CNPs go to whichever flow's "
    "marked packet comes first, not evenly: likely the faster flows are cut more often and "
    "the last one ends later than the fluid's even share (not traced flow by flow yet)",
)


@pytest.mark.parametrize(
    ("senders", "victim"), [pytest.param(4, True, marks=PER_PORT_GAP), (16, False)]
)
def test_cnps_paced_per_port_fare_alike_per_packet(senders, victim) -> None:
    # NVIDIA's text paces CNPs "from the port": per packet a receiving port answers the
    # first marked packet of any flow once per CNP interval; the fluid reads that as a
    # share, each of the port's n flows one CNP per n intervals (tables.cnp_dead_time).
    # The 4:1 incast with its victim (8 MB each) and a 16:1 incast of 4 MB, at NVIDIA's
    # defaults otherwise, within the file's 15%.
    config, spec = mechanisms("roce_dcqcn")
    config = replace(config, dcqcn=replace(config.dcqcn, cnp_pacing="port"))
    if victim:
        network = victim_incast(senders, spec, 8e6, 8e6)
    else:
        network = incast(senders, spec, 4e6)
    runs = ensemble(network, config)
    packet_mean, packet_makespan = mean_throughput_and_makespan(runs)
    fluid_mean, fluid_makespan = fluid_throughput_and_makespan(network, config, runs[0].flow_class)
    assert fluid_mean == pytest.approx(packet_mean, rel=TOLERANCE)
    assert fluid_makespan == pytest.approx(packet_makespan, rel=TOLERANCE)


@functools.cache
def _dcqcn_alone(n: int):
    """An n:1 incast of 4 MB under ECN and DCQCN at NVIDIA's defaults without PFC, on a
    port buffer deep enough that nothing drops (1 GB): packet runs and the fluid's mean flow
    throughput and makespan (once per n for the two tests that read them)."""
    network, config = _dcqcn_alone_network(n)
    runs = ensemble(network, config)
    return runs, fluid_throughput_and_makespan(network, config, runs[0].flow_class)


def _dcqcn_alone_network(n: int):
    """The network and configuration of `_dcqcn_alone`: no PFC, a 1 GB port buffer."""
    config, spec = mechanisms("roce_dcqcn")
    config = replace(config, mechanisms=Mechanisms("none", True, False))
    return incast(n, replace(spec, port_buffer_bytes=1e9), 4e6), config


@pytest.mark.parametrize("n", [4, 8, 16])
def test_dcqcn_alone_at_high_fan_in_shares_alike_in_packets_and_in_the_fluid(n) -> None:
    # DCQCN without PFC (as on a deep-buffer fabric). At 16:1 a flow's packets reach the
    # receiver 1.3 us apart, a third of the 4 us between cuts, and the receiver's CNP
    # interval starts at a packet of the flow: a cut waits for a marked packet of that
    # train (`engine.transport.reaction`). Counted as a continuous stream of marks
    # instead, the fluid cut every flow every 4.0 us against 4.85 per packet, its start
    # overshoot was half the packets' (26 against 57 MB) and its mean flow throughput 33%
    # lower. Mean flow throughput within the file's 15%.
    runs, (fluid_mean, _) = _dcqcn_alone(n)
    packet_mean, _ = mean_throughput_and_makespan(runs)
    assert fluid_mean == pytest.approx(packet_mean, rel=TOLERANCE)


@pytest.mark.parametrize("n", [4, 8, 16])
def test_dcqcn_alone_at_high_fan_in_finishes_alike_in_packets_and_in_the_fluid(n) -> None:
    # The same runs' makespans within the file's 15%. At 16:1 per packet every flow has sent
    # its last byte while the 57 MB queue still drains, and all finish with it (1,280 us).
    # With the even service of its egress queues the fluid's twelve classes ran in step and
    # four fell behind at the start, were cut to DCQCN's floor by the marks of the drain and
    # waited out the 300 us timer (the last at 1,634 us, +28%); FIFO queues keep the
    # senders' spacings apart as the packets do (2026-12-06: -0.0%).
    runs, (_, fluid_makespan) = _dcqcn_alone(n)
    _, packet_makespan = mean_throughput_and_makespan(runs)
    assert fluid_makespan == pytest.approx(packet_makespan, rel=TOLERANCE)


@pytest.mark.parametrize("n", [4, 8, 16])
def test_with_round_robin_egress_the_packets_read_the_fluids_even_service(n) -> None:
    # Where the high fan-in gap of the even service came from. The same incasts (PFC, ECN
    # and DCQCN at NVIDIA's defaults) with the packets' switch egress queues serving their
    # flows in turn, a packet each, instead of in arrival order: the fluid's even service,
    # every class's queued bytes in proportion, is closer to that than to a FIFO, and the
    # two agree within the file's 15% (2026-12-06: +0.4%, -5.3%, -0.1%; against FIFO
    # packets it read -0.2%, -7.7%, -15.1%). At 16:1 the gap was the FIFO's order, which
    # replays each sender's PFC pauses into the marks it hears (docs/transport.md): the
    # model's default service is FIFO since (below).
    config, spec = mechanisms("roce_dcqcn")
    network = incast(n, spec, 4e6)
    runs = ensemble(network, config, round_robin=True)
    packet_mean, _ = mean_throughput_and_makespan(runs)
    even = replace(config, egress_service="even")
    fluid_mean, _ = fluid_throughput_and_makespan(network, even, runs[0].flow_class)
    assert fluid_mean == pytest.approx(packet_mean, rel=TOLERANCE)


@functools.cache
def _dcqcn_incast(n: int, flow_bytes: float, victim: bool = False):
    """An n:1 incast (with a victim flow when asked) under PFC, ECN and DCQCN at NVIDIA's
    defaults, and its packet runs (once for the tests that read them)."""
    config, spec = mechanisms("roce_dcqcn")
    if victim:
        network = victim_incast(n, spec, flow_bytes, flow_bytes)
    else:
        network = incast(n, spec, flow_bytes)
    return network, config, ensemble(network, config)


@pytest.mark.parametrize(
    ("n", "flow_bytes", "victim"),
    [(8, 4e6, False), (16, 4e6, False), (16, 4e6, True), (16, 16e6, False)],
)
def test_dcqcn_at_nvidia_defaults_with_many_senders_fares_alike_per_packet(
    n, flow_bytes, victim
) -> None:
    # High fan-in under PFC and DCQCN at NVIDIA's defaults, against the packets. Per packet
    # the second round leaves the senders apart: a sender PFC paused for a while leaves a
    # gap among its bytes in the FIFO egress queue, the gap reaches the receiver a queueing
    # delay later as a stretch without marked packets, so without CNPs, its byte counter
    # completes and fast recovery lifts it (docs/transport.md, "High fan-in under PFC and
    # DCQCN"). With the even service of its egress queues the fluid's classes stayed
    # together and collapsed together: 7% (8:1), 15% (16:1), 19% (16:1 with a victim) and
    # 18% (16:1 of 16 MB, makespan +44%) under the packets' mean flow throughput. Its FIFO
    # queues (`engine.transport.fifo`) replay the gaps. Mean flow throughput and makespan
    # within the file's 15%.
    network, config, runs = _dcqcn_incast(n, flow_bytes, victim)
    packet_mean, packet_makespan = mean_throughput_and_makespan(runs)
    fluid_mean, fluid_makespan = fluid_throughput_and_makespan(network, config, runs[0].flow_class)
    assert fluid_mean == pytest.approx(packet_mean, rel=TOLERANCE)
    assert fluid_makespan == pytest.approx(packet_makespan, rel=TOLERANCE)


# --- InfiniBand CC per packet [GRAN10] -------------------------------------------------------


@pytest.mark.parametrize("n", [4, 16])
@pytest.mark.parametrize("ib_cc", [False, True])
def test_a_victim_of_a_congestion_tree_fares_alike_per_packet(n, ib_cc) -> None:
    # The victim's throughput (0.5-2 ms) in both models within the file's 15%, with IB CC
    # off and on: at 4:1 CC frees the victim in both; at 16:1, with the catalog's assumed
    # 10 us timer, the index never climbs in either (docs/transport.md, "IB CC at high
    # fan-in").
    catalog = default_catalog()
    config = replace(
        transport_config(catalog, "infiniband", "qm9700"),
        mechanisms=Mechanisms("credit", False, ib_cc),
    )
    network = victim_incast(n, switch_spec(catalog, "qm9700", 400), 50e6, 50e6)
    victim = 1
    fluid = simulate(network, config, horizon_s=2e-3).mean_rate_Bps(0.5e-3, 2e-3)[victim]
    packets = run_packets(network, config, horizon_s=2e-3, window_s=(0.5e-3, 2e-3))
    assert packets.window_bytes[victim] / 1.5e-3 == pytest.approx(fluid, rel=TOLERANCE)
