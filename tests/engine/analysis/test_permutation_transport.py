"""The permutation test through the transport mechanisms, beside its max-min ideal."""

from __future__ import annotations

import pytest

from engine.analysis.evaluation import evaluate
from engine.model.overrides import apply_override
from engine.topology import generators as gen


@pytest.fixture(scope="module")
def roce_ecmp(catalog):
    scenario = gen.leaf_spine(256, "dgx-h100", "sn5600", catalog=catalog)
    scenario.routing.mode = "ecmp"
    return scenario


def test_collided_permutation_flows_get_no_more_than_the_ideal_and_marks_show(roce_ecmp, catalog):
    p = evaluate(roce_ecmp, catalog, parts=("permutation",)).permutation
    t = p.transport
    assert t is not None and t.throughput_fraction is not None
    assert t.throughput_fraction.mean <= p.throughput_fraction.mean * (1 + 1e-6)
    assert 0.0 < t.efficiency <= 1.0 + 1e-6
    assert t.max_ecn_mark_fraction > 0.0  # ECMP collisions queue and get marked


@pytest.mark.parametrize("path,value,fragment", [("transport.model", "ideal", "ideal")])
def test_the_transport_is_skipped_with_a_reason(roce_ecmp, catalog, path, value, fragment):
    p = evaluate(
        apply_override(roce_ecmp, path, value), catalog, parts=("permutation",)
    ).permutation
    assert p.transport is not None and p.transport.throughput_fraction is None
    assert fragment in p.transport.note
