"""The door's goodput: the scenario's own training step, its BOM's parts, IB and RoCE."""

from __future__ import annotations

import json

import pytest

from engine.analysis import (
    GoodputComparison,
    GoodputResult,
    goodput,
    goodput_by_technology,
    load_preset,
    training_run,
)
from engine.reliability.parts import RATE_FIELDS

PRESET = "dgx-h100-ib-ndr-1k"


@pytest.fixture(scope="module")
def comparison(catalog) -> GoodputComparison:
    return goodput_by_technology(load_preset(PRESET), catalog)


def test_ib_and_roce_side_by_side_on_the_same_topology(comparison, catalog):
    ib, roce = comparison.results
    assert (ib.technology, roce.technology) == ("infiniband", "roce")
    assert ib.tokens_per_s == pytest.approx(training_run(load_preset(PRESET), catalog).tokens_per_s)
    assert ib.gpus == roce.gpus
    for result in (ib, roce):
        assert result.interruptions_per_day == pytest.approx(
            sum(p.interruptions_per_day for p in result.parts)
        )
        assert result.mtbi_s == pytest.approx(86400 / result.interruptions_per_day)
        assert 0 < result.goodput_tokens_per_s < result.tokens_per_s
        assert result.goodput_tokens_per_s == pytest.approx(
            result.tokens_per_s * result.goodput_share
        )
    assert GoodputComparison.from_dict(json.loads(comparison.to_json())) == comparison


def test_zero_failure_rates_keep_the_whole_throughput(catalog):
    scenario = load_preset(PRESET)
    result = goodput(scenario, catalog, reliability=dict.fromkeys(RATE_FIELDS.values(), 0.0))
    assert isinstance(result, GoodputResult)
    assert result.goodput_tokens_per_s == result.tokens_per_s
    assert result.checkpoint_interval_s is None
