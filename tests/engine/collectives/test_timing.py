"""Collective timing: closed forms on a non-blocking fabric, algorithm choice, technology knobs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.collectives.placement import placement
from engine.collectives.schedules import build_schedule, bus_factor, layout
from engine.collectives.timing import CollectiveEngine
from engine.model.errors import ScenarioError
from engine.model.overrides import apply_override
from engine.topology import generators as gen
from engine.topology.expand import expand

REL = 1e-9
SIZES = np.array([1024.0, 2.0**20, 2.0**30, 2.0**34])


def one_rank_per_server(servers: int, catalog, **overrides):
    """A non-blocking single switch; rank k is GPU 0 of server k, so every step crosses it."""
    scenario = gen.single_switch(64, "dgx-h100", "qm9700", catalog=catalog)
    scenario.routing.mode = "ecmp"
    for path, value in overrides.items():
        scenario = apply_override(scenario, path, value)
    fabric = expand(scenario, catalog)
    ranks = fabric.server_first_gpu[:servers].astype(np.int64)
    return fabric, ranks


def alpha_and_bandwidth(engine, fabric, ranks, algo_class="ring"):
    """NCCL's Simple network step latency plus the path's, and one NIC's rate under NCCL."""
    m = engine.tech.nccl
    path = engine.router.route(ranks[:1], ranks[1:2], fabric.scenario.routing).latency[0]
    return m.step_net_s[algo_class]["simple"] + path, float(engine.gpu_net_rate[ranks[0]])


def path_latency(engine, fabric, ranks):
    return engine.router.route(ranks[:1], ranks[1:2], fabric.scenario.routing).latency[0]


def bandwidth_part(engine, op, algo, ranks, sizes=SIZES):
    """Time minus the size-independent part (latency), Simple protocol."""
    times = np.array([r["time_s"] for r in engine.run(op, ranks, sizes, algo, "simple").rows])
    zero = engine.run(op, ranks, np.array([0.0]), algo, "simple").rows[0]["time_s"]
    return times - zero, zero


def test_ring_all_reduce_matches_the_alpha_beta_closed_form(catalog):
    fabric, ranks = one_rank_per_server(8, catalog)
    engine = CollectiveEngine(fabric, catalog)
    n = ranks.size
    m = engine.tech.nccl
    _, bw = alpha_and_bandwidth(engine, fabric, ranks)
    path = path_latency(engine, fabric, ranks)
    bw_part, latency = bandwidth_part(engine, "all-reduce", "ring", ranks)
    # t = 2(n-1) alpha + 2(n-1)/n S/B (collectives.md 6.3; Patarasuk & Yuan 2009), where
    # alpha is NCCL's: with one GPU per server every step crosses the network at the tree's
    # network latency, and once the chunks are 64 B or more NCCL's ring plateau (x1.4)
    # applies to its part (every size here); the path's own latency rides on each step.
    nccl = m.base_s["ring"]["simple"] + 2 * (n - 1) * m.step_net_s["tree"]["simple"]
    assert latency == pytest.approx(nccl + 2 * (n - 1) * path, rel=REL)
    plateau = (m.ring_plateau - 1) * nccl
    np.testing.assert_allclose(bw_part, 2 * (n - 1) / n * SIZES / bw + plateau, rtol=REL)


def test_halving_doubling_matches_its_closed_form(catalog):
    fabric, ranks = one_rank_per_server(8, catalog)
    engine = CollectiveEngine(fabric, catalog)
    n = ranks.size
    alpha, bw = alpha_and_bandwidth(engine, fabric, ranks)
    bw_part, latency = bandwidth_part(engine, "all-reduce", "halving-doubling", ranks)
    base = engine.tech.nccl.base_s["ring"]["simple"]
    # Rabenseifner: 2 log2(n) alpha + 2(n-1)/n S/B.
    np.testing.assert_allclose(bw_part, 2 * (n - 1) / n * SIZES / bw, rtol=REL)
    assert latency - base == pytest.approx(2 * np.log2(n) * alpha, rel=REL)


