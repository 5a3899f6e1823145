"""Properties every run must have, on random small networks and mechanisms: a lossless
fabric never overfills a buffer nor drops, no rate exceeds its line, bytes are conserved and
every flow finishes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from engine.transport.simulate import simulate
from tests.engine.transport.networks import configs, small_networks

REL = 1e-9
# A queue's last bytes below CRUMB_BYTES (1e-6 B) leave with the rest, so a step may serve
# that much over its budget: a relative 1e-6 of a step's bytes bounds it.
RATE_REL = 1e-6


@settings(max_examples=60, deadline=None)
@given(small_networks(), configs())
def test_run_invariants(network, config):
    result = simulate(network, config)
    links, classes = network.links, network.classes

    # Every flow finishes, and every byte arrives exactly once.
    assert result.finished, result.finish_s
    np.testing.assert_allclose(result.delivered_bytes, classes.bytes, rtol=REL)
    assert np.all(result.finish_s >= classes.start_s)

    # Lossless: no far-end buffer above its size, nothing dropped.
    if config.mechanisms.lossless == "credit" or (
        config.mechanisms.lossless == "pfc" and result.lossless.all()
    ):
        assert np.all(result.max_occupancy_bytes <= links.buffer_bytes * (1 + REL))
        assert result.dropped_bytes.sum() == 0.0

    # No link carries more than its capacity, in any sample interval.
    last = classes.links[classes.ptr[1:] - 1]
    per_link = np.zeros((result.time_s.shape[0], links.n_links))
    for c in range(classes.n_classes):
        per_link[:, last[c]] += result.class_rate_Bps[:, c]
    assert np.all(per_link <= links.capacity_Bps * (1 + RATE_REL))
    assert np.all(result.utilization <= 1 + RATE_REL)

    # No class sends faster than its flows' line rate: over its life it cannot beat its
    # thinnest link or its NIC links. (Within a sample, a class may deliver a queued burst
    # faster than its first link sent it, up to its last link's capacity, checked above.)
    # A jump carries a settled window's mean rate forward, known to the settle tolerance.
    slack = config.settle.rel_tol if result.jumps else 1e-6
    for c in range(classes.n_classes):
        path = classes.path(c)
        ceiling = min(
            classes.multiplicity[c] * links.capacity_Bps[path[0]], links.capacity_Bps[path].min()
        )
        assert result.finish_s[c] - classes.start_s[c] >= classes.bytes[c] / ceiling * (1 - slack)
