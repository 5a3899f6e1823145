"""Random small transport networks for the property tests, free of PFC deadlock.

Every class leaves its own NIC link, crosses zero to two transit links (switch to switch) in
increasing order and ends on a terminal link (switch to NIC): the buffer dependencies follow
the link order, so no cycle of pauses can form and every flow must finish.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
from hypothesis import strategies as st

from engine.catalog.devices import default_catalog
from engine.transport.defaults import transport_config
from engine.transport.gates import Gates, gates_from_edges
from engine.transport.network import TransportNetwork, group_into_classes, make_links
from engine.transport.params import EcnParams, Mechanisms, SettleParams


@st.composite
def small_networks(draw, max_classes: int = 5, max_bytes: float = 300e3) -> TransportNetwork:
    """A network of 1-5 classes over host, transit and terminal links."""
    n_classes = draw(st.integers(1, max_classes))
    n_transit = draw(st.integers(0, 3))
    n_terminal = draw(st.integers(1, 3))
    n_links = n_classes + n_transit + n_terminal
    into = [True] * (n_classes + n_transit) + [False] * n_terminal
    out = [False] * n_classes + [True] * (n_transit + n_terminal)
    floats = lambda lo, hi: st.floats(lo, hi, allow_nan=False, allow_infinity=False)  # noqa: E731
    capacity = draw(st.lists(floats(5e9, 60e9), min_size=n_links, max_size=n_links))
    propagation = draw(st.lists(floats(5e-9, 2e-6), min_size=n_links, max_size=n_links))
    buffers = draw(st.lists(floats(20e3, 2e6), min_size=n_links, max_size=n_links))
    ecn = []
    for _ in range(n_links):
        kmin = draw(floats(0.0, 100e3))
        ecn.append(EcnParams(kmin, kmin + draw(floats(10e3, 1e6)), draw(floats(0.01, 1.0))))
    links = make_links(
        capacity_Bps=capacity,
        propagation_s=propagation,
        latency_s=[p + 300e-9 for p in propagation],
        speed_gbps=[c * 8 / 1e9 for c in capacity],
        into_switch=into,
        from_switch=out,
        buffer_bytes=buffers,
        egress_buffer_bytes=buffers,
        ecn=ecn,
    )
    paths, sizes, starts, delays = [], [], [], []
    for c in range(n_classes):
        transit = sorted(
            draw(st.sets(st.integers(0, max(n_transit - 1, 0)), max_size=min(2, n_transit)))
        )
        terminal = n_classes + n_transit + draw(st.integers(0, n_terminal - 1))
        path = [c] + [n_classes + t for t in transit] + [terminal]
        copies = draw(st.integers(1, 3))
        size = draw(floats(1e3, max_bytes))
        start = draw(st.sampled_from([0.0, 0.0, 3e-6, 10e-6]))
        delay = draw(floats(0.0, 8e-6))
        for _ in range(copies):
            paths.append(path)
            sizes.append(size)
            starts.append(start)
            delays.append(delay)
    ptr = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in paths], out=ptr[1:])
    flat = np.array([x for p in paths for x in p], dtype=np.int64)
    classes, of_flow = group_into_classes(
        ptr, flat, np.array(sizes), np.array(starts), np.array(delays)
    )
    return TransportNetwork(links, classes, of_flow, gates=draw(_gates(classes.n_classes)))


@st.composite
def _gates(draw, n_classes: int) -> Gates | None:
    """None, or forwarding edges between distinct classes with slacks of a few kB to
    more than a class holds (a gate that never binds)."""
    if n_classes < 2 or not draw(st.booleans()):
        return None
    pairs = st.tuples(st.integers(0, n_classes - 1), st.integers(0, n_classes - 1))
    edges = [(a, b) for a, b in draw(st.lists(pairs, min_size=1, max_size=6)) if a != b]
    slack = draw(st.lists(st.floats(2e3, 400e3), min_size=n_classes, max_size=n_classes))
    return gates_from_edges(
        n_classes,
        np.array([a for a, _ in edges], dtype=np.int64),
        np.array([b for _, b in edges], dtype=np.int64),
        np.array(slack),
    )


@st.composite
def configs(draw):
    """A transport configuration with random mechanisms (NVIDIA DCQCN with a 1 GB/s floor
    so that a flow cut hard still ends quickly, its CNPs paced per flow or per port) and egress service: FIFO bins of one step
    or three, in rings deep enough or so shallow that they fill (their newest bin then
    takes the rest), or the even service."""
    base = transport_config(default_catalog(), "roce", "sn5600")
    lossless = draw(st.sampled_from(["credit", "pfc", "none"]))
    dcqcn = draw(st.booleans())
    ib_cc = draw(st.booleans())
    return replace(
        base,
        egress_service=draw(st.sampled_from(["fifo", "even"])),
        fifo_bin_s=draw(st.sampled_from([100e-9, 300e-9])),
        fifo_depth_s=draw(st.sampled_from([1e-3, 0.5e-6])),
        mechanisms=Mechanisms(lossless, dcqcn, ib_cc),
        dcqcn=replace(
            base.dcqcn,
            min_rate_Bps=1e9,
            rate_increase_timer_s=20e-6,
            cnp_pacing=draw(st.sampled_from(["flow", "port"])),
        ),
        settle=SettleParams(window_s=5e-6, max_window_s=50e-6),
        max_steps=400_000,
    )


def assert_same_result(a, b) -> None:
    """Two transport results equal bit for bit (their networks aside)."""
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.shape == y.shape and np.array_equal(x, y, equal_nan=True), f.name
        elif f.name != "network":
            assert x == y, f.name