def test_double_binary_tree_moves_two_s_per_rank(catalog):
    # The closed form is the ideal transport's: through credits without IB CC, a rank's
    # flows to a busy and an idle neighbour share its ingress buffer at the switch, and
    # the busy one's back-pressure holds the other back (the model: 1.5x the closed form).
    fabric, ranks = one_rank_per_server(7, catalog, **{"transport.model": "ideal"})
    engine = CollectiveEngine(fabric, catalog)
    m = engine.tech.nccl
    alpha, bw = alpha_and_bandwidth(engine, fabric, ranks, "tree")
    bw_part, latency = bandwidth_part(engine, "all-reduce", "tree", ranks)
    base = m.base_s["tree"]["simple"]
    # Pipelined double binary tree: every rank sends and receives 2S in all (NCCL: algbw is
    # half the bus bandwidth), after 2 floor(log2 n) latency steps up and down (2 for 7),
    # and NCCL's tree keeps 0.92 of the bandwidth times its size correction (0.9 at 1 KiB,
    # 0.5 at 1 MiB, none from 512 MiB). The fluid model lets the flows of one link drift
    # apart by their other bottlenecks, so the busiest link is not busy every instant:
    # within 3% of the closed form, never under.
    keep = 0.92 * np.array([0.9, 0.5, 1.0, 1.0])
    closed = 2 * SIZES / bw / keep
    np.testing.assert_allclose(bw_part, closed, rtol=0.03)
    assert np.all(bw_part >= closed * (1 - REL))
    assert latency - base == pytest.approx(2 * 2 * alpha, rel=REL)


def test_all_to_all_on_a_non_blocking_fabric(catalog):
    fabric, ranks = one_rank_per_server(8, catalog, **{"transport.model": "ideal"})
    engine = CollectiveEngine(fabric, catalog)
    n = ranks.size
    _, bw = alpha_and_bandwidth(engine, fabric, ranks)
    bw_part, _ = bandwidth_part(engine, "all-to-all", "all-at-once", ranks)
    # Each rank sends (n-1)/n of its buffer through its NIC.
    np.testing.assert_allclose(bw_part, (n - 1) / n * SIZES / bw, rtol=REL)


def test_credits_keep_a_non_blocking_all_to_all_near_its_closed_form(catalog):
    # The same all-to-all through the InfiniBand transport (credits, every receiver an
    # incast of n-1 senders): never faster than the closed form, and (written before the
    # first run) within 5% of it: credits share a receiver link fairly and keep it full.
    fabric, ranks = one_rank_per_server(8, catalog)
    engine = CollectiveEngine(fabric, catalog)
    n = ranks.size
    _, bw = alpha_and_bandwidth(engine, fabric, ranks)
    bw_part, _ = bandwidth_part(engine, "all-to-all", "all-at-once", ranks)
    closed = (n - 1) / n * SIZES / bw
    assert np.all(bw_part >= closed * (1 - 1e-9))
    assert np.all(bw_part <= 1.05 * closed)


def test_more_queue_pairs_never_slow_a_roce_ring(catalog):
    # The assumed incast factor charged every extra sub-flow (4 QPs lowered RoCE busbw by
    # 5-10%); with the transport as mechanisms, more QPs spread a connection over more ECMP
    # paths and pay nothing for it: busbw with 4 QPs at least that with 1 (measured when
    # written: 149.7 GB/s with 1 QP, its ECMP collisions marked by ECN and cut by DCQCN;
    # 265.2 with 4).
    base = gen.leaf_spine(256, "dgx-h100", "sn5600", catalog=catalog)
    base.routing.mode = "ecmp"
    busbw = {}
    for qps in (1, 4):
        fabric = expand(apply_override(base, "routing.flows_per_connection", str(qps)), catalog)
        ranks = np.arange(fabric.n_gpus)
        row = (
            CollectiveEngine(fabric, catalog)
            .run("all-reduce", ranks, np.array([2.0**30]), "ring", "simple")
            .rows[0]
        )
        busbw[qps] = row["busbw_GBps"]
    assert busbw[4] >= busbw[1] * (1 - 1e-6)


