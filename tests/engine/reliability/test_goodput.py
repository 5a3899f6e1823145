"""Goodput under failures: closed forms of the interruption and checkpoint model, and the
part counts taken from the bill of materials."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.cost.bom import bill_of_materials
from engine.model.errors import ScenarioError
from engine.presets.scenarios import load_preset
from engine.reliability.model import (
    SECONDS_PER_DAY,
    goodput_report,
    interruptions_per_day,
    reliability_figures,
    wasted_share,
    young_interval_s,
)
from engine.reliability.parts import RATE_FIELDS, part_counts
from engine.topology.expand import expand

STEP = {"tokens_per_s": 1.0e6, "step_s": 10.0, "parameters": 70e9, "gpus": 1024}
ZERO_RATES = dict.fromkeys(RATE_FIELDS.values(), 0.0)


def _counts(scale: int = 1) -> dict[str, int]:
    base = {
        "gpu": 1024,
        "software": 1024,
        "server": 128,
        "nic": 1024,
        "switch": 48,
        "transceiver": 2048,
        "fiber": 2048,
        "aoc": 0,
        "dac": 512,
    }
    return {kind: n * scale for kind, n in base.items()}


def test_zero_failure_rate_gives_goodput_equal_to_throughput(catalog):
    report = goodput_report(_counts(), STEP, catalog, overrides=ZERO_RATES)
    assert report["interruptions_per_day"] == 0.0
    assert report["mtbi_s"] is None
    assert report["goodput_tokens_per_s"] == STEP["tokens_per_s"]
    assert report["goodput_share"] == 1.0


def test_interruptions_are_the_sum_of_count_times_rate_and_linear_in_part_count(catalog):
    figures = reliability_figures(catalog)
    rates = {kind: figures[field][0] for kind, field in RATE_FIELDS.items()}
    expected = sum(n * rates[k] for k, n in _counts().items()) / 365.25
    one = goodput_report(_counts(1), STEP, catalog)["interruptions_per_day"]
    three = goodput_report(_counts(3), STEP, catalog)["interruptions_per_day"]
    assert one == pytest.approx(expected, rel=1e-12)
    assert three == pytest.approx(3 * one, rel=1e-12)
    # one more part of a kind adds exactly that kind's daily rate
    more = {**_counts(), "switch": _counts()["switch"] + 1}
    assert interruptions_per_day(more, rates) - interruptions_per_day(_counts(), rates) == (
        pytest.approx(rates["switch"] / 365.25, rel=1e-9)
    )


def test_young_interval_minimises_the_modelled_loss():
    write_s, recovery_s, mtbi_s = 30.0, 1200.0, 8 * 3600.0
    best = young_interval_s(write_s, mtbi_s)
    assert best == pytest.approx(math.sqrt(2 * write_s * mtbi_s))
    grid = np.geomspace(best / 20, best * 20, 2001)
    losses = [wasted_share(t, write_s, recovery_s, mtbi_s) for t in grid]
    assert wasted_share(best, write_s, recovery_s, mtbi_s) <= min(losses) + 1e-15
    assert grid[int(np.argmin(losses))] == pytest.approx(best, rel=0.01)


def test_goodput_is_throughput_less_the_modelled_loss_at_the_optimum(catalog):
    report = goodput_report(_counts(), STEP, catalog)
    mtbi = SECONDS_PER_DAY / report["interruptions_per_day"]
    write = STEP["parameters"] * 14 / (1.22e8 * STEP["gpus"])
    assert report["checkpoint_write_s"] == pytest.approx(write)
    assert report["checkpoint_interval_s"] == pytest.approx(math.sqrt(2 * write * mtbi))
    recovery = 600 + 600 + write
    loss = (
        write / report["checkpoint_interval_s"]
        + (recovery + report["checkpoint_interval_s"] / 2) / mtbi
    )
    assert report["goodput_share"] == pytest.approx(1 - loss)
    assert report["goodput_tokens_per_s"] == pytest.approx(STEP["tokens_per_s"] * (1 - loss))
    assert report["lost_per_interruption_s"] == pytest.approx(
        recovery + report["checkpoint_interval_s"] / 2
    )


def test_a_chosen_interval_other_than_the_optimum_loses_more(catalog):
    best = goodput_report(_counts(), STEP, catalog)
    for factor in (0.25, 4.0):
        other = goodput_report(
            _counts(), STEP, catalog, checkpoint_interval_s=best["checkpoint_interval_s"] * factor
        )
        assert other["goodput_share"] < best["goodput_share"]


def test_failures_faster_than_recovery_leave_no_goodput(catalog):
    report = goodput_report(_counts(), STEP, catalog, overrides={"gpu_per_year": 1e4})
    assert report["goodput_share"] == 0.0
    assert report["goodput_tokens_per_s"] == 0.0
    assert any("no progress" in note for note in report["notes"])


def test_the_llama3_cluster_gets_back_its_published_interruption_rate(catalog):
    """Llama 3 (arXiv 2407.21783, Table 5): 419 unexpected interruptions in 54 days on
    16,384 H100 in 2,048 servers, 1,024 ToRs and 35,109 links (section 3.3.1). The catalog
    rates were derived from it, so this checks the derivation's arithmetic end to end."""
    counts = {
        "gpu": 16384,
        "software": 16384,
        "server": 2048,
        "nic": 16384,
        "switch": 1024,
        "transceiver": 0,
        "fiber": 0,
        "aoc": 35109,  # a whole link each: aoc_per_year is the link rate
        "dac": 0,
    }
    step = {**STEP, "gpus": 16384, "parameters": 405e9}
    report = goodput_report(counts, step, catalog)
    assert report["interruptions_per_day"] == pytest.approx(419 / 54, rel=0.01)


