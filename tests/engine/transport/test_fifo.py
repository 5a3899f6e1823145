"""FIFO egress queues (engine.transport.fifo): bytes leave in the order they came, the
ring's shape follows the buffers and the memory bound, and the settings are checked."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.catalog.devices import default_catalog
from engine.transport import fifo, fifo_reference, fifo_shape
from engine.transport.defaults import transport_config
from engine.transport.params import Mechanisms
from engine.transport.simulate import simulate
from engine.transport.tables import build_tables, initial_state
from engine.transport.workloads import incast, switch_spec

BACKENDS = {"kernel": fifo, "reference": fifo_reference}


def _incast_state(n: int = 2, **config_changes):
    """An n:1 incast's tables and fresh state under PFC, and its receiver link (the
    egress queue the senders share) with the entries queued on it."""
    catalog = default_catalog()
    config = replace(transport_config(catalog, "roce", "sn5600"), **config_changes)
    network = incast(n, switch_spec(catalog, "sn5600", 400), 1e6)
    tables, _ = build_tables(network, config)
    state = initial_state(tables, config)
    on_link = tables.entries.prev >= 0
    receiver = int(tables.entries.link[on_link][0])
    entries = np.flatnonzero(on_link & (tables.entries.link == receiver))
    return tables, state, receiver, [int(e) for e in entries]


def _arrive(backend, state, step: int, e: int, k: int, nbytes: float) -> None:
    state.clock.step[0] = step
    state.classes.queue[e] += nbytes
    backend.fifo_arrive(state, step, e, k, nbytes)  # a bin per step


def _serve(backend, tables, state, k: int, budget: float, entries: list[int]) -> list[float]:
    """Each entry's bytes out when link `k` may send `budget` bytes this step."""
    allowed = np.zeros(tables.links.capacity.shape[0])
    allowed[k] = budget / tables.knobs.dt
    if backend is fifo:
        n = allowed.shape[0]
        plan = (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n))
        fifo.fifo_plan(tables, state, allowed, plan, 0, n)
        outs = [fifo.fifo_take(state, plan, e, k, state.classes.queue[e]) for e in entries]
    else:
        plans = fifo_reference.fifo_plan(state, list(allowed), tables.knobs.dt, tables.links.shared)
        outs = [
            fifo_reference.fifo_take(state, plans[k], e, k, state.classes.queue[e]) for e in entries
        ]
    for e, out in zip(entries, outs, strict=True):
        state.classes.queue[e] -= out
    return outs


@pytest.mark.parametrize("name", BACKENDS)
def test_bytes_leave_in_the_order_they_came(name) -> None:
    backend = BACKENDS[name]
    tables, state, k, (a, b) = _incast_state()
    _arrive(backend, state, 0, a, k, 3000.0)
    _arrive(backend, state, 1, b, k, 3000.0)
    _arrive(backend, state, 2, a, k, 3000.0)
    # 4 KB: all of the first bin (A's) and a third of the second (B's); A's later bytes wait
    assert _serve(backend, tables, state, k, 4000.0, [a, b]) == pytest.approx([3000.0, 1000.0])
    # 3 KB: the rest of B's bin, then a third of A's second
    assert _serve(backend, tables, state, k, 3000.0, [a, b]) == pytest.approx([1000.0, 2000.0])
    # enough for all: each leaves with what it holds
    assert _serve(backend, tables, state, k, 1e6, [a, b]) == pytest.approx([2000.0, 0.0])
    assert state.links.fifo_head[k] > state.links.fifo_tail[k]  # the ring is empty


@pytest.mark.parametrize("name", BACKENDS)
def test_a_bin_is_shared_in_proportion_to_its_bytes(name) -> None:
    backend = BACKENDS[name]
    tables, state, k, (a, b) = _incast_state()
    _arrive(backend, state, 5, a, k, 1000.0)
    _arrive(backend, state, 5, b, k, 3000.0)
    assert _serve(backend, tables, state, k, 2000.0, [a, b]) == pytest.approx([500.0, 1500.0])