def test_busbw_follows_nccl_tests_definitions():
    assert bus_factor("all-reduce", 8) == pytest.approx(2 * 7 / 8)
    assert bus_factor("all-gather", 8) == pytest.approx(7 / 8)
    assert bus_factor("reduce-scatter", 4) == pytest.approx(3 / 4)
    assert bus_factor("all-to-all", 16) == pytest.approx(15 / 16)
    assert bus_factor("broadcast", 8) == 1.0


@pytest.fixture(scope="module")
def ib_1k(catalog):
    fabric = expand(gen.rail_optimized(1024, "dgx-h100", "qm9700", catalog=catalog), catalog)
    return fabric, CollectiveEngine(fabric, catalog)


def test_ring_rails_hand_over_on_the_same_nic(ib_1k):
    fabric, _ = ib_1k
    lay = layout(placement(fabric, 32), fabric.gpu_server)
    stage = build_schedule("all-reduce", "ring", lay)[0]
    crossing = fabric.gpu_server[stage.src] != fabric.gpu_server[stage.dst]
    same_rail = fabric.gpu_local[stage.src[crossing]] == fabric.gpu_local[stage.dst[crossing]]
    # 8 rings over 4 servers: every hand-over but the wrap-around stays on its rail.
    assert same_rail.mean() >= 0.75


def test_intra_server_traffic_never_touches_the_network(ib_1k):
    fabric, engine = ib_1k
    result = engine.run("all-reduce", placement(fabric, 8), np.array([2.0**30]), "ring", "simple")
    assert result.link_utilization["server->leaf"]["max"] == 0.0
    assert result.link_utilization["nvlink"]["max"] > 0.5


def test_sharp_needs_in_network_reduction_switches(catalog):
    fabric = expand(
        gen.rail_optimized(1024, "hgx-h100", "th5-51t", speed_gbps=400, catalog=catalog), catalog
    )
    engine = CollectiveEngine(fabric, catalog)
    assert "sharp" not in engine.algorithms("all-reduce", placement(fabric, 64))
    with pytest.raises(ScenarioError, match="SHARP"):
        engine.run("all-reduce", placement(fabric, 64), np.array([1e6]), "sharp")


def test_halving_doubling_refuses_a_non_power_of_two(ib_1k):
    fabric, engine = ib_1k
    with pytest.raises(ScenarioError, match="power-of-two"):
        engine.run("all-reduce", placement(fabric, 24), np.array([1e6]), "halving-doubling")


def test_packet_loss_with_go_back_n_costs_more_than_selective_repeat(catalog):
    results = {}
    for recovery in ("selective-repeat", "go-back-n"):
        fabric, ranks = one_rank_per_server(
            8, catalog, **{"fabric.packet_loss_rate": "1e-4", "fabric.loss_recovery": recovery}
        )
        results[recovery] = (
            CollectiveEngine(fabric, catalog)
            .run("all-reduce", ranks, np.array([2.0**30]), "ring", "simple")
            .rows[0]["time_s"]
        )
    lossless, ranks = one_rank_per_server(8, catalog)
    clean = (
        CollectiveEngine(lossless, catalog)
        .run("all-reduce", ranks, np.array([2.0**30]), "ring", "simple")
        .rows[0]["time_s"]
    )
    assert clean < results["selective-repeat"] < results["go-back-n"]


def test_more_switch_latency_never_speeds_a_collective_up(catalog):
    times = []
    for ns in ("100", "1000", "10000"):
        fabric, ranks = one_rank_per_server(8, catalog, **{"fabric.switch_latency_ns": ns})
        times.append(
            CollectiveEngine(fabric, catalog)
            .run("all-reduce", ranks, np.array([1e6]))
            .rows[0]["time_s"]
        )
    assert times[0] < times[1] < times[2]


def test_concurrent_groups_share_the_fabric(catalog):
    # Two rank groups whose rings both cross the same 2:1 oversubscribed spine layer run
    # slower together than alone.
    fabric = expand(
        gen.leaf_spine(320, "dgx-h100", "qm9700", oversubscription=2.0, catalog=catalog), catalog
    )
    engine = CollectiveEngine(fabric, catalog)
    leaf_ranks = np.arange(0, 320, 40)  # one GPU per leaf
    alone = engine.run("all-reduce", leaf_ranks, np.array([2.0**30]), "ring", "simple").rows[0][
        "time_s"
    ]
    others = [leaf_ranks + k for k in range(1, 40)]
    together = engine.run(
        "all-reduce", leaf_ranks, np.array([2.0**30]), "ring", "simple", concurrent=others
    ).rows[0]["time_s"]
    assert together > 1.5 * alone


