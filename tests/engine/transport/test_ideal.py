"""A perfect transport laid out as a run (engine.transport.ideal): its series carries every
byte, never more than a link holds, and ends at the fluid's finish times."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis import TransportWorkload, transport_study
from engine.model.overrides import apply_override
from engine.presets.scenarios import load_preset
from engine.transport.ideal import ideal_rates, ideal_result
from engine.transport.workloads import incast, switch_spec


def link_loads(result) -> np.ndarray:
    """Bytes/s each link carries in each row of the series."""
    cl = result.network.classes
    loads = np.zeros((result.time_s.size, result.network.links.n_links))
    for c in range(cl.n_classes):
        for e in range(cl.ptr[c], cl.ptr[c + 1]):
            loads[:, cl.links[e]] += result.class_rate_Bps[:, c]
    return loads


@settings(max_examples=20, deadline=None)
@given(
    senders=st.integers(2, 12),
    mb=st.lists(st.floats(0.1, 8.0), min_size=12, max_size=12),
    starts=st.lists(st.floats(0.0, 2e-4), min_size=12, max_size=12),
)
def test_the_ideal_series_carries_every_byte_within_capacity(catalog, senders, mb, starts):
    network = incast(senders, switch_spec(catalog, "sn5600", 400), 1e6, start_s=starts[:senders])
    sizes = np.array(mb[:senders]) * 1e6  # one class per sender: unequal flows
    assert network.classes.n_classes == senders
    network = replace(network, classes=replace(network.classes, bytes=sizes))
    result = ideal_result(network)
    cl = network.classes
    dt = np.diff(np.concatenate([[0.0], result.time_s]))
    carried = (result.class_rate_Bps * dt[:, None]).sum(axis=0)
    assert carried == pytest.approx(cl.bytes, rel=1e-9)
    assert np.all(link_loads(result) <= network.links.capacity_Bps * (1 + 1e-9))
    assert result.makespan_s == pytest.approx(ideal_rates(network)[1].max())
    assert result.finished and np.all(result.queue_bytes == 0) and result.steps == 0


def test_transport_model_ideal_gives_the_studys_bound(catalog):
    workload = TransportWorkload(kind="incast", senders=8, bytes_per_flow=2 * 2**20)
    scenario = load_preset("hgx-h100-roce-ecmp-1k")
    run = transport_study(scenario, workload, catalog)
    bound = transport_study(apply_override(scenario, "transport.model", "ideal"), workload, catalog)
    assert bound.mechanisms == ("ideal",) and "transport.model is ideal" in bound.notes[-1]
    assert bound.efficiency == pytest.approx(1.0)
    assert bound.makespan_s == pytest.approx(run.ideal_makespan_s)
    assert bound.throughput_Bps.mean == pytest.approx(run.ideal_throughput_Bps.mean)
    assert run.efficiency < 0.9  # the mechanisms' run pays DCQCN's start; the bound does not
    assert all(port.max_queue_bytes == 0 for port in bound.hottest)
