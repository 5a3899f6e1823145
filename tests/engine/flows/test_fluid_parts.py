"""The fluid run part by part gives the finish times of the run over the whole network."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.flows.fluid_parts import fluid_finish_by_parts
from engine.flows.reference import fluid_reference
from engine.flows.solver import simulate_fluid
from tests.engine.flows.test_solver import networks, to_csr


@st.composite
def side_by_side(draw):
    """Up to four networks on links of their own, their flows in a shuffled order, each
    flow labelled with its network (two networks may share a label: a part may hold flows
    that meet nowhere)."""
    n_nets = draw(st.integers(1, 4))
    paths, capacity, labels, sizes = [], [], [], []
    for k in range(n_nets):
        net_paths, net_capacity = draw(networks(max_links=5, max_flows=6))
        offset = len(capacity)
        label = draw(st.integers(0, k))
        for path in net_paths:
            paths.append([(link + offset, w) for link, w in path])
            labels.append(label)
            sizes.append(draw(st.floats(1.0, 1e4)))
        capacity.extend(net_capacity)
    order = draw(st.permutations(range(len(paths))))
    return (
        [paths[i] for i in order],
        capacity,
        [sizes[i] for i in order],
        [labels[i] for i in order],
    )


@settings(max_examples=150, deadline=None)
@given(side_by_side())
def test_parts_run_on_their_own_finish_as_the_whole_does(case):
    paths, capacity, sizes, labels = case
    ptr, links, weights = to_csr(paths)
    cap, size = np.array(capacity), np.array(sizes)
    by_parts = fluid_finish_by_parts(ptr, links, weights, cap, size, np.array(labels))
    whole = simulate_fluid(ptr, links, weights, cap, size).finish
    np.testing.assert_allclose(by_parts, whole, rtol=1e-9)
    np.testing.assert_allclose(by_parts, fluid_reference(paths, capacity, sizes), rtol=1e-7)


def test_a_flow_over_a_link_of_no_capacity_never_finishes_and_holds_back_no_other_part():
    paths = [[(0, 1.0)], [(1, 1.0)], [(1, 1.0)]]
    ptr, links, weights = to_csr(paths)
    finish = fluid_finish_by_parts(
        ptr, links, weights, np.array([0.0, 10.0]), np.array([5.0, 10.0, 30.0]), np.array([0, 1, 1])
    )
    assert np.isinf(finish[0])
    # two flows share link 1 (10 B/s): 5 B/s each until the first ends at 2 s, then 10 B/s
    np.testing.assert_allclose(finish[1:], [2.0, 4.0])
