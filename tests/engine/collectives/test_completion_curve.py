"""The completion-curve kernel gives the plain-numpy reference's numbers, bit for bit, on
runs with stalls (rows of no delivery), finished classes, classes past the run and a tail
rate of zero."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.collectives.completion_curve import slowest_times, slowest_times_reference

GRID = 2.0**30 * 2.0 ** -np.arange(40.0)[::-1]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 12))
def test_the_kernel_is_the_reference(seed, n_rows, n_classes):
    rng = np.random.default_rng(seed)
    time_s = np.cumsum(rng.choice([1e-6, 5e-6, 3.3e-6, 1e-4], size=n_rows))
    rate = rng.uniform(0.0, 50e9, size=(n_rows, n_classes))
    rate[rng.random((n_rows, n_classes)) < 0.3] = 0.0  # stalls: plateaus to interpolate over
    unit = rng.choice([0.0, 1e-3, 1.0, 2.0, 7.5], size=n_classes)
    tail = rng.choice([0.0, 1e3, 20e9, 45e9], size=n_classes)
    fill = rng.choice([0.0, 2e-7, 6e-7], size=n_classes)
    args = (time_s, rate, unit, GRID, tail, fill)
    with np.errstate(over="ignore"):  # a tail rate of zero: the reference's 1e-300
        np.testing.assert_array_equal(slowest_times(*args), slowest_times_reference(*args))


def test_the_curve_reads_a_stall_as_np_interp_does():
    time_s = np.array([1e-6, 2e-6, 3e-6])
    rate = np.array([[1e9], [0.0], [1e9]])  # 1000 bytes, a stall, 1000 more
    grid = np.array([500.0, 1000.0, 1500.0, 2000.0, 4000.0])
    args = (time_s, rate, np.ones(1), grid, np.array([1e9]), np.zeros(1))
    # 1000 bytes are delivered at 1 us and still at 2 us: np.interp takes the stall's end.
    expected = [0.5e-6, 2e-6, 2.5e-6, 3e-6, 5e-6]
    np.testing.assert_allclose(slowest_times(*args), expected, rtol=1e-12)
    np.testing.assert_array_equal(slowest_times(*args), slowest_times_reference(*args))
