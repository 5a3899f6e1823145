"""The numba step kernel against its plain-Python twin, over windows of steps and whole runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings

from engine.catalog.devices import default_catalog
from engine.transport import reference
from engine.transport.defaults import transport_config
from engine.transport.params import Mechanisms
from engine.transport.simulate import simulate
from engine.transport.step import run_window
from engine.transport.tables import (
    build_tables,
    initial_state,
    new_rows,
    new_sample_acc,
    new_stats,
)
from engine.transport.workloads import switch_spec, victim_incast
from tests.engine.transport.networks import configs, small_networks


def _assert_same(a, b, where: str) -> None:
    for name in a._fields:
        x, y = getattr(a, name), getattr(b, name)
        if hasattr(x, "_fields"):
            _assert_same(x, y, f"{where}.{name}")
        else:
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9, err_msg=f"{where}.{name}")


@settings(max_examples=40, deadline=None)
@given(small_networks(), configs())
def test_kernel_window_matches_reference_window(network, config):
    tables, _ = build_tables(network, config)
    n_links, n_classes = tables.links.capacity.shape[0], tables.classes.size.shape[0]
    runs = []
    for runner in (run_window, reference.run_window):
        state = initial_state(tables, config)
        stats, acc = new_stats(n_links, n_classes), new_sample_acc(n_links, n_classes)
        rows = new_rows(20, n_links, n_classes)
        taken = runner(tables, state, stats, acc, rows, 120, 7)
        runs.append((taken, state, stats, acc, rows))
    (taken_fast, *fast), (taken_slow, *slow) = runs
    assert taken_fast == taken_slow
    for part_fast, part_slow, name in zip(
        fast, slow, ("state", "stats", "acc", "rows"), strict=True
    ):
        _assert_same(part_fast, part_slow, name)


@settings(max_examples=12, deadline=None)
@given(small_networks(max_classes=3, max_bytes=40e3), configs())
def test_whole_runs_match_on_both_backends(network, config):
    fast = simulate(network, config, horizon_s=60e-6)
    slow = simulate(network, config, horizon_s=60e-6, backend="reference")
    assert fast.steps == slow.steps and fast.jumps == slow.jumps
    for name in (
        "finish_s",
        "delivered_bytes",
        "dropped_bytes",
        "pause_fraction",
        "max_queue_bytes",
        "time_s",
        "class_rate_Bps",
        "queue_bytes",
    ):
        np.testing.assert_allclose(
            getattr(fast, name), getattr(slow, name), rtol=1e-9, atol=1e-9, err_msg=name
        )


def test_one_compiled_signature_serves_every_mechanism(catalog):
    base = transport_config(catalog, "roce", "sn5600")
    network = victim_incast(3, switch_spec(catalog, "sn5600", 400), 200e3, 200e3)
    for lossless in ("credit", "pfc", "none"):
        for dcqcn in (False, True):
            config = replace(base, mechanisms=Mechanisms(lossless, dcqcn, not dcqcn))
            simulate(network, config)
    assert len(run_window.signatures) == 1


def test_the_histories_are_as_wide_as_the_delays_they_hold():
    # One row per step of delay (pause requests: the reaction time; feedback: the feedback
    # delay or one control interval), no wider: at 131k hosts the feedback history is
    # hundreds of MB, and a width rounded up to a power of two passed the run's bound.
    catalog = default_catalog()
    config = transport_config(catalog, "roce", "sn5600")
    network = victim_incast(4, switch_spec(catalog, "sn5600", 400), 1e6, 1e6)
    tables, _ = build_tables(network, config)
    state = initial_state(tables, config)
    assert state.links.pfc_ring.shape[0] == int(tables.links.react_steps.max()) + 1
    fb_rows = max(int(tables.classes.feedback_steps.max()) + 1, tables.knobs.cc_every)
    assert state.classes.fb_mark.shape[0] == fb_rows