def test_a_given_placement_puts_ranks_where_it_says(ib_1k):
    fabric, engine = ib_1k
    scenario = fabric.scenario
    try:
        # Rank k on GPU 0 of server k: every ring step crosses the network.
        scenario.workload.placement = [8 * k for k in range(8)]
        spread = engine.run(
            "all-reduce", placement(fabric), np.array([2.0**30]), "ring", "simple"
        ).rows[0]
        scenario.workload.placement = []
        packed = engine.run(
            "all-reduce", placement(fabric, 8), np.array([2.0**30]), "ring", "simple"
        ).rows[0]
    finally:
        scenario.workload.placement = []
    assert spread["busbw_GBps"] < 60 < packed["busbw_GBps"]


def test_a_placement_with_repeated_gpus_is_refused(ib_1k):
    fabric, _ = ib_1k
    fabric.scenario.workload.placement = [0, 0, 1]
    try:
        with pytest.raises(ScenarioError, match="distinct"):
            placement(fabric)
    finally:
        fabric.scenario.workload.placement = []


@pytest.mark.parametrize(("n_servers", "per_server"), [(2, 8), (5, 4), (16, 8), (3, 2)])
def test_ring_orders_roll_each_server_by_channel_minus_server(n_servers, per_server):
    from engine.collectives.schedules import layout, ring_orders

    gpu_server = np.repeat(np.arange(n_servers), per_server)
    lay = layout(np.arange(n_servers * per_server), gpu_server)
    grid = lay.by_server()
    for c, order in enumerate(ring_orders(lay)):
        expected = [
            int(grid[s][(j + c - s) % per_server])
            for s in range(n_servers)
            for j in range(per_server)
        ]
        assert order.tolist() == expected


def test_an_all_to_all_too_large_to_list_runs_by_kinds(catalog):
    # 16,384 ranks all at once are 268 M connections: until 2026-12-06 the engine built and
    # routed them for 103 s and 22 GB before the router refused, then refused at once. On a
    # regular fabric with adaptive routing they now run by kinds of flows
    # (engine.collectives.lumped_stage): at 1 GiB every NIC at NCCL's channel rate.
    from engine.presets.scenarios import load_preset

    fabric = expand(load_preset("h100-ib-ndr-16k"), catalog)
    result = CollectiveEngine(fabric, catalog).run(
        "all-to-all", np.arange(fabric.n_gpus), np.array([2.0**30])
    )
    assert result.rows[-1]["algorithm"] == "all-at-once"
    assert "by kinds of flows" in result.breakdown[0]["stage"]
    assert 45 < result.rows[-1]["busbw_GBps"] <= 48.01


def test_an_all_to_all_too_large_to_list_is_refused_before_any_work_where_kinds_fail(
    catalog, monkeypatch
):
    # Switches hashing alike polarize ECMP: refused, naming the ranks, before anything is
    # routed (a part of the fabric runs by its own kinds, tests/engine/analysis/
    # test_lumped_all_to_all.py).
    from engine.presets.scenarios import load_preset

    scenario = load_preset("h100-ib-ndr-16k")
    scenario.routing = replace(scenario.routing, mode="ecmp", hash_scope="tier")
    fabric = expand(scenario, catalog)
    engine = CollectiveEngine(fabric, catalog)

    def no_routing(*args, **kwargs):
        raise AssertionError("routed before refusing")

    monkeypatch.setattr(engine.router, "route", no_routing)
    with pytest.raises(ScenarioError, match="connections, too many to route") as refused:
        engine.run("all-to-all", np.arange(fabric.n_gpus), np.array([2.0**30]))
    assert refused.value.problems[0].field == "ranks"
    assert "polarization" in str(refused.value)