@pytest.mark.parametrize("name", BACKENDS)
def test_a_step_without_arrivals_opens_no_bin(name) -> None:
    backend = BACKENDS[name]
    tables, state, k, (a, b) = _incast_state()
    _arrive(backend, state, 0, a, k, 1000.0)
    _arrive(backend, state, 50, b, k, 1000.0)
    assert state.links.fifo_tail[k] - state.links.fifo_head[k] == 1  # two bins
    assert _serve(backend, tables, state, k, 1500.0, [a, b]) == pytest.approx([1000.0, 500.0])


@pytest.mark.parametrize("name", BACKENDS)
def test_a_full_ring_puts_the_newest_arrivals_in_its_newest_bin(name) -> None:
    backend = BACKENDS[name]
    tables, state, k, (a, b) = _incast_state(fifo_depth_s=0.3e-6)  # 3 steps deep: 4 bins
    assert state.classes.fifo.shape[0] == 4
    _arrive(backend, state, 0, a, k, 1000.0)
    for step in (1, 2, 3):
        _arrive(backend, state, step, b, k, 1000.0)
    _arrive(backend, state, 4, a, k, 1000.0)  # the ring is full: joins B's newest bin
    assert state.links.fifo_tail[k] - state.links.fifo_head[k] == 3
    assert _serve(backend, tables, state, k, 1000.0, [a, b]) == pytest.approx([1000.0, 0.0])
    assert _serve(backend, tables, state, k, 2000.0, [a, b]) == pytest.approx([0.0, 2000.0])
    # the newest bin holds B's and A's newest bytes alike: served in proportion
    assert _serve(backend, tables, state, k, 1000.0, [a, b]) == pytest.approx([500.0, 500.0])
    assert float(state.links.fifo_bytes.sum()) == pytest.approx(1000.0)


def test_a_ring_reaches_as_deep_as_the_buffers_feeding_its_link() -> None:
    # 16 senders' ingress buffers (1 MB each at the sn5600's 400G share, PFC) behind one
    # 50 GB/s link: a queue of up to 16 MB, 320 us, 3,200 bins of a 100 ns step; the ring
    # holds them and the newest, a power of two of bins (4,096).
    tables, state, _, _ = _incast_state(16)
    buffers = tables.links.buffer[tables.entries.prev[tables.entries.prev >= 0]]
    depth_bins = float(np.sum(buffers)) / float(tables.links.capacity.max()) / tables.knobs.dt
    width = state.classes.fifo.shape[0]
    assert tables.knobs.fifo_bin_steps == 1
    assert width & (width - 1) == 0
    assert depth_bins + 1 <= width < 2 * (depth_bins + 1)


def test_the_memory_bound_widens_the_bins(monkeypatch) -> None:
    monkeypatch.setattr(fifo_shape, "MAX_FIFO_BYTES", 64 * 1024)
    tables, state, _, _ = _incast_state(16)
    ring_bytes = state.classes.fifo.nbytes + state.links.fifo_bytes.nbytes
    assert tables.knobs.fifo_bin_steps > 1
    assert ring_bytes <= 64 * 1024


def test_the_even_service_keeps_no_bins() -> None:
    tables, state, _, _ = _incast_state(egress_service="even")
    assert tables.knobs.fifo_width == 0 and state.classes.fifo.shape[0] == 0


@pytest.mark.parametrize(
    ("change", "named"),
    [({"egress_service": "lifo"}, "egress_service"), ({"fifo_bin_s": 0.0}, "fifo_bin_s")],
)
def test_a_bad_egress_setting_is_named(change, named) -> None:
    with pytest.raises(ValueError, match=named):
        _incast_state(**change)


def test_fifo_and_even_service_differ_where_pauses_leave_gaps() -> None:
    # An 8:1 incast under PFC and DCQCN: the same bytes delivered by either service, in a
    # different order (the high fan-in mechanism, tests/validation/test_packet_level.py).
    catalog = default_catalog()
    config = replace(
        transport_config(catalog, "roce", "sn5600"), mechanisms=Mechanisms("pfc", True, False)
    )
    network = incast(8, switch_spec(catalog, "sn5600", 400), 2e6)
    by_fifo = simulate(network, config)
    evenly = simulate(network, replace(config, egress_service="even"))
    assert by_fifo.finished and evenly.finished
    assert not np.allclose(by_fifo.finish_s, evenly.finish_s, rtol=1e-3)