def test_bad_figures_are_refused_naming_the_field(catalog):
    with pytest.raises(ScenarioError, match="gpu_per_yr"):
        goodput_report(_counts(), STEP, catalog, overrides={"gpu_per_yr": 0.1})
    with pytest.raises(ScenarioError, match="nic_per_year"):
        goodput_report(_counts(), STEP, catalog, overrides={"nic_per_year": -1})
    with pytest.raises(ScenarioError, match="checkpoint_interval_s"):
        goodput_report(_counts(), STEP, catalog, checkpoint_interval_s=0)


def test_part_counts_are_the_bill_of_materials_counts(catalog):
    fabric = expand(load_preset("dgx-h100-ib-ndr-1k"), catalog)
    bom = bill_of_materials(fabric, catalog)
    counts = part_counts(fabric, catalog)
    assert counts["gpu"] == fabric.n_gpus == counts["software"]
    for kind in ("server", "nic", "switch", "transceiver", "fiber"):
        assert counts[kind] == sum(line.count for line in bom if line.kind == kind)
    cables = sum(line.count for line in bom if line.kind == "cable")
    assert counts["dac"] + counts["aoc"] == cables


def test_hot_spares_shorten_each_interruption_by_the_restart_difference(catalog):
    figures = reliability_figures(catalog)
    saved = figures["restart_s"][0] - figures["restart_with_spare_s"][0]
    interval = 3600.0
    plain = goodput_report(_counts(), STEP, catalog, checkpoint_interval_s=interval)
    spares = goodput_report(
        _counts(), STEP, catalog, checkpoint_interval_s=interval, hot_spares=True
    )
    assert spares["hot_spares"] and not plain["hot_spares"]
    assert spares["interruptions_per_day"] == plain["interruptions_per_day"]
    assert plain["lost_per_interruption_s"] - spares["lost_per_interruption_s"] == (
        pytest.approx(saved)
    )
    assert spares["goodput_tokens_per_s"] > plain["goodput_tokens_per_s"]
