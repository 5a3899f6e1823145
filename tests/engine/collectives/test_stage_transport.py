"""The transport mechanisms inside collective timing: the stage verdict, its cache, its step,
and the knobs moving busbw the way their mechanisms say."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import engine.collectives.stage_transport as st
from engine.collectives.timing import CollectiveEngine
from engine.model.overrides import apply_override
from engine.topology import generators as gen
from engine.topology.expand import expand
from engine.transport.defaults import transport_config
from engine.transport.simulate import simulate
from engine.transport.workloads import incast, switch_spec

GIB = np.array([2.0**30])


def ring_busbw(catalog, switch: str, **overrides: str) -> tuple[float, dict]:
    """busbw of a 1 GiB ring all-reduce over all 256 GPUs of a two-tier ECMP leaf-spine
    (servers under ToR leaves: the ring's server-to-server hops collide on spine links)."""
    scenario = gen.leaf_spine(256, "dgx-h100", switch, catalog=catalog)
    scenario.routing.mode = "ecmp"
    for path, value in overrides.items():
        scenario = apply_override(scenario, path, value)
    fabric = expand(scenario, catalog)
    result = CollectiveEngine(fabric, catalog).run(
        "all-reduce", np.arange(fabric.n_gpus), GIB, "ring", "simple"
    )
    return result.rows[0]["busbw_GBps"], result.breakdown[0]


@pytest.mark.parametrize("n", [2, 16])
@pytest.mark.parametrize(
    "technology,switch,dcqcn", [("roce", "sn5600", False), ("infiniband", "qm9700", False)]
)
def test_the_estimate_step_moves_rates_as_the_default_step(catalog, n, technology, switch, dcqcn):
    # STEP_S (200 ns) against the transport's default step (100 ns): the receiver's mean
    # rate in every quarter millisecond of 5 ms within 0.5%.
    config = transport_config(catalog, technology, switch)
    config = replace(config, mechanisms=replace(config.mechanisms, dcqcn=dcqcn))
    assert st.estimate_step_s(config) == st.STEP_S
    network = incast(n, switch_spec(catalog, switch, 400), 1e12)
    fine = simulate(network, config, horizon_s=5e-3)
    coarse = simulate(network, replace(config, dt_s=st.STEP_S), horizon_s=5e-3)
    for t0 in np.arange(0.0, 5e-3, 0.25e-3):
        a = fine.mean_rate_Bps(t0, t0 + 0.25e-3).sum()
        b = coarse.mean_rate_Bps(t0, t0 + 0.25e-3).sum()
        assert b == pytest.approx(a, rel=0.005)


def test_dcqcns_reaction_point_keeps_the_default_step(catalog):
    # Its cuts and counters move the flows in steps of their own; at 200 ns a 2:1 incast
    # reads 3% lower over 5 ms than at 100 or 50 ns (which agree), so with DCQCN on the
    # estimate keeps the configuration's step.
    config = transport_config(catalog, "roce", "sn5600")
    assert config.mechanisms.dcqcn
    assert st.estimate_step_s(config) == config.dt_s


def test_a_verdict_is_reused_and_never_recomputed(catalog, monkeypatch):
    scenario = gen.leaf_spine(64, "dgx-h100", "sn5600", catalog=catalog)
    scenario.routing.mode = "ecmp"
    fabric = expand(scenario, catalog)
    engine = CollectiveEngine(fabric, catalog)
    src = np.arange(0, 64, 8)
    dst = np.roll(src, 1)
    routed = engine.router.route(src, dst, scenario.routing, connection_bytes=np.ones(src.size))
    first = st.stage_transport(fabric, catalog, routed, routed.flow_bytes, engine.capacity)
    calls = []
    monkeypatch.setattr(st, "simulate", lambda *a, **k: calls.append(1))
    again = st.stage_transport(fabric, catalog, routed, routed.flow_bytes, engine.capacity)
    assert again is first and not calls
    assert first.ran and np.all(np.diff(first.curve_s) >= 0.0)
    assert first.time_s(np.array([0.0]))[0] == 0.0


def test_mechanisms_not_assumed_factors_separate_roce_and_infiniband(catalog):
    # The same collided ring: RoCE's congestion shows as ECN marks (DCQCN on) or pauses
    # (PFC alone), InfiniBand's as credit back-pressure with neither; the ideal transport
    # is never slower than any of them.
    ideal_roce, _ = ring_busbw(catalog, "sn5600", **{"transport.model": "ideal"})
    roce, roce_stage = ring_busbw(catalog, "sn5600")
    pfc_only, pfc_stage = ring_busbw(catalog, "sn5600", **{"transport.dcqcn": "false"})
    ideal_ib, _ = ring_busbw(catalog, "qm9700", **{"transport.model": "ideal"})
    ib, ib_stage = ring_busbw(catalog, "qm9700")
    assert roce_stage["max_ecn_mark_fraction"] > 0.0 and roce_stage["max_pause_fraction"] == 0.0
    assert pfc_stage["max_pause_fraction"] > 0.0 and pfc_stage["max_ecn_mark_fraction"] == 0.0
    assert ib_stage["max_pause_fraction"] == 0.0 and ib_stage["max_ecn_mark_fraction"] == 0.0
    for mechanistic, ideal in ((roce, ideal_roce), (pfc_only, ideal_roce), (ib, ideal_ib)):
        assert mechanistic <= ideal * (1 + 1e-9)


def test_infiniband_knobs_move_busbw_the_way_their_mechanisms_say(catalog):
    base, _ = ring_busbw(catalog, "qm9700")
    # IB CC throttles the flows that feed a congestion tree, freeing their victims.
    with_cc, _ = ring_busbw(catalog, "qm9700", **{"transport.ib_cc": "true"})
    # A 500 m spine cable's credit loop is longer than its buffer covers at 400G.
    long_cable, _ = ring_busbw(catalog, "qm9700", **{"bundles.1.length_m": "500"})
    assert with_cc > base
    assert long_cable < base


def test_a_latency_of_seconds_runs_at_the_ideal_with_a_note_not_out_of_memory():
    """A switch latency of a second would need hundreds of GiB of pause and feedback
    history; the stage and the permutation say so and run at the ideal instead."""
    from engine.analysis import evaluate
    from engine.presets.scenarios import load_preset

    scenario = apply_override(
        load_preset("hgx-h100-roce-ecmp-1k"), "fabric.switch_latency_ns", "1e9"
    )
    result = evaluate(scenario, parts=("permutation", "collective"))
    assert "GiB of pause and feedback history" in result.permutation.transport.note
    notes = [row.transport_note for row in result.collective.breakdown]
    assert any("timed at the ideal" in note for note in notes)
