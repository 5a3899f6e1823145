"""The max-min solver and fluid simulation: closed forms, invariants, and the reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.flows.reference import fluid_reference, link_loads_reference, max_min_reference
from engine.flows.solver import link_loads, max_min_rates, simulate_fluid

REL = 1e-9


def to_csr(paths):
    ptr = np.zeros(len(paths) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(p) for p in paths])
    links = np.array([link for p in paths for link, _ in p], dtype=np.int64)
    weights = np.array([w for p in paths for _, w in p], dtype=np.float64)
    return ptr, links, weights


@st.composite
def networks(draw, max_links=10, max_flows=14):
    n_links = draw(st.integers(1, max_links))
    capacity = draw(st.lists(st.floats(0.5, 1e3), min_size=n_links, max_size=n_links))
    n_flows = draw(st.integers(1, max_flows))
    paths = []
    for _ in range(n_flows):
        links = draw(
            st.lists(st.integers(0, n_links - 1), min_size=1, max_size=min(4, n_links), unique=True)
        )
        weights = draw(
            st.lists(
                st.one_of(st.just(1.0), st.floats(0.05, 1.0)),
                min_size=len(links),
                max_size=len(links),
            )
        )
        paths.append(list(zip(links, weights, strict=True)))
    return paths, capacity


def test_equal_flows_share_one_link_equally():
    paths = [[(0, 1.0)]] * 5
    rates = max_min_rates(*to_csr(paths), np.array([100.0]))
    np.testing.assert_allclose(rates, 20.0, rtol=REL)


def test_classic_two_link_example():
    # A on link 0, B on links 0 and 1, C on link 1; capacities 1 and 2.
    # Max-min: A = B = 0.5 (link 0 is the bottleneck), C takes the rest of link 1: 1.5.
    paths = [[(0, 1.0)], [(0, 1.0), (1, 1.0)], [(1, 1.0)]]
    rates = max_min_rates(*to_csr(paths), np.array([1.0, 2.0]))
    np.testing.assert_allclose(rates, [0.5, 0.5, 1.5], rtol=REL)


def test_sprayed_flow_uses_fractions_of_parallel_links():
    # Flow 0 is split evenly over two parallel links of 10; flow 1 is pinned to link 0.
    paths = [[(0, 0.5), (1, 0.5)], [(0, 1.0)]]
    rates = max_min_rates(*to_csr(paths), np.array([10.0, 10.0]))
    # Link 0 carries 0.5 r0 + r1 <= 10 and link 1 0.5 r0 <= 10; equal rise fills link 0 at
    # r = 10 / 1.5 for both flows.
    np.testing.assert_allclose(rates, [10 / 1.5, 10 / 1.5], rtol=REL)


def test_inactive_flows_get_nothing_and_use_nothing():
    paths = [[(0, 1.0)], [(0, 1.0)]]
    rates = max_min_rates(*to_csr(paths), np.array([8.0]), active=np.array([True, False]))
    np.testing.assert_allclose(rates, [8.0, 0.0], rtol=REL)


@settings(max_examples=300, deadline=None)
@given(networks())
def test_kernel_matches_reference(net):
    paths, capacity = net
    rates = max_min_rates(*to_csr(paths), np.array(capacity))
    expected = max_min_reference(paths, capacity)
    np.testing.assert_allclose(rates, expected, rtol=REL)


@settings(max_examples=200, deadline=None)
@given(networks(), st.lists(st.floats(0.0, 1e12), min_size=14, max_size=14))
def test_link_loads_match_the_reference_bit_for_bit(net, rate_pool):
    # The kernel adds entry by entry in the entries' order, as the reference (and numpy's
    # bincount, which it replaced) does: the same sums, rounded alike.
    paths, capacity = net
    ptr, links, weights = to_csr(paths)
    rates = np.array(rate_pool[: len(paths)])
    got = link_loads(ptr, links, weights, rates, len(capacity))
    assert got.tolist() == link_loads_reference(paths, rates.tolist(), len(capacity))
    per_entry = weights * np.repeat(rates, np.diff(ptr))
    np.testing.assert_array_equal(
        got, np.bincount(links, weights=per_entry, minlength=len(capacity))
    )


@settings(max_examples=300, deadline=None)
@given(networks())
def test_no_link_over_capacity_and_every_flow_has_a_bottleneck(net):
    paths, capacity = net
    cap = np.array(capacity)
    ptr, links, weights = to_csr(paths)
    rates = max_min_rates(ptr, links, weights, cap)
    load = link_loads(ptr, links, weights, rates, len(capacity))
    assert np.all(load <= cap * (1 + REL))
    assert np.all(rates > 0)
    for f, path in enumerate(paths):
        has_bottleneck = False
        for link, _ in path:
            saturated = load[link] >= cap[link] * (1 - REL)
            others = [rates[g] for g, p in enumerate(paths) if any(ll == link for ll, _ in p)]
            if saturated and rates[f] >= max(others) * (1 - REL):
                has_bottleneck = True
        assert has_bottleneck, f"flow {f} has no saturated link on which it has the largest rate"


def test_fluid_two_flows_of_unequal_size_closed_form():
    # Two flows share a link of capacity C: both run at C/2 until the small one ends at 2*S1/C,
    # then the large one runs alone and ends at (S1 + S2)/C.
    c, s1, s2 = 100.0, 300.0, 1000.0
    result = simulate_fluid(*to_csr([[(0, 1.0)], [(0, 1.0)]]), np.array([c]), np.array([s1, s2]))
    np.testing.assert_allclose(result.finish, [2 * s1 / c, (s1 + s2) / c], rtol=REL)
    np.testing.assert_allclose(result.link_bytes, [s1 + s2], rtol=REL)
    assert result.makespan == pytest.approx((s1 + s2) / c, rel=REL)
    assert result.link_utilization(np.array([c]))[0] == pytest.approx(1.0, rel=REL)


@settings(max_examples=150, deadline=None)
@given(networks(max_links=6, max_flows=8), st.data())
def test_fluid_matches_reference_and_conserves_bytes(net, data):
    paths, capacity = net
    sizes = data.draw(st.lists(st.floats(1.0, 1e4), min_size=len(paths), max_size=len(paths)))
    ptr, links, weights = to_csr(paths)
    result = simulate_fluid(ptr, links, weights, np.array(capacity), np.array(sizes))
    np.testing.assert_allclose(result.finish, fluid_reference(paths, capacity, sizes), rtol=1e-7)
    expected_bytes = np.zeros(len(capacity))
    for path, size in zip(paths, sizes, strict=True):
        for link, w in path:
            expected_bytes[link] += w * size
    np.testing.assert_allclose(result.link_bytes, expected_bytes, rtol=1e-7)
    # No flow can beat its size over the capacity of its thinnest link.
    for f, path in enumerate(paths):
        fastest = min(capacity[link] / w for link, w in path)
        assert result.finish[f] >= sizes[f] / fastest * (1 - 1e-9)


def test_flows_of_a_few_denormal_bytes_finish_and_never_outnumber_their_events():
    """Sizes so small that a step's bytes round to crumbs still end, one flow at least per
    event (without that rule this case never ended: its kernel wrote past the event buffer
    and corrupted the heap)."""
    paths = [[(1, 1.0)], [(2, 1.0)], [(1, 1.0)], [(2, 1.0), (0, 1.0)], [(0, 1.0), (2, 1.0)]]
    capacity = np.array([49.5e9, 7.0, 1.0])
    sizes = np.array([2.5e-323, 4e-323, 5e-324, 1e-323, 1.5e-323])
    ptr, links, weights = to_csr(paths)
    result = simulate_fluid(ptr, links, weights, capacity, sizes)
    assert np.all(np.isfinite(result.finish)) and result.event_times.shape[0] <= len(paths)
    reference = fluid_reference(paths, capacity.tolist(), sizes.tolist())
    np.testing.assert_allclose(result.finish, reference)
