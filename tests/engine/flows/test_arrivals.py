"""Flows that start at different times: the fluid run with arrivals, the phases, and the
traffic workload honouring its start times (closed forms on one link)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from engine.analysis import TransportWorkload, evaluate, generate, transport_study
from engine.flows.arrivals import finish_with_starts, phase_rates
from engine.flows.reference import fluid_reference
from engine.model.traffic import TrafficFlow

CAP = 50e9  # bytes/s of the one link
SIZE = 1e9  # bytes


def _one_link(n: int):
    """`n` flows over link 0 only."""
    ptr = np.arange(n + 1, dtype=np.int64)
    return ptr, np.zeros(n, dtype=np.int64), np.ones(n), np.array([CAP])


def test_two_flows_that_do_not_overlap_each_get_the_whole_link():
    ptr, links, w, cap = _one_link(2)
    later = 3 * SIZE / CAP  # the second starts after the first has ended (SIZE/CAP)
    finish = finish_with_starts(ptr, links, w, cap, np.array([SIZE, SIZE]), np.array([0, later]))
    np.testing.assert_allclose(finish, [SIZE / CAP, later + SIZE / CAP], rtol=1e-12)
    rates, peak = phase_rates(ptr, links, w, cap, np.array([0.0, later]))
    np.testing.assert_allclose(rates, [CAP, CAP])
    assert peak[0] == pytest.approx(CAP)


def test_a_flow_arriving_midway_shares_the_link_from_then_on():
    # flow 0 alone for half its bytes, then both at CAP/2: flow 0 ends after another
    # SIZE/2 at CAP/2, at 1.5 SIZE/CAP; flow 1 sent SIZE/2 meanwhile, the rest alone at CAP
    ptr, links, w, cap = _one_link(2)
    half = SIZE / (2 * CAP)
    finish = finish_with_starts(ptr, links, w, cap, np.array([SIZE, SIZE]), np.array([0, half]))
    np.testing.assert_allclose(finish, [1.5 * SIZE / CAP, 2.0 * SIZE / CAP], rtol=1e-12)


def test_one_start_for_all_is_the_plain_fluid_run():
    ptr, links, w, cap = _one_link(3)
    sizes = np.array([1e8, 2e8, 3e8])
    expected = np.array(fluid_reference([[(0, 1.0)]] * 3, [CAP], sizes.tolist())) + 0.25
    finish = finish_with_starts(ptr, links, w, cap, sizes, np.full(3, 0.25))
    np.testing.assert_allclose(finish, expected, rtol=1e-12)


@pytest.fixture(scope="module")
def small():
    return generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700")


def _traffic(scenario, starts):
    s = copy.deepcopy(scenario)
    s.workload.kind = "traffic"
    # two GPUs of two servers send into GPU 64: both cross its NIC's one cable
    s.workload.matrix = [TrafficFlow(0, 64, SIZE, starts[0]), TrafficFlow(8, 64, SIZE, starts[1])]
    return s


def test_the_flow_test_takes_flows_of_other_start_times_as_later_phases(small, catalog):
    together = evaluate(_traffic(small, (0.0, 0.0)), catalog, ("permutation",)).permutation
    apart = evaluate(_traffic(small, (0.0, 1.0)), catalog, ("permutation",)).permutation
    assert together.throughput_fraction.max == pytest.approx(0.5)
    assert apart.throughput_fraction.min == pytest.approx(1.0)


def test_the_transport_study_runs_the_arrivals_in_time(small, catalog):
    workload = TransportWorkload(kind="traffic")
    together = transport_study(_traffic(small, (0.0, 0.0)), workload, catalog)
    line = together.ideal_throughput_Bps.max * 2  # two at once share the NIC's cable
    later = 4 * SIZE / line
    apart = transport_study(_traffic(small, (0.0, later)), workload, catalog)
    # ideal: each alone on the cable, at its full rate; the second ends SIZE/line after it starts
    assert apart.ideal_throughput_Bps.min == pytest.approx(line, rel=1e-9)
    assert apart.ideal_makespan_s == pytest.approx(later + SIZE / line, rel=1e-9)
    # the transport: each flow near the line rate too, far above the shared half
    assert apart.throughput_Bps.min > 0.9 * line
    assert together.throughput_Bps.max < 0.6 * line
