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


def _rows(spans: list[float], seed: int) -> series.Rows:
    rng = np.random.default_rng(seed)
    n = len(spans)
    return np.cumsum(spans), rng.random((n, 3)), rng.random((n, 2)), rng.random((n, 2))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(1e-9, 1e-3), min_size=1, max_size=40),
    st.integers(0, 2**31),
)
def test_merged_rows_keep_every_time_weighted_mean_over_their_spans(spans, seed) -> None:
    rows = _rows(spans, seed)
    merged = merge_pairs(rows, 0.0)
    assert merged[0].size == (rows[0].size + 1) // 2
    assert all(part.shape[0] == merged[0].size for part in merged)
    assert merged[0][-1] == rows[0][-1]
    for k in range(merged[0].size):
        # each merged row ends where one of the rows ended, with that row's queue
        source = int(np.flatnonzero(rows[0] == merged[0][k])[0])
        assert np.array_equal(merged[2][k], rows[2][source])
    whole = (0.0, rows[0][-1])
    for column in (1, 3):
        fine = _window_mean(rows[0], rows[column], *whole)
        coarse = _window_mean(merged[0], merged[column], *whole)
        np.testing.assert_allclose(coarse, fine, rtol=1e-9)


def test_a_series_in_blocks_holds_its_rows_in_order() -> None:
    rows = _rows([1.0, 2.0, 3.0, 4.0, 5.0], 0)
    kept = series.Series(3, 2)
    kept.add(*(part[:2] for part in rows))
    kept.add_row(float(rows[0][2]), rows[1][2], rows[2][2], rows[3][2])
    kept.add(*(part[3:] for part in rows))
    assert len(kept) == 5 and kept.last_time() == rows[0][-1]
    for part, whole in zip(kept.rows(), rows, strict=True):
        assert np.array_equal(part, whole)
    kept.merge_pairs(0.0)
    assert len(kept) == 3
    for part, whole in zip(kept.rows(), merge_pairs(rows, 0.0), strict=True):
        assert np.array_equal(part, whole)


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
