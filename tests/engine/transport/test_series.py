"""A run's time series stays within its memory budget by getting coarser in time, and
nothing but the series' resolution changes."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.catalog.devices import default_catalog
from engine.transport import series
from engine.transport.defaults import transport_config
from engine.transport.result import _window_mean
from engine.transport.series import merge_pairs
from engine.transport.simulate import simulate
from engine.transport.workloads import incast, switch_spec


def _rows(spans: list[float], seed: int) -> list[series.Row]:
    rng = np.random.default_rng(seed)
    t = np.cumsum(spans)
    return [(float(t[i]), rng.random(3), rng.random(2), rng.random(2)) for i in range(len(spans))]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(1e-9, 1e-3), min_size=1, max_size=40),
    st.integers(0, 2**31),
)
def test_merged_rows_keep_every_time_weighted_mean_over_their_spans(spans, seed) -> None:
    rows = _rows(spans, seed)
    merged = merge_pairs(rows, 0.0)
    assert len(merged) == (len(rows) + 1) // 2
    assert merged[-1][0] == rows[-1][0]
    for k in range(len(merged)):
        # each merged row ends where one of the rows ended, with that row's queue
        end = merged[k][0]
        source = next(r for r in rows if r[0] == end)
        assert np.array_equal(merged[k][2], source[2])
    whole = (0.0, rows[-1][0])
    for column in (1, 3):
        fine = _window_mean(
            np.array([r[0] for r in rows]), np.vstack([r[column] for r in rows]), *whole
        )
        coarse = _window_mean(
            np.array([r[0] for r in merged]), np.vstack([r[column] for r in merged]), *whole
        )
        np.testing.assert_allclose(coarse, fine, rtol=1e-9)


def test_a_run_past_the_budget_samples_coarser_and_ends_the_same(monkeypatch) -> None:
    catalog = default_catalog()
    config = transport_config(catalog, "roce", "sn5600")
    network = incast(8, switch_spec(catalog, "sn5600", 400), 4e6)
    fine = simulate(network, config)
    width = network.classes.n_classes + 2 * network.links.n_links
    budget = 40 * width  # forty rows of this network
    monkeypatch.setattr(series, "MAX_SERIES_VALUES", budget)
    coarse = simulate(network, config)
    assert fine.time_s.size * width > budget, "the run never passed the budget"
    assert coarse.time_s.size * width <= budget
    assert coarse.time_s[-1] == fine.time_s[-1]
    for f in fields(fine):
        if f.name in ("time_s", "class_rate_Bps", "queue_bytes", "paused_share", "network"):
            continue
        x, y = getattr(fine, f.name), getattr(coarse, f.name)
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y, equal_nan=True), f.name
        else:
            assert x == y, f.name
    end = fine.time_s[-1]
    np.testing.assert_allclose(
        coarse.mean_rate_Bps(0.0, end), fine.mean_rate_Bps(0.0, end), rtol=1e-9
    )
    np.testing.assert_allclose(coarse.mean_paused(0.0, end), fine.mean_paused(0.0, end), rtol=1e-9)
