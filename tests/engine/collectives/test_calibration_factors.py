"""A scenario's calibration scales exactly the parts of the collective time it names."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.collectives.placement import placement
from engine.collectives.timing import CollectiveEngine
from engine.model.scenario import Calibration
from engine.topology import generators as gen
from engine.topology.expand import expand

SIZES = np.array([8.0, 2.0**34])


@pytest.fixture(scope="module")
def engine(catalog):
    fabric = expand(gen.single_switch(32, "dgx-h100", "qm9700", catalog=catalog), catalog)
    return CollectiveEngine(fabric, catalog), placement(fabric, 32)


def _times(engine, ranks, calibration, algo="ring", protocol="simple"):
    engine.calibration = calibration
    rows = engine.run("all-reduce", ranks, SIZES, algo, protocol).rows
    return np.array([r["time_s"] for r in rows])


def test_without_a_calibration_every_factor_is_one(engine):
    eng, _ = engine
    assert eng.calibration == Calibration()


def test_latency_scale_multiplies_nccls_latency_only(engine):
    eng, ranks = engine
    base = _times(eng, ranks, Calibration())
    slow = _times(eng, ranks, Calibration(latency_scale=3.0))
    # At 8 B the time is latency: NCCL's part triples, the path's own latency does not.
    assert 2.0 * base[0] < slow[0] < 3.0 * base[0]
    # Past the ring's plateau the added latency is the same at 1 MiB and at 16 GiB: the
    # factor changes no bandwidth.
    eng.calibration = Calibration()
    sizes = np.array([2.0**20, 2.0**34])
    plain = [r["time_s"] for r in eng.run("all-reduce", ranks, sizes, "ring", "simple").rows]
    eng.calibration = Calibration(latency_scale=3.0)
    scaled = [r["time_s"] for r in eng.run("all-reduce", ranks, sizes, "ring", "simple").rows]
    added = np.subtract(scaled, plain)
    assert added[0] > 0
    assert added[1] == pytest.approx(added[0], rel=1e-6)


def test_nic_efficiency_stretches_the_network_transfer(engine):
    eng, ranks = engine
    base = _times(eng, ranks, Calibration())
    half = _times(eng, ranks, Calibration(nic_efficiency=0.5))
    latency = base[0]
    # A ring across servers is NIC-bound: half the NIC rate doubles the transfer time.
    assert (half[1] - latency) == pytest.approx(2 * (base[1] - latency), rel=1e-3)
    assert half[0] == pytest.approx(base[0], rel=1e-3)


def test_simple_efficiency_leaves_other_protocols_alone(engine):
    eng, ranks = engine
    ll128 = _times(eng, ranks, Calibration(), protocol="ll128")
    assert _times(eng, ranks, Calibration(simple_efficiency=0.5), protocol="ll128") == (
        pytest.approx(ll128)
    )
    simple = _times(eng, ranks, Calibration())
    slowed = _times(eng, ranks, Calibration(simple_efficiency=0.5))
    assert slowed[1] > 1.9 * (simple[1] - simple[0])


def test_the_calibration_is_read_from_the_scenario(catalog):
    scenario = gen.single_switch(16, "dgx-h100", "qm9700", catalog=catalog)
    scenario = replace(scenario, calibration=Calibration(name="lab", nic_efficiency=0.8))
    eng = CollectiveEngine(expand(scenario, catalog), catalog)
    assert eng.calibration.nic_efficiency == 0.8
